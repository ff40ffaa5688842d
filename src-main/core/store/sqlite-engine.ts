/**
 * The SQLite engine of the store port: better-sqlite3 behind an async façade.
 *
 * Two connections to the one file. The writer runs every write transaction, one at a time
 * behind a mutex (a transaction's function awaits between statements, and another caller's
 * statements must not land inside it), each opened with `BEGIN IMMEDIATE` so it holds the
 * write lock from its first statement and never fails half-way on a lock (sqlite.org/lang_transaction.html).
 * The reader (`query_only`) answers statements outside a transaction and read-only
 * transactions; in WAL mode a reader never waits for a writer (sqlite.org/wal.html), so reads
 * go on while a write waits for another process's lock.
 *
 * Nothing here ever blocks the event loop on a lock: both connections run with
 * `busy_timeout = 0`, so SQLite answers SQLITE_BUSY at once, and the engine tries again on a
 * timer, doubling the wait, until BUSY_TIMEOUT_MS has passed; then the caller hears 503 with
 * Retry-After (store-faults.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import Database from 'better-sqlite3'
import { BUSY_TIMEOUT_MS, openDatabase, type Db } from './db'
import { domainMatch as sqliteDomainMatch, domainQuery as sqliteDomainQuery } from './sqlite-search'
import { installStatementCache } from './statement-cache'
import { untilUnlocked } from './store-faults'
import { catalogueVersion, scopeVersions, storeVersion } from './store-version'
import { Mutex } from '../mutex'
import { SharedCommit } from './sqlite-shared-commit'
import {
  EACH_BATCH,
  type DomainQuery,
  type Leadership,
  type Row,
  type RunResult,
  type ScopeVersions,
  type SqlArg,
  type Store,
  type Tx,
  type TxOptions
} from './port'
import { closedStore, identifier, txHandle } from './tx-handle'

/** The open transaction a caller runs in: its connection, and how deep its savepoints are. */
interface Root {
  db: Db
  readOnly: boolean
  done: boolean
  /** Savepoint names open now, innermost last. */
  savepoints: string[]
  after: (() => void)[]
  notes: [string, string][]
  /**
   * The error after which SQLite rolled the whole transaction back by itself (a full disk, an
   * I/O error: sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction");
   * nothing more may run in it, and it ends with that error.
   */
  failed?: unknown
}
interface Frame {
  root: Root
  /** How many savepoints were open when this frame's function started. */
  level: number
}

export interface SqliteStoreOptions {
  /** How long a write waits for another process's lock before it answers 503. */
  busyBudgetMs?: number
}

/** Opens the store in `dataDir` (migrating it as before) and its read connection. */
export function openSqliteStore(
  dataDir: string,
  nativeBinding?: string,
  options: SqliteStoreOptions = {}
): SqliteStore {
  return new SqliteStore(openDatabase(dataDir, nativeBinding), nativeBinding, options)
}

export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const
  readonly reader: Db
  private readonly writeLock = new Mutex()
  private readonly readLock = new Mutex()
  private readonly frames = new AsyncLocalStorage<Frame>()
  private readonly events = new EventEmitter()
  private readonly busyBudgetMs: number
  private readonly nativeBinding?: string
  private writes = 0
  private closed = false
  /** Write transactions that share a COMMIT (sqlite-shared-commit.ts). */
  private readonly shared: SharedCommit

  /** `writer` is an open, migrated store (db.ts); the engine opens its reader beside it. */
  constructor(
    readonly writer: Db,
    nativeBinding?: string,
    options: SqliteStoreOptions = {}
  ) {
    this.busyBudgetMs = options.busyBudgetMs ?? BUSY_TIMEOUT_MS
    this.nativeBinding = nativeBinding
    writer.pragma('busy_timeout = 0')
    this.reader = new Database(writer.name, nativeBinding ? { nativeBinding } : {})
    installStatementCache(this.reader)
    this.reader.pragma('busy_timeout = 0')
    this.reader.pragma('query_only = 1')
    this.events.setMaxListeners(0)
    this.shared = new SharedCommit(writer, this.writeLock, (budgetMs) =>
      // With the write lock held, COMMIT in WAL mode does not wait for readers; it may still
      // meet a checkpoint in another process, which is passing.
      this.untilFree(() => control(writer, 'COMMIT'), 'save the change', budgetMs)
    )
  }

  /**
   * Another read-only connection to the store file, for work that reads the file for a long
   * while on its own (a backup, a batch read); the caller closes it.
   */
  openReadOnly(): Db {
    return new Database(this.writer.name, {
      readonly: true,
      ...(this.nativeBinding ? { nativeBinding: this.nativeBinding } : {})
    })
  }

  inTransaction(): boolean {
    const f = this.frames.getStore()
    return !!f && !f.root.done
  }

  // --- statements -------------------------------------------------------------------------

  get<T = Row>(sql: string, ...args: SqlArg[]): Promise<T | undefined> {
    return this.read(sql, (db) => db.prepare(sql).get(...args) as T | undefined)
  }

  all<T = Row>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return this.read(sql, (db) => db.prepare(sql).all(...args) as T[])
  }

  value<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T | undefined> {
    return this.read(
      sql,
      (db) =>
        db
          .prepare(sql)
          .pluck()
          .get(...args) as T | undefined
    )
  }

  column<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return this.read(
      sql,
      (db) =>
        db
          .prepare(sql)
          .pluck()
          .all(...args) as T[]
    )
  }

  arrays<T extends unknown[] = unknown[]>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return this.read(
      sql,
      (db) =>
        db
          .prepare(sql)
          .raw(true)
          .all(...args) as T[]
    )
  }

  inList(values: readonly (number | string)[], not = false): { sql: string; arg: SqlArg } {
    return { sql: `${not ? 'NOT IN' : 'IN'} (SELECT value FROM json_each(?))`, arg: JSON.stringify(values) }
  }

  run(sql: string, ...args: SqlArg[]): Promise<RunResult> {
    return this.write((db) => ({ changes: db.prepare(sql).run(...args).changes }))
  }

  insert(sql: string, ...args: SqlArg[]): Promise<number> {
    return this.write((db) => Number(db.prepare(sql).run(...args).lastInsertRowid))
  }

  async each<T = Row>(
    sql: string,
    args: SqlArg[],
    fn: (rows: T[]) => Promise<void> | void,
    batch = EACH_BATCH
  ): Promise<number> {
    const frame = this.current()
    if (!frame && this.closed) throw closedStore()
    if (frame) {
      // A connection cannot run the transaction's other statements while it iterates.
      const rows = frame.root.db.prepare(sql).all(...args) as T[]
      for (let i = 0; i < rows.length; i += batch) await fn(rows.slice(i, i + batch))
      return rows.length
    }
    // A connection of its own keeps its snapshot while `fn` awaits, and holds up nobody.
    const db = this.openReadOnly()
    try {
      db.exec('BEGIN')
      let rows: T[] = []
      let n = 0
      for (const row of db.prepare(sql).iterate(...args) as IterableIterator<T>) {
        rows.push(row)
        n++
        if (rows.length >= batch) {
          await fn(rows)
          rows = []
        }
      }
      if (rows.length > 0) await fn(rows)
      db.exec('COMMIT')
      return n
    } finally {
      db.close()
    }
  }

  /**
   * A statement that answers rows: in the caller's transaction, else on the reader between read
   * transactions; one that writes as well (`INSERT … RETURNING`) as a transaction of its own.
   */
  private async read<T>(sql: string | null, fn: (db: Db) => T): Promise<T> {
    const frame = this.current()
    if (frame) return this.inFrame(frame, fn)
    if (sql !== null && !this.reader.prepare(sql).readonly) return this.write(fn)
    return this.onReader(fn)
  }

  private async onReader<T>(fn: (db: Db) => T): Promise<T> {
    if (this.closed) throw closedStore()
    const release = await this.readLock.acquire()
    try {
      if (this.closed) throw closedStore()
      return await this.untilFree(() => fn(this.reader), 'read the store')
    } finally {
      release()
    }
  }

  /** A write: in the caller's transaction, else as a transaction of its own. */
  private async write<T>(fn: (db: Db) => T): Promise<T> {
    const frame = this.current()
    if (frame) {
      if (frame.root.readOnly) throw new Error('could not write to the store: the transaction is read-only')
      return this.inFrame(frame, fn)
    }
    return this.tx(async () => fn(this.writer))
  }

  /** One statement in the caller's transaction, unless SQLite has rolled it back already. */
  private inFrame<T>(frame: Frame, fn: (db: Db) => T): T {
    const root = frame.root
    if (root.failed !== undefined) throw root.failed
    try {
      return fn(root.db)
    } catch (err) {
      if (!root.db.inTransaction) root.failed = err
      throw err
    }
  }

  private current(): Frame | undefined {
    const f = this.frames.getStore()
    // A continuation that outlived its transaction (work started inside, finished after)
    // runs on its own.
    return f && !f.root.done ? f : undefined
  }

  // --- transactions -----------------------------------------------------------------------

  async tx<T>(fn: (t: Tx) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const frame = this.current()
    if (frame) return this.nested(frame, fn, options)
    if (this.closed) throw closedStore()
    return options.readOnly === true ? await this.readTx(fn, options) : await this.writeTx(fn, options)
  }

  /** A read transaction: one snapshot on the reader. */
  private async readTx<T>(fn: (t: Tx) => Promise<T>, options: TxOptions): Promise<T> {
    const db = this.reader
    const release = await this.readLock.acquire()
    try {
      if (this.closed) throw closedStore()
      // A deferred BEGIN takes no lock.
      await this.untilFree(() => control(db, 'BEGIN'), 'read the store', options.budgetMs ?? this.busyBudgetMs)
      const root: Root = { db, readOnly: true, done: false, savepoints: [], after: [], notes: [] }
      let result: T
      try {
        result = await this.frames.run({ root, level: 0 }, () => fn(this.handle()))
        if (root.failed !== undefined) throw root.failed
        if (root.savepoints.length > 0) throw new Error('could not commit: a nested transaction was not awaited')
        control(db, 'COMMIT')
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK')
        throw root.failed ?? err
      } finally {
        root.done = true
      }
      for (const [channel, payload] of root.notes) this.events.emit(channel, payload)
      for (const f of root.after) f()
      return result
    } finally {
      release()
    }
  }

  /**
   * A write transaction on the writer, under the write lock: `BEGIN IMMEDIATE` takes SQLite's
   * write lock now or answers BUSY (retried on timers). With `shareCommit` it may instead join,
   * in a savepoint, a transaction left open by one before it, and leave its own open for those
   * behind it (sqlite-shared-commit.ts); a write that does not join commits what is open first.
   */
  private async writeTx<T>(fn: (t: Tx) => Promise<T>, options: TxOptions): Promise<T> {
    const db = this.writer
    const budget = options.budgetMs ?? this.busyBudgetMs
    const release = await this.writeLock.acquire()
    let handedOn = false
    try {
      if (this.closed) throw closedStore()
      const joined = options.shareCommit === true && this.shared.joinable
      if (joined) {
        control(db, 'SAVEPOINT shared')
      } else {
        await this.shared.settle()
        await this.untilFree(() => control(db, 'BEGIN IMMEDIATE'), 'save the change', budget)
      }
      const root: Root = { db, readOnly: false, done: false, savepoints: [], after: [], notes: [] }
      let result: T
      try {
        result = await this.frames.run({ root, level: 0 }, () => fn(this.handle()))
        // A function that caught the error after which SQLite rolled back commits nothing.
        if (root.failed !== undefined) throw root.failed
        if (root.savepoints.length > 0) throw new Error('could not commit: a nested transaction was not awaited')
        if (joined) control(db, 'RELEASE shared')
      } catch (err) {
        const cause = root.failed ?? err
        if (!db.inTransaction) {
          // SQLite rolled the whole transaction back by itself: the ones before in it are gone too.
          this.shared.fail(cause)
        } else if (joined) {
          control(db, 'ROLLBACK TO shared')
          control(db, 'RELEASE shared')
        } else {
          db.exec('ROLLBACK')
        }
        throw cause
      } finally {
        root.done = true
      }
      const committed = options.shareCommit === true ? this.shared.hold(joined) : null
      if (committed) {
        handedOn = true
        release()
        await committed
      } else {
        await this.shared.commitNow(budget)
      }
      this.writes++
      for (const [channel, payload] of root.notes) this.events.emit(channel, payload)
      for (const f of root.after) f()
      return result
    } finally {
      if (!handedOn) {
        // A holder that failed or stopped before its COMMIT commits what others left open.
        await this.shared.settle()
        release()
      }
    }
  }

  private async nested<T>(frame: Frame, fn: (t: Tx) => Promise<T>, options: TxOptions): Promise<T> {
    const root = frame.root
    if (root.readOnly && !options.readOnly) {
      throw new Error('could not start a transaction that writes: the enclosing transaction is read-only')
    }
    if (root.savepoints.length !== frame.level) {
      throw new Error('could not start a nested transaction beside another one: await each before the next')
    }
    if (root.failed !== undefined) throw root.failed
    const name = `sp${root.savepoints.length + 1}`
    root.db.exec(`SAVEPOINT ${name}`)
    root.savepoints.push(name)
    try {
      const result = await this.frames.run({ root, level: root.savepoints.length }, () => fn(this.handle()))
      root.db.exec(`RELEASE ${name}`)
      return result
    } catch (err) {
      // Gone with the whole transaction when SQLite rolled it back by itself.
      if (root.failed === undefined && root.db.inTransaction) {
        root.db.exec(`ROLLBACK TO ${name}`)
        root.db.exec(`RELEASE ${name}`)
      }
      throw err
    } finally {
      root.savepoints.pop()
    }
  }

  private handle(): Tx {
    // Under the write lock nobody else can take the same number.
    return txHandle(
      this,
      () => this.current()?.root,
      async (table) => (await this.value<number>(`SELECT COALESCE(MAX(id), 0) + 1 FROM ${identifier(table)}`)) ?? 1
    )
  }

  private untilFree<T>(step: () => T, verb: string, budgetMs = this.busyBudgetMs): Promise<T> {
    return untilUnlocked(step, verb, budgetMs)
  }

  // --- engine-specific operations ---------------------------------------------------------

  storeVersion(): Promise<string> {
    // The reader's data_version moves with every commit of another connection, the writer's included.
    return this.read(null, (db) => storeVersion(db))
  }

  scopeVersions(resellerId: number): Promise<ScopeVersions> {
    return this.read(null, (db) => scopeVersions(db, resellerId))
  }

  catalogueVersion(): Promise<string> {
    return this.read(null, (db) => catalogueVersion(db))
  }

  localWrites(): number {
    return this.writes
  }

  domainQuery(resellerId: number, term: string, status: string | undefined): DomainQuery {
    return sqliteDomainQuery(resellerId, term, status)
  }

  domainMatch(term: string): { sql: string; args: SqlArg[] } {
    return sqliteDomainMatch(term)
  }

  /**
   * One desk runs one CertDesk process that schedules (the admin CLI runs its passes by hand),
   * so leadership is kept per store file within this process.
   */
  async tryLeadership(name: string): Promise<Leadership | null> {
    const key = `${this.writer.name}\0${name}`
    if (leaders.has(key)) return null
    leaders.add(key)
    let held = true
    return {
      get held() {
        return held
      },
      release: async () => {
        if (held) leaders.delete(key)
        held = false
      }
    }
  }

  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    this.events.on(channel, fn)
    return async () => void this.events.off(channel, fn)
  }

  async close(): Promise<void> {
    // Waits for the transaction in progress, then closes both connections; what waits behind it hears so.
    if (this.closed) return
    this.closed = true
    const release = await this.writeLock.acquire()
    const releaseRead = await this.readLock.acquire()
    try {
      await this.shared.settle()
      this.reader.close()
      this.writer.close()
    } finally {
      releaseRead()
      release()
    }
  }
}

/** Leadership held in this process, per store file and name. */
const leaders = new Set<string>()

/**
 * A statement that opens or ends a transaction or the shared COMMIT's savepoint, through the
 * connection's kept prepared statement (statement-cache.ts), as better-sqlite3's own
 * `transaction` runs them: `exec` parses the text on every call.
 */
function control(
  db: Db,
  sql: 'BEGIN' | 'BEGIN IMMEDIATE' | 'COMMIT' | 'SAVEPOINT shared' | 'RELEASE shared' | 'ROLLBACK TO shared'
): void {
  db.prepare(sql).run()
}
