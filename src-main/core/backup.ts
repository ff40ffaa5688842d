/**
 * Backup and restore of the store. A backup is SQLite's online backup API
 * (https://sqlite.org/backup.html) copying the live store page by page: it is one consistent
 * snapshot even while `serve` or the app writes. A restore checks the file before it becomes a
 * data dir's store: a SQLite file, `PRAGMA integrity_check` passing, a store version this
 * CertDesk knows, and a ledger that sums to every balance. Secrets are not in the store (they
 * live in the OS keychain); secrets-export.ts carries them.
 */
import Database from 'better-sqlite3'
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import type { CoreContext } from './context'
import { DB_FILE, migrations, openDatabase, type Db } from './db'
import { invalid, conflict } from './errors'
import { ensurePrivateDir, ensurePrivateFile } from './paths'
import { storageFault } from './store-faults'
import { isoTimestamp } from './time'

export interface BackupProgress {
  totalPages: number
  remainingPages: number
}

export interface BackupReport {
  file: string
  bytes: number
  pages: number
  store_version: number
}

export interface StoreCheck {
  store_version: number
  integrity: 'ok'
  resellers: number
  orders: number
  certificates: number
  ledger_rows: number
}

/** Pages copied per step: small enough that a writer waits only a moment between steps. */
const PAGES_PER_STEP = 256
const SQLITE_HEADER = 'SQLite format 3\0'

const latestVersion = (): number => migrations[migrations.length - 1]?.version ?? 0

/**
 * Copies the live store to `out` (written as `out.partial`, synced, then renamed, so a crash or
 * a full disk never leaves a half file under the chosen name). The copy is 0600 like the store.
 */
export async function backupStore(
  db: Db,
  out: string,
  onProgress?: (p: BackupProgress) => void
): Promise<BackupReport> {
  // Never over an existing file: it may be an older backup, or the live store itself.
  if (existsSync(out)) throw conflict(`could not write the backup to ${out}: the file exists; choose a new name`)
  const partial = `${out}.partial`
  rmSync(partial, { force: true })
  try {
    ensurePrivateFile(partial)
    const result = await db.backup(partial, {
      progress: (p) => {
        onProgress?.(p)
        return PAGES_PER_STEP
      }
    })
    // The copy carries the store's WAL flag; a backup is one self-contained file.
    const copy = new Database(partial)
    try {
      copy.pragma('journal_mode = DELETE')
    } finally {
      copy.close()
    }
    const check = checkStoreFile(partial)
    const fd = openSync(partial, 'r+')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(partial, out)
    onProgress?.({ totalPages: result.totalPages, remainingPages: 0 })
    return { file: out, bytes: statSync(out).size, pages: result.totalPages, store_version: check.store_version }
  } catch (err) {
    rmSync(partial, { force: true })
    throw storageFault(err, `write the backup to ${out}`) ?? err
  }
}

/** A backup of the store in `dataDir` (the CLI's, next to a running `serve`). */
export async function backupDataDir(
  dataDir: string,
  out: string,
  onProgress?: (p: BackupProgress) => void
): Promise<BackupReport> {
  const db = openDatabase(dataDir)
  try {
    return await backupStore(db, out, onProgress)
  } finally {
    db.close()
  }
}

/**
 * Checks a store file without changing it: what `restore` refuses, and what a backup must pass
 * before it is kept. Throws a 400 that says what is wrong.
 */
export function checkStoreFile(file: string): StoreCheck {
  if (!existsSync(file)) throw invalid(`could not read the backup ${file}: it does not exist`)
  const head = Buffer.alloc(16)
  const fd = openSync(file, 'r')
  try {
    readSync(fd, head, 0, 16, 0)
  } finally {
    closeSync(fd)
  }
  if (head.toString('latin1') !== SQLITE_HEADER)
    throw invalid(`could not read the backup ${file}: it is not a CertDesk store (no SQLite header)`)
  let db: Db
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
  } catch (err) {
    throw invalid(`could not read the backup ${file}: ${(err as Error).message}`)
  }
  try {
    let integrity: string
    try {
      integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? ''
    } catch (err) {
      throw invalid(`could not restore ${file}: it is damaged (${(err as Error).message})`)
    }
    if (integrity !== 'ok') throw invalid(`could not restore ${file}: it is damaged (integrity check: ${integrity})`)
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > latestVersion())
      throw invalid(
        `could not restore ${file}: it was made by a newer CertDesk (store version ${version}; this one knows up to ${latestVersion()}); restore it with that version or newer`
      )
    const has = (table: string): boolean =>
      db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined
    if (version === 0 || !has('resellers') || !has('credit_transactions') || !has('orders'))
      throw invalid(`could not restore ${file}: it is a SQLite file but not a CertDesk store`)
    const off = db
      .prepare(
        `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
           FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id
          GROUP BY r.id HAVING balance != ledger`
      )
      .all() as { id: number; balance: number; ledger: number }[]
    if (off.length > 0)
      throw invalid(
        `could not restore ${file}: the ledger does not sum to the balance of reseller ${off[0].id} (balance ${off[0].balance} cents, ledger ${off[0].ledger} cents)`
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

/**
 * Makes the backup `from` the store of `dataDir`, which must not hold a store yet (a restore
 * never overwrites one: move it away first). The file is checked, copied in as a partial file,
 * renamed into place, opened (migrating an older store to this version) and checked again.
 */
export function restoreStore(from: string, dataDir: string): StoreCheck & { data_dir: string } {
  checkStoreFile(from)
  const target = join(dataDir, DB_FILE)
  if (existsSync(target))
    throw conflict(
      `could not restore into ${dataDir}: it already holds a store; move ${DB_FILE} away or choose an empty data dir`
    )
  ensurePrivateDir(dataDir)
  const partial = `${target}.partial`
  rmSync(partial, { force: true })
  try {
    ensurePrivateFile(partial)
    // A copy through SQLite (not a byte copy), so the result is a store file of its own with no WAL.
    const src = new Database(from, { readonly: true, fileMustExist: true })
    try {
      src.prepare('VACUUM INTO ?').run(partial)
    } finally {
      src.close()
    }
  } catch (err) {
    rmSync(partial, { force: true })
    throw storageFault(err, `restore into ${dataDir}`) ?? err
  }
  renameSync(partial, target)
  // Migrates an older store to this version, in one transaction per step.
  openDatabase(dataDir).close()
  return { ...checkStoreFile(target), data_dir: dataDir }
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
 * named by the context clock, `certdesk-backup-YYYYMMDD-HHMMSS.sqlite`, in `folder` (default
 * `<data dir>/backups`), and never overwrites a file.
 */
export class BackupJobs {
  private view: BackupJobView = { state: 'idle', percent: 0, file: null, error: null }

  constructor(
    private readonly ctx: CoreContext,
    private readonly dataDir: string
  ) {}

  start(folder?: string | null): BackupJobView {
    if (this.view.state === 'running') throw conflict('could not start a backup: one is already running')
    const chosen = folder?.trim()
    if (chosen && !isAbsolute(chosen)) throw invalid('could not start a backup: the folder must be an absolute path')
    const dir = chosen ? resolve(chosen) : join(this.dataDir, 'backups')
    const stamp = isoTimestamp(this.ctx.clock()).replace(/[-:]/g, '').replace(' ', '-')
    const file = join(dir, `certdesk-backup-${stamp}.sqlite`)
    if (existsSync(file)) throw conflict(`could not start a backup: ${file} exists; try again in a second`)
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch (err) {
      throw (
        storageFault(err, `create the backup folder ${dir}`) ??
        invalid(`could not create the backup folder ${dir}: ${(err as Error).message}`)
      )
    }
    this.view = { state: 'running', percent: 0, file, error: null }
    backupStore(this.ctx.db, file, (p) => {
      if (p.totalPages > 0) this.view.percent = Math.floor(((p.totalPages - p.remainingPages) / p.totalPages) * 100)
    }).then(
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
