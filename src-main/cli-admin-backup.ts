/**
 * `certdesk admin backup|restore|secrets …`: an authenticated copy of the store while CertDesk
 * runs, a checked restore into an empty data dir, and the keychain's secrets exported and
 * imported under a passphrase (docs/backup.md). A passphrase never comes from the command line,
 * where `ps` and the shell history would show it: from its environment variable
 * (CERTDESK_BACKUP_PASSPHRASE, CERTDESK_SECRETS_PASSPHRASE), from stdin when it is not a
 * terminal, or from a prompt that does not echo.
 */
import { readFileSync } from 'node:fs'
import {
  commandKey,
  databaseOf,
  isSecretSourceValue,
  need,
  print,
  readSecretLine,
  secretSource,
  UsageError,
  type Values
} from './cli-args'
import { backupDataDir, restoreStore, type BackupAuth } from './core/backup/backup'
import { conflict } from './core/errors'
import { isPresent, writeNewFileSync } from './core/exclusive-file'
import { keychainFor, type SecretStore } from './core/secrets'
import { exportSecrets, importSecrets } from './core/backup/secrets-export'
import { formatKeys, keySourceOf, newRootKeys, rootKeyStore } from './core/server-secrets'
import { openService, type Service } from './core/service'

export const BACKUP_USAGE = `  certdesk admin [--data-dir D] backup --out FILE [--with-passphrase]
                 (default: authenticated with this data dir's key in the OS keychain; --with-passphrase
                  for another machine, passphrase from CERTDESK_BACKUP_PASSPHRASE, stdin or prompt)
  certdesk admin restore --from FILE --data-dir D [--secrets FILE] [--accept-unauthenticated]
                 (D must not hold a store yet; --secrets: the secrets export, for a keychain backup on
                  another machine; --accept-unauthenticated: a backup without authentication, from an earlier CertDesk)
  certdesk admin [--data-dir D] secrets export --out FILE    (passphrase: CERTDESK_SECRETS_PASSPHRASE, stdin or prompt)
  certdesk admin [--data-dir D] secrets import --from FILE
  certdesk admin secrets init --out FILE     (every key of a server, made once: --secrets file:FILE or systemd)`

export const isBackupCommand = (noun: string | undefined): boolean =>
  noun === 'backup' || noun === 'restore' || noun === 'secrets'

/** `secrets init` writes a server's key file and opens no book: there is no audit log to keep it in. */
export const isBooklessCommand = (words: string[]): boolean => commandKey(words) === 'secrets init'

export const PASSPHRASE_ENV = 'CERTDESK_SECRETS_PASSPHRASE'
export const BACKUP_PASSPHRASE_ENV = 'CERTDESK_BACKUP_PASSPHRASE'

export async function backupAdmin(dataDir: string, words: string[], v: Values): Promise<number> {
  const key = words[0] === 'secrets' ? commandKey(words) : words[0]
  switch (key) {
    case 'backup': {
      const out = need(v, 'out')
      const service = await openService({ dataDir, database: databaseOf(v), secretSource: secretSource(v) })
      try {
        const auth: BackupAuth = v['with-passphrase']
          ? {
              kind: 'passphrase',
              passphrase: await readPassphrase('passphrase for the backup: ', BACKUP_PASSPHRASE_ENV)
            }
          : { kind: 'keychain', secrets: service.ctx.secrets }
        let shown = -1
        const report = await backupDataDir(service.ctx, out, auth, (p) => {
          // Progress on stderr in tenths, so stdout stays one JSON answer.
          const tenth = p.totalPages === 0 ? 10 : Math.floor(((p.totalPages - p.remainingPages) / p.totalPages) * 10)
          if (tenth !== shown) process.stderr.write(`certdesk: backup ${tenth * 10}%\n`)
          shown = tenth
        })
        print({
          success: true,
          ...report,
          note:
            auth.kind === 'keychain'
              ? "authenticated with the backup key in this machine's OS keychain: it restores here, or elsewhere with `restore --secrets` and a `certdesk admin secrets export`; the secrets live in the OS keychain: keep an export with it"
              : 'authenticated with your passphrase: restore asks for it; the secrets live in the OS keychain: keep a `certdesk admin secrets export` with it'
        })
      } finally {
        await service.close()
      }
      return 0
    }
    case 'restore': {
      if (databaseOf(v) !== undefined)
        throw new UsageError(
          'restore writes a SQLite data dir; a book in PostgreSQL is restored with pg_restore from its own backups'
        )
      if (!v['data-dir']) throw new UsageError('restore needs --data-dir: the empty data dir to restore into')
      print({ success: true, ...(await restore(need(v, 'from'), dataDir, v)) })
      return 0
    }
    case 'secrets export': {
      const out = need(v, 'out')
      // Asked before the passphrase is typed; the write itself refuses a name taken meanwhile.
      if (isPresent(out))
        throw conflict(
          `could not export the secrets to ${out}: a file, folder or link of that name exists; choose a new name`
        )
      const passphrase = await readPassphrase('passphrase for the secrets file: ')
      const service = await openService({ dataDir, database: databaseOf(v), secretSource: secretSource(v) })
      try {
        const { file, count } = await exportSecrets(service.ctx.secrets, passphrase, await installId(service))
        writeNewFileSync(out, `${JSON.stringify(file, null, 2)}\n`, 'the secrets')
        print({ success: true, file: out, secrets: count })
      } finally {
        await service.close()
      }
      return 0
    }
    case 'secrets init': {
      // Every server key, made once: the file each node of a team is given (docs/team-server.md).
      const out = need(v, 'out')
      const keys = newRootKeys()
      writeNewFileSync(out, formatKeys(keys), 'the server secrets')
      print({
        success: true,
        file: out,
        keys: [...keys.keys()],
        note: 'mode 0600; give it to every node as --secrets file:PATH (owned by the user CertDesk runs as), or encrypt it with systemd-creds for --secrets systemd; back it up apart from the database'
      })
      return 0
    }
    case 'secrets import': {
      const text = readFileSync(need(v, 'from'), 'utf8')
      const passphrase = await readPassphrase('passphrase of the secrets file: ')
      const service = await openService({ dataDir, database: databaseOf(v), secretSource: secretSource(v) })
      try {
        print({
          success: true,
          ...(await importSecrets(service.ctx.secrets, text, passphrase, await installId(service)))
        })
      } finally {
        await service.close()
      }
      return 0
    }
    default:
      throw new UsageError(`unknown command: admin ${words.join(' ')}`)
  }
}

/**
 * A restore: the backup's key from this machine's keychain, from a passphrase, or (`--secrets`)
 * from the secrets export made with it, whose secrets then go into this machine's keychain.
 */
async function restore(from: string, dataDir: string, v: Values) {
  // `--secrets FILE` (not a key source) names the secrets export; a key source may come with it.
  const source = secretSource(v, process.env, true)
  const secretsFile = v.secrets !== undefined && !isSecretSourceValue(v.secrets) ? v.secrets : undefined
  const server = keySourceOf(source, dataDir)
  let fromExport: SecretStore | null = null
  let exported: { text: string; passphrase: string } | null = null
  if (secretsFile) {
    exported = {
      text: readFileSync(secretsFile, 'utf8'),
      passphrase: await readPassphrase('passphrase of the secrets file: ', PASSPHRASE_ENV)
    }
  }
  const report = await restoreStore(from, dataDir, {
    acceptUnauthenticated: v['accept-unauthenticated'] === true,
    keychainFor: async (id) => {
      if (!exported) return server ? rootKeyStore(server) : keychainFor(id)
      // Refuses a secrets file of another data dir; nothing reaches a keychain before the restore succeeded.
      fromExport = memoryStore()
      await importSecrets(fromExport, exported.text, exported.passphrase, id)
      return fromExport
    },
    keychainHint: 'give its secrets export with --secrets FILE',
    passphrase: () => readPassphrase('passphrase of the backup: ', BACKUP_PASSPHRASE_ENV)
  })
  const imported = fromExport as SecretStore | null
  if (!imported?.list || !report.install_id) return report
  const items = await imported.list()
  if (server) {
    // A server's sealed entries go into the restored store: open it over the same key source.
    const service = await openService({ dataDir, secretSource: source })
    try {
      for (const s of items) await service.ctx.secrets.set(s.name, s.value)
    } finally {
      await service.close()
    }
  } else {
    const keychain = keychainFor(report.install_id)
    for (const s of items) await keychain.set(s.name, s.value)
  }
  return { ...report, secrets_imported: items.length }
}

/** Secrets held in this process only, until the restore they belong to has succeeded. */
function memoryStore(): SecretStore {
  const m = new Map<string, string>()
  return {
    get: async (name) => m.get(name) ?? null,
    set: async (name, value) => void m.set(name, value),
    delete: async (name) => void m.delete(name),
    list: async () => [...m].map(([name, value]) => ({ name, value }))
  }
}

const installId = async (service: Service): Promise<string> => {
  const id = await service.settings.get('install_id')
  if (!id) throw conflict('could not find the install id of this data dir')
  return id
}

/** The passphrase from the environment, from piped stdin (its first line), or from a silent prompt. */
async function readPassphrase(prompt: string, envName = PASSPHRASE_ENV): Promise<string> {
  const fromEnv = process.env[envName]
  if (fromEnv) return fromEnv
  return readSecretLine(prompt, `no passphrase: set ${envName}, pipe it on stdin, or run in a terminal`)
}
