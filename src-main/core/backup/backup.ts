/**
 * Backup and restore of the store. A backup is SQLite's online backup API
 * (https://sqlite.org/backup.html) copying the live store page by page into the data dir: one
 * consistent snapshot even while `serve` or the app writes. That copy is checked and then
 * written to the chosen file inside an authenticated envelope (backup-format.ts), through a
 * temporary file created exclusively beside it (exclusive-file.ts). A restore accepts a file
 * only when its authentication code matches under a key that is not in the file (this data
 * dir's keychain, or a passphrase), and only a store whose schema is exactly what CertDesk
 * creates (store-schema.ts), whose integrity check passes, whose version this CertDesk knows and
 * whose ledger sums to every balance. Secrets are not in the store (they live in the OS
 * keychain); secrets-export.ts carries them.
 */
import Database from 'better-sqlite3'
import { constants, existsSync, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { isAbsolute, join, resolve } from 'node:path'
import {
  keyForRestore,
  keychainBackupKey,
  passphraseBackupKey,
  readBackupKind,
  verifyBackup,
  writeBackup,
  type BackupAuthKind,
  type BackupHeader,
  type BackupKey,
  type RestoreKeys
} from './backup-format'
import type { CoreContext } from '../context'
import { DB_FILE, migrations, openDatabase, type Db } from '../store/db'
import { invalid, conflict, ServiceError } from '../errors'
import {
  createBeside,
  discard,
  isPresent,
  openExclusive,
  publish,
  tempNameBeside,
  type ExclusiveTemp
} from '../exclusive-file'
import { ensurePrivateDir } from '../paths'
import type { SecretStore } from '../secrets'
import { SqliteStore, type Store } from '../store'
import { schemaDifferences } from '../store/store-schema'
import { storageFault } from '../store/store-faults'
import { isoTimestamp, type Clock } from '../time'

export type { RestoreKeys } from './backup-format'

export interface BackupProgress {
  totalPages: number
  remainingPages: number
}

export interface BackupReport {
  file: string
  bytes: number
  pages: number
  store_version: number
  authenticated_with: BackupAuthKind
}

export interface StoreCheck {
  store_version: number
  integrity: 'ok'
  resellers: number
  orders: number
  certificates: number
  ledger_rows: number
}

/** How a backup is authenticated: the data dir's keychain key (default) or a passphrase. */
export type BackupAuth = { kind: 'keychain'; secrets: SecretStore } | { kind: 'passphrase'; passphrase: string }

/** Pages copied per step: small enough that a writer waits only a moment between steps. */
const PAGES_PER_STEP = 256

const latestVersion = (): number => migrations[migrations.length - 1]?.version ?? 0

/** The install id a store names its keychain entries by (settings), or null. */
const installIdIn = (db: Db): string | null =>
  (db.prepare(`SELECT value FROM settings WHERE key = 'install_id'`).get() as { value: string } | undefined)?.value ??
  null

/** The key `auth` asks for; the keychain's is made on the first backup. */
async function backupKey(store: Store, auth: BackupAuth): Promise<BackupKey> {
  return auth.kind === 'keychain' ? await keychainBackupKey(store, auth.secrets) : passphraseBackupKey(auth.passphrase)
}

/**
 * The SQLite store a backup copies. A book in PostgreSQL is backed up by the database server's
 * own means (pg_dump, base backups with WAL archiving), which see every node's writes; a copy
 * by one node would not (docs/backup.md).
 */
function sqliteStoreOf(ctx: CoreContext): SqliteStore {
  if (ctx.store instanceof SqliteStore) return ctx.store
  throw conflict(
    "could not back up the store: it is a PostgreSQL database, which CertDesk does not copy; back it up with pg_dump or the server's own backups (docs/backup.md)"
  )
}

/** `work` over a read-only connection of its own to the store file, closed after. */
async function withSnapshotConnection<T>(store: SqliteStore, work: (db: Db) => Promise<T>): Promise<T> {
  const db = store.openReadOnly()
  try {
    return await work(db)
  } finally {
    db.close()
  }
}

/**
 * Copies the live store to `out`: a snapshot into the (private) data dir, checked, then written
 * authenticated under `key` to a temporary file beside `out` that only this process could have
 * created, and given the name `out` without replacing anything. A crash, a full disk or a
 * folder changed meanwhile never leaves a half file, or somebody else's, under that name.
 */
export async function backupStore(
  db: Db,
  out: string,
  key: BackupKey,
  clock: Clock,
  onProgress?: (p: BackupProgress) => void
): Promise<BackupReport> {
  // Never over an existing file (or link): it may be an older backup, or the live store itself.
  if (isPresent(out)) throw conflict(`could not write the backup to ${out}: the file exists; choose a new name`)
  const snapshot = tempNameBeside(db.name)
  let temp: ExclusiveTemp | null = null
  let copy: FileHandle | null = null
  try {
    // An empty file of ours in the data dir (0700): SQLite then writes into it by name.
    await (await openExclusive(snapshot)).close()
    const result = await db.backup(snapshot, {
      progress: (p) => {
        onProgress?.(p)
        return PAGES_PER_STEP
      }
    })
    // The copy carries the store's WAL flag; a backup is one self-contained file.
    const sqlite = new Database(snapshot)
    try {
      sqlite.pragma('journal_mode = DELETE')
    } finally {
      sqlite.close()
    }
    const check = checkStoreFile(snapshot, `could not write the backup to ${out}`)
    copy = await open(snapshot, 'r')
    temp = await createBeside(out)
    const installId = installIdIn(db)
    if (!installId) throw conflict(`could not write the backup to ${out}: the store has no install id`)
    const bytes = await writeBackup(temp.handle, copy, key, {
      install_id: installId,
      store_version: check.store_version,
      created_at: isoTimestamp(clock())
    })
    await publish(temp, out, 'the backup')
    temp = null
    onProgress?.({ totalPages: result.totalPages, remainingPages: 0 })
    return {
      file: out,
      bytes,
      pages: result.totalPages,
      store_version: check.store_version,
      authenticated_with: key.header.auth
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err
    const fault = storageFault(err, `write the backup to ${out}`)
    if (fault) throw fault
    // A folder that is missing or not writable: the user's to fix, said plainly.
    const code = (err as NodeJS.ErrnoException).code
    if (typeof code === 'string' && code.startsWith('E'))
      throw invalid(`could not write the backup to ${out}: ${(err as Error).message}`)
    throw err
  } finally {
    await copy?.close()
    if (temp) await discard(temp)
    rmSync(snapshot, { force: true })
    rmSync(`${snapshot}-journal`, { force: true })
  }
}

/** A backup of the store in `dataDir` (the CLI's, next to a running `serve`). */
export async function backupDataDir(
  ctx: CoreContext,
  out: string,
  auth: BackupAuth,
  onProgress?: (p: BackupProgress) => void
): Promise<BackupReport> {
  const store = sqliteStoreOf(ctx)
  const key = await backupKey(store, auth)
  return withSnapshotConnection(store, (db) => backupStore(db, out, key, ctx.clock, onProgress))
}

/**
 * Checks a store file without changing it: what `restore` refuses, and what a backup must pass
 * before it is kept. Throws a 400 that starts with `prefix` and says what is wrong.
 */
export function checkStoreFile(file: string, prefix = `could not restore ${file}`): StoreCheck {
  let db: Db
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
  } catch (err) {
    throw invalid(`${prefix}: ${(err as Error).message}`)
  }
  try {
    let integrity: string
    try {
      integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? ''
    } catch (err) {
      throw invalid(`${prefix}: it is damaged (${(err as Error).message})`)
    }
    if (integrity !== 'ok') throw invalid(`${prefix}: it is damaged (integrity check: ${integrity})`)
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > latestVersion())
      throw invalid(
        `${prefix}: it was made by a newer CertDesk (store version ${version}; this one knows up to ${latestVersion()}); restore it with that version or newer`
      )
    const has = (table: string): boolean =>
      db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined
    if (version === 0 || !has('resellers') || !has('credit_transactions') || !has('orders'))
      throw invalid(`${prefix}: it is a SQLite file but not a CertDesk store`)
    // Before any query that reads through the schema: nothing in it may be foreign.
    const foreign = schemaDifferences(db, version)
    if (foreign.length > 0)
      throw invalid(
        `${prefix}: its schema is not the one CertDesk creates: ${foreign.slice(0, 5).join('; ')}${foreign.length > 5 ? `; and ${foreign.length - 5} more` : ''}`
      )
    const off = db
      .prepare(
        `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
           FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id
          GROUP BY r.id HAVING balance != ledger`
      )
      .all() as { id: number; balance: number; ledger: number }[]
    if (off.length > 0)
      throw invalid(
        `${prefix}: the ledger does not sum to the balance of reseller ${off[0].id} (balance ${off[0].balance} cents, ledger ${off[0].ledger} cents)`
      )
    const count = (table: string): number =>
      has(table) ? (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n : 0
    return {
      store_version: version,
      integrity: 'ok',
      resellers: count('resellers'),
      orders: count('orders'),
      certificates: count('certificates'),
      ledger_rows: count('credit_transactions')
    }
  } finally {
    db.close()
  }
}

export interface RestoreOptions extends RestoreKeys {
  /**
   * Restore a file without an authentication code (a bare SQLite store, as CertDesk wrote
   * backups before they were authenticated). Its schema and books are still checked.
   */
  acceptUnauthenticated?: boolean
}

export interface RestoreReport extends StoreCheck {
  data_dir: string
  authenticated_with: BackupAuthKind | 'none (accepted explicitly)'
  install_id: string | null
  /**
   * For a store restored without authentication: its command deploy targets, which run as this
   * user on the next deploy, for the user to look over before starting CertDesk on it.
   */
  command_targets?: { target_id: number; order_id: number; command: string }[]
}

/**
 * Makes the backup `from` the store of `dataDir`, which must not hold a store yet (a restore
 * never overwrites one: move it away first). The file is read through one descriptor: its code
 * is checked first (nothing is written when it does not match), then the store is copied out
 * while the code is computed again, so what lands in the data dir is exactly what was
 * authenticated. The copy is checked (schema, integrity, version, ledger), given its name,
 * opened (migrating an older store to this version) and checked again.
 */
export async function restoreStore(from: string, dataDir: string, opts: RestoreOptions): Promise<RestoreReport> {
  const target = join(dataDir, DB_FILE)
  if (existsSync(target))
    throw conflict(
      `could not restore into ${dataDir}: it already holds a store; move ${DB_FILE} away or choose an empty data dir`
    )
  let file: FileHandle
  try {
    // Non-blocking, so a FIFO named as the backup is refused below instead of waiting for a writer.
    file = await open(from, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw invalid(
      `could not read the backup ${from}: ${code === 'ENOENT' ? 'it does not exist' : (err as Error).message}`
    )
  }
  try {
    if (!(await file.stat()).isFile()) throw invalid(`could not read the backup ${from}: it is not a regular file`)
    const found = await readBackupKind(file, from)
    let header: BackupHeader | null = null
    let key: Buffer | null = null
    if (found.kind === 'bare-sqlite') {
      if (!opts.acceptUnauthenticated)
        throw invalid(
          `could not restore ${from}: it has no authentication code (a backup made by an earlier CertDesk, or a bare SQLite file), ` +
            'so nothing shows it is unchanged; if you made it and nobody else could have changed it, restore it with ' +
            '--accept-unauthenticated (its schema and books are still checked), then make a new backup'
        )
    } else {
      header = found.header
      key = await keyForRestore(header, opts, from)
      // First pass: the code alone, so a changed file leaves no trace in the data dir.
      if (!(await verifyBackup(file, header, key, null))) throw notAuthentic(from, header)
    }
    return await copyIntoDataDir(file, from, dataDir, header, key)
  } finally {
    await file.close()
  }
}

const notAuthentic = (from: string, header: BackupHeader): ServiceError =>
  invalid(
    header.auth === 'passphrase'
      ? `could not restore ${from}: the passphrase is wrong or the file was changed; nothing was restored`
      : `could not restore ${from}: it is not the file CertDesk wrote (its authentication code does not match: it was changed or damaged); nothing was restored`
  )

async function copyIntoDataDir(
  file: FileHandle,
  from: string,
  dataDir: string,
  header: BackupHeader | null,
  key: Buffer | null
): Promise<RestoreReport> {
  const madeDir = !existsSync(dataDir)
  const target = join(dataDir, DB_FILE)
  let temp: ExclusiveTemp | null = null
  let placed = false
  try {
    ensurePrivateDir(dataDir)
    temp = await createBeside(target)
    const out = temp.handle
    const write = async (chunk: Buffer): Promise<void> => {
      for (let at = 0; at < chunk.length;) at += (await out.write(chunk, at, chunk.length - at)).bytesWritten
    }
    if (header && key) {
      // Second pass: the bytes written are the bytes authenticated, even if the file changed since.
      if (!(await verifyBackup(file, header, key, write))) throw notAuthentic(from, header)
    } else {
      const { size } = await file.stat()
      const buf = Buffer.alloc(1024 * 1024)
      for (let pos = 0; pos < size;) {
        const { bytesRead } = await file.read(buf, 0, buf.length, pos)
        if (bytesRead === 0) break
        await write(buf.subarray(0, bytesRead))
        pos += bytesRead
      }
    }
    await out.sync()
    checkStoreFile(temp.path, `could not restore ${from}`)
    const storedId = installIdOfFile(temp.path)
    if (header && storedId !== header.install_id)
      throw invalid(`could not restore ${from}: the store inside is not the one its header names; nothing was restored`)
    await publish(temp, target, 'the restored store')
    temp = null
    placed = true
    // Migrates an older store to this version, in one transaction per step.
    const db = openDatabase(dataDir)
    let commands: RestoreReport['command_targets']
    try {
      if (!header) commands = commandTargets(db)
    } finally {
      db.close()
    }
    return {
      ...checkStoreFile(target, `could not restore ${from}`),
      data_dir: dataDir,
      authenticated_with: header ? header.auth : 'none (accepted explicitly)',
      install_id: storedId,
      ...(commands ? { command_targets: commands } : {})
    }
  } catch (err) {
    if (temp) await discard(temp)
    if (placed) for (const f of ['', '-wal', '-shm', '-journal']) rmSync(`${target}${f}`, { force: true })
    if (madeDir && existsSync(dataDir) && readdirSync(dataDir).length === 0) rmdirSync(dataDir)
    if (err instanceof ServiceError) throw err
    throw storageFault(err, `restore into ${dataDir}`) ?? err
  }
}

const commandTargets = (db: Db): NonNullable<RestoreReport['command_targets']> =>
  db
    .prepare(
      `SELECT id AS target_id, order_id, json_extract(config, '$.command') AS command
         FROM deploy_targets WHERE kind = 'command' AND removed_at IS NULL ORDER BY id`
    )
    .all() as NonNullable<RestoreReport['command_targets']>

const installIdOfFile = (file: string): string | null => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return installIdIn(db)
  } finally {
    db.close()
  }
}

/** A backup the desktop app started, as its progress bar shows it. */
export interface BackupJobView {
  state: 'idle' | 'running' | 'done' | 'failed'
  percent: number
  file: string | null
  error: string | null
}

/**
 * One backup at a time from the desktop app: `start` returns at once, the copy runs in steps
 * (the app stays responsive and keeps writing), and `progress` is polled for the bar. The file is
 * named by the context clock, `certdesk-backup-YYYYMMDD-HHMMSS.backup`, in `folder` (default
 * `<data dir>/backups`), never overwrites a file, and is authenticated with the data dir's
 * keychain backup key (a passphrase backup is the CLI's `backup --with-passphrase`).
 */
export class BackupJobs {
  private view: BackupJobView = { state: 'idle', percent: 0, file: null, error: null }

  constructor(
    private readonly ctx: CoreContext,
    private readonly dataDir: string
  ) {}

  async start(folder?: string | null): Promise<BackupJobView> {
    if (this.view.state === 'running') throw conflict('could not start a backup: one is already running')
    const chosen = folder?.trim()
    if (chosen && !isAbsolute(chosen)) throw invalid('could not start a backup: the folder must be an absolute path')
    const dir = chosen ? resolve(chosen) : join(this.dataDir, 'backups')
    const stamp = isoTimestamp(this.ctx.clock()).replace(/[-:]/g, '').replace(' ', '-')
    const file = join(dir, `certdesk-backup-${stamp}.backup`)
    if (isPresent(file)) throw conflict(`could not start a backup: ${file} exists; try again in a second`)
    // The keychain's backup key first: without a keychain nothing is started (503, says what to do).
    const store = sqliteStoreOf(this.ctx)
    const key = await keychainBackupKey(store, this.ctx.secrets)
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch (err) {
      throw (
        storageFault(err, `create the backup folder ${dir}`) ??
        invalid(`could not create the backup folder ${dir}: ${(err as Error).message}`)
      )
    }
    this.view = { state: 'running', percent: 0, file, error: null }
    withSnapshotConnection(store, (db) =>
      backupStore(db, file, key, this.ctx.clock, (p) => {
        if (p.totalPages > 0) this.view.percent = Math.floor(((p.totalPages - p.remainingPages) / p.totalPages) * 100)
      })
    ).then(
      () => {
        this.view = { state: 'done', percent: 100, file, error: null }
      },
      (err: unknown) => {
        this.view = { state: 'failed', percent: this.view.percent, file: null, error: (err as Error).message }
      }
    )
    return { ...this.view }
  }

  progress(): BackupJobView {
    return { ...this.view }
  }
}

const jobs = new WeakMap<CoreContext, BackupJobs>()

/** The backup runner of one open store (one per service, made on first use). */
export function backupJobsFor(ctx: CoreContext, dataDir: string): BackupJobs {
  let j = jobs.get(ctx)
  if (!j) jobs.set(ctx, (j = new BackupJobs(ctx, dataDir)))
  return j
}
