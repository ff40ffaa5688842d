/**
 * `certdesk admin backup|restore|secrets …`: a consistent copy of the store while CertDesk runs,
 * a checked restore into an empty data dir, and the keychain's secrets exported and imported
 * under a passphrase (docs/backup.md). The passphrase never comes from the command line, where
 * `ps` and the shell history would show it: from CERTDESK_SECRETS_PASSPHRASE, from stdin when it
 * is not a terminal, or from a prompt that does not echo.
 */
import { readFileSync } from 'node:fs'
import { commandKey, need, print, UsageError, type Values } from './cli-args'
import { backupDataDir, restoreStore } from './core/backup'
import { conflict } from './core/errors'
import { nameTaken, writeFileExclusive } from './core/paths'
import { exportSecrets, importSecrets } from './core/secrets-export'
import { openService } from './core/service'

export const BACKUP_USAGE = `  certdesk admin [--data-dir D] backup --out FILE
  certdesk admin restore --from FILE --data-dir D            (D must not hold a store yet)
  certdesk admin [--data-dir D] secrets export --out FILE    (passphrase: CERTDESK_SECRETS_PASSPHRASE, stdin or prompt)
  certdesk admin [--data-dir D] secrets import --from FILE`

export const isBackupCommand = (noun: string | undefined): boolean =>
  noun === 'backup' || noun === 'restore' || noun === 'secrets'

export const PASSPHRASE_ENV = 'CERTDESK_SECRETS_PASSPHRASE'

export async function backupAdmin(dataDir: string, words: string[], v: Values): Promise<number> {
  const key = words[0] === 'secrets' ? commandKey(words) : words[0]
  switch (key) {
    case 'backup': {
      const out = need(v, 'out')
      let shown = -1
      const report = await backupDataDir(dataDir, out, (p) => {
        // Progress on stderr in tenths, so stdout stays one JSON answer.
        const tenth = p.totalPages === 0 ? 10 : Math.floor(((p.totalPages - p.remainingPages) / p.totalPages) * 10)
        if (tenth !== shown) process.stderr.write(`certdesk: backup ${tenth * 10}%\n`)
        shown = tenth
      })
      print({
        success: true,
        ...report,
        note: 'the store only; the secrets live in the OS keychain: keep a `certdesk admin secrets export` with it'
      })
      return 0
    }
    case 'restore': {
      if (!v['data-dir']) throw new UsageError('restore needs --data-dir: the empty data dir to restore into')
      print({ success: true, ...restoreStore(need(v, 'from'), dataDir) })
      return 0
    }
    case 'secrets export': {
      const out = need(v, 'out')
      // Asked before the passphrase is typed; the write itself refuses a name taken meanwhile.
      if (nameTaken(out))
        throw conflict(
          `could not export the secrets to ${out}: a file, folder or link of that name exists; choose a new name`
        )
      const passphrase = await readPassphrase('passphrase for the secrets file: ')
      const service = openService({ dataDir })
      try {
        const { file, count } = exportSecrets(service.ctx.secrets, passphrase, installId(service))
        writeFileExclusive(out, `${JSON.stringify(file, null, 2)}\n`, { action: 'export the secrets' })
        print({ success: true, file: out, secrets: count })
      } finally {
        service.close()
      }
      return 0
    }
    case 'secrets import': {
      const text = readFileSync(need(v, 'from'), 'utf8')
      const passphrase = await readPassphrase('passphrase of the secrets file: ')
      const service = openService({ dataDir })
      try {
        print({ success: true, ...importSecrets(service.ctx.secrets, text, passphrase, installId(service)) })
      } finally {
        service.close()
      }
      return 0
    }
    default:
      throw new UsageError(`unknown command: admin ${words.join(' ')}`)
  }
}

const installId = (service: ReturnType<typeof openService>): string => {
  const id = service.settings.get('install_id')
  if (!id) throw conflict('could not find the install id of this data dir')
  return id
}

/** The passphrase from the environment, from piped stdin (its first line), or from a silent prompt. */
async function readPassphrase(prompt: string): Promise<string> {
  const fromEnv = process.env[PASSPHRASE_ENV]
  if (fromEnv) return fromEnv
  const stdin = process.stdin
  if (!stdin.isTTY) {
    let text = ''
    for await (const chunk of stdin) text += String(chunk)
    const line = text.split(/\r?\n/)[0] ?? ''
    if (!line) throw new UsageError(`no passphrase: set ${PASSPHRASE_ENV}, pipe it on stdin, or run in a terminal`)
    return line
  }
  process.stderr.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  stdin.setEncoding('utf8')
  return new Promise((resolve, reject) => {
    let typed = ''
    const done = (err?: Error): void => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off('data', onData)
      process.stderr.write('\n')
      if (err) reject(err)
      else resolve(typed)
    }
    const onData = (s: string): void => {
      for (const ch of s) {
        if (ch === '\r' || ch === '\n') return done()
        if (ch === '\u0003') return done(new UsageError('cancelled'))
        if (ch === '\u007f') typed = typed.slice(0, -1)
        else typed += ch
      }
    }
    stdin.on('data', onData)
  })
}
