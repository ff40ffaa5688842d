/**
 * The PostgreSQL engine of the store port, over a `pg` pool (docs/decisions.md, "The store").
 *
 * Every transaction is SERIALIZABLE, and so is every statement outside one (the connection's
 * default), so each behaves as if it ran alone, exactly as under SQLite's single writer: the
 * core's read-then-write steps (a balance check before the debit, an idempotency key looked up
 * before the order) need no row locks to stay right across nodes. PostgreSQL refuses a
 * transaction that would break that with SQLSTATE 40001 (or 40P01 for a deadlock); the engine
 * then rolls back and runs the function again, after a random pause, until a time budget is
 * spent (PostgreSQL manual, 13.2.3 "Serializable Isolation Level": "applications using this
 * level must be prepared to retry transactions due to serialization failures").
 *
 * Rows come back in SQLite's shapes: int8 and numeric as JS numbers (refused past 2^53),
 * bytea as Buffer, text as text (timestamps are text on both engines).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import pg from 'pg'
import { resellerScope, KEEPER_TRIGGERS } from './store-version'
import { RetryLaterError, DEFAULT_RETRY_AFTER_SECONDS } from './store-faults'
import { backoff, KeyedMutex, sleep } from '../mutex'
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
import { isRetryable, passingFault } from './postgres-errors'
import { toPostgres, withReturningId } from './sql-postgres'
import { closedStore, identifier, txHandle } from './tx-handle'

interface Root {
  client: pg.PoolClient
  readOnly: boolean
  done: boolean
  /** The first error the server answered in this transaction (the rest are "aborted"). */
  failed: unknown
  savepoints: string[]
  after: (() => void)[]
  notes: [string, string][]
  /**
   * Readings this transaction has made that its snapshot keeps (SERIALIZABLE: every statement
   * sees the transaction's first snapshot plus its own writes): the schema token (the schema
   * version and the keeper triggers in force) until it runs DDL, the catalogue version until it
   * writes anything: the catalogue version an order prices with is the one its first scope reading brought.
   */
  readings: { schema?: string; catalogue?: string }
  /** A reading of the versions on its way (`readScopes`), which `catalogueVersion` waits for. */
  reading?: Promise<unknown>
  /** Statements started that may change something (DDL included): a reading sent before one is not kept. */
  changes: number
  /**
   * The transaction's start not yet sent: the queue's lock and BEGIN, or BEGIN alone. It goes
   * out with the transaction's first statement (`send`).
   */
  prelude: string
  /** The answer to the start once it was sent (`send`). */
  started: Promise<unknown>
  /** Whether the start has been answered, or needs no answer before the statements behind it. */
  ready: boolean
  /** Statements handed to `send` that wait for the start's answer. */
  waiting: number
}
interface Frame {
  root: Root
  level: number
}

export interface PostgresStoreOptions {
  /** How long a transaction may keep retrying serialization failures before 503. */
  retryBudgetMs?: number
  /**
   * Connections for reads outside a writing transaction (statements that only read, read-only
   * transactions, `each`), opened at REPEATABLE READ READ ONLY: one snapshot of what has been
   * committed, never refused for serialization and never the cause of a writer's refusal.
   * Without it every read goes through the main pool.
   */
  readers?: pg.Pool
}

/** The schema version of a migrated database (postgres-schema.ts). */
export const SCHEMA_TABLE = 'certdesk_schema'

type Queryer = Pick<pg.PoolClient, 'query'>

/**
 * Marks a statement PostgreSQL must plan with each call's values. A named statement is planned
 * once for any values after five calls (a generic plan; PostgreSQL manual, PREPARE, "Notes"),
 * which for a substring search means reading the caller's whole entry of the search index
 * whether the term is rare or common; the unnamed statement is planned at each call with its
 * values (PostgreSQL manual, 55.2.3 "Extended Query"), so the planner sees how rare the term
 * is. Kept inside the text, it marks every statement a search condition is part of.
 */
const PLAN_EACH_CALL = '/* planned per call */'

/** Statement names per text: each connection parses a statement once (PostgreSQL's PREPARE). */
const names = new Map<string, string>()
const MAX_NAMED = 2000
function nameOf(text: string): string | undefined {
  if (text.includes(PLAN_EACH_CALL)) return undefined
  let name = names.get(text)
  if (!name) {
    if (names.size >= MAX_NAMED) return undefined
    name = `certdesk_${names.size + 1}`
    names.set(text, name)
  }
  return name
}

const toValue = (a: SqlArg): unknown =>
  typeof a === 'bigint' ? a.toString() : a instanceof Uint8Array && !Buffer.isBuffer(a) ? Buffer.from(a) : a

export class PostgresStore implements Store {
  readonly engine = 'postgres' as const
  private readonly frames = new AsyncLocalStorage<Frame>()
  private readonly events = new EventEmitter()
  private listener: pg.Client | null = null
  private readonly listening = new Set<string>()
  /** Connections that hold leadership, ended with the store. */
  private readonly leaderClients = new Set<pg.Client>()
  private readonly retryBudgetMs: number
  /** The pool reads outside a writing transaction take (PostgresStoreOptions.readers). */
  readonly readers: pg.Pool
  private writes = 0
  private cursors = 0
  private closed = false
  /** Scope readings asked for, by reseller, waiting for the next statement (`scopeVersions`). */
  private scopeWaiting = new Map<number, { resolve: (v: ScopeVersions) => void; reject: (e: unknown) => void }[]>()
  private scopeReading: Promise<void> | null = null
  /** The queues transactions name (`TxOptions.queue`), while anyone holds or waits for one. */
  private readonly queues = new KeyedMutex<string>()

  constructor(
    readonly pool: pg.Pool,
    /** Connection settings for the dedicated connections (leadership, LISTEN). */
    private readonly clientConfig: pg.ClientConfig,
    options: PostgresStoreOptions = {}
  ) {
    this.retryBudgetMs = options.retryBudgetMs ?? 10_000
    this.readers = options.readers ?? pool
    this.events.setMaxListeners(0)
  }

  inTransaction(): boolean {
    return this.current() !== undefined
  }

  private current(): Frame | undefined {
    const f = this.frames.getStore()
    return f && !f.root.done ? f : undefined
  }

  // --- statements -------------------------------------------------------------------------

  /** `sql` in the common dialect, or, with `native`, PostgreSQL's own (`$1`, catalogues). */
  private async query(sql: string, args: SqlArg[], arrays = false, native = false): Promise<pg.QueryResult> {
    const { text, params } = native ? { text: sql, params: args.length } : toPostgres(sql)
    if (params !== args.length) {
      throw new Error(`could not run a statement: it has ${params} placeholders and got ${args.length} values`)
    }
    const config: pg.QueryConfig = { text, values: args.map(toValue), name: nameOf(text) }
    const run = (q: Queryer) => (arrays ? q.query({ ...config, rowMode: 'array' }) : q.query(config))
    const frame = this.current()
    if (!frame && this.closed) throw closedStore()
    if (frame) {
      const root = frame.root
      // What a statement may change, the transaction's kept readings no longer tell.
      if (!native && !/^\s*SELECT\b/i.test(sql)) {
        root.changes++
        root.readings.catalogue = undefined
        if (/^\s*(ALTER|DROP|CREATE)\b/i.test(sql)) root.readings.schema = undefined
      }
      try {
        return await this.send(root, run, () => onlyReads(text) || NEXT_ID.test(text))
      } catch (err) {
        root.failed ??= err
        throw err
      }
    }
    // On its own: a statement that only reads runs on a reader connection (one snapshot, no
    // part in serializability); any other in its own SERIALIZABLE transaction, retried like any.
    return this.retrying(() => run(onlyReads(text) ? this.readers : this.pool), 'run a statement')
  }

  async get<T = Row>(sql: string, ...args: SqlArg[]): Promise<T | undefined> {
    return (await this.query(sql, args)).rows[0] as T | undefined
  }

  async all<T = Row>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return (await this.query(sql, args)).rows as T[]
  }

  async value<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T | undefined> {
    const row = (await this.query(sql, args, true)).rows[0] as unknown[] | undefined
    return row?.[0] as T | undefined
  }

  async column<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return (await this.query(sql, args, true)).rows.map((r) => (r as unknown[])[0] as T)
  }

  async arrays<T extends unknown[] = unknown[]>(sql: string, ...args: SqlArg[]): Promise<T[]> {
    return (await this.query(sql, args, true)).rows as T[]
  }

  inList(values: readonly (number | string)[], not = false): { sql: string; arg: SqlArg } {
    // pg sends a JS array as an array literal; its element type is the compared column's.
    return { sql: not ? '<> ALL(?)' : '= ANY(?)', arg: [...values] as unknown as SqlArg }
  }

  async each<T = Row>(
    sql: string,
    args: SqlArg[],
    fn: (rows: T[]) => Promise<void> | void,
    batch = EACH_BATCH
  ): Promise<number> {
    if (!Number.isSafeInteger(batch) || batch < 1) throw new Error(`could not read in batches of ${batch}`)
    const { text, params } = toPostgres(sql)
    if (params !== args.length) {
      throw new Error(`could not run a statement: it has ${params} placeholders and got ${args.length} values`)
    }
    const cursor = `certdesk_each_${++this.cursors}`
    const fetchAll = async (client: pg.PoolClient): Promise<number> => {
      await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, args.map(toValue))
      let n = 0
      for (;;) {
        const r = await client.query(`FETCH ${batch} FROM ${cursor}`)
        n += r.rows.length
        if (r.rows.length > 0) await fn(r.rows as T[])
        if (r.rows.length < batch) break
      }
      await client.query(`CLOSE ${cursor}`)
      return n
    }
    const frame = this.current()
    if (frame) return this.send(frame.root, fetchAll)
    if (this.closed) throw closedStore()
    // REPEATABLE READ: a read-only snapshot that is never refused for serialization, so no
    // batch is ever handed out twice by a retry.
    const client = await this.readers.connect()
    let broken: Error | undefined
    const lost = (err: Error) => (broken = err)
    client.on('error', lost)
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const n = await fetchAll(client)
      await client.query('COMMIT')
      return n
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e))
      throw passingFault(err, 'read the store') ?? err
    } finally {
      client.off('error', lost)
      client.release(broken)
    }
  }

  async run(sql: string, ...args: SqlArg[]): Promise<RunResult> {
    this.refuseReadOnly()
    const r = await this.query(sql, args)
    if (!this.current()) this.writes++
    return { changes: r.rowCount ?? 0 }
  }

  async insert(sql: string, ...args: SqlArg[]): Promise<number> {
    this.refuseReadOnly()
    const row = (await this.query(withReturningId(sql), args, true)).rows[0] as unknown[] | undefined
    if (!this.current()) this.writes++
    if (!row || typeof row[0] !== 'number') throw new Error('could not read the id of the inserted row')
    return row[0]
  }

  private refuseReadOnly(): void {
    if (this.current()?.root.readOnly) throw new Error('could not write to the store: the transaction is read-only')
  }

  // --- transactions -----------------------------------------------------------------------

  async tx<T>(fn: (t: Tx) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const frame = this.current()
    if (frame) return this.nested(frame, fn, options)
    if (this.closed) throw closedStore()
    if (options.queue === undefined) return this.outermost(fn, options)
    return await this.queues.run(options.queue, () => this.outermost(fn, options))
  }

  private async outermost<T>(fn: (t: Tx) => Promise<T>, options: TxOptions): Promise<T> {
    const readOnly = options.readOnly === true
    const key = options.queue
    return this.retrying(
      async () => {
        const client = await (readOnly ? this.readers : this.pool).connect()
        const root: Root = {
          client,
          readOnly,
          done: false,
          failed: null,
          savepoints: [],
          after: [],
          notes: [],
          readings: {},
          changes: 0,
          prelude: '',
          started: Promise.resolve(),
          ready: true,
          waiting: 0
        }
        let broken: Error | undefined
        // A connection the server ends while it is checked out (a restart, a failover) says so
        // through this event; unheard, it would end the process. Its query fails too.
        const lost = (err: Error) => (broken = err)
        client.on('error', lost)
        let locked = false
        const lockName = key === undefined ? undefined : `certdesk-tx:${key}`
        const lockText = lockName !== undefined && INLINE_LOCK_NAME.test(lockName) ? `'${lockName}'` : undefined
        try {
          const begin = readOnly
            ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'
            : 'BEGIN ISOLATION LEVEL SERIALIZABLE'
          if (lockName !== undefined && lockText === undefined) {
            await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockName])
            locked = true
          }
          // The queue across nodes: the same key's transactions of other nodes wait at the lock,
          // taken in a transaction of its own (ended by the COMMIT after it) before BEGIN, so the
          // transaction's snapshot is taken once the holder has committed (PostgreSQL manual,
          // 55.2.2.1 "Multiple Statements in a Simple Query": each COMMIT ends the statements
          // before it; 13.2.3: the snapshot is taken at the first statement after BEGIN). The lock
          // may be held from here on, whatever the server answers.
          root.prelude =
            lockText === undefined
              ? begin
              : ((locked = true), `SELECT pg_advisory_lock(hashtextextended(${lockText}, 0)); COMMIT; ${begin}`)
          // The lock is asked for at once; the function's first statements that only read go
          // behind it without waiting for it (`send`). A transaction without one sends its BEGIN
          // with its first statement (the snapshot is taken there either way).
          if (lockText !== undefined) void this.start(root).catch(noop)
          const result = await this.frames.run({ root, level: 0 }, () => fn(this.handle()))
          if (root.savepoints.length > 0) throw new Error('could not commit: a nested transaction was not awaited')
          if (root.prelude !== '') await this.start(root)
          await root.started
          // The notifications and COMMIT go out together. The unlock rides with COMMIT: it runs
          // once COMMIT has run (a failing statement ends the message), and the `finally` below
          // unlocks otherwise.
          const unlocking = locked && lockText !== undefined
          const notes = root.notes.map(([channel, payload]) =>
            this.send(root, (c) => c.query('SELECT pg_notify($1, $2)', [channel, payload]))
          )
          const commit = this.send(root, (c) =>
            c.query(unlocking ? `COMMIT; SELECT pg_advisory_unlock(hashtextextended(${lockText}, 0))` : 'COMMIT')
          )
          const [ended, ...noted] = await Promise.allSettled([commit, ...notes])
          if (ended.status === 'fulfilled' && unlocking) locked = false
          for (const n of noted) if (n.status === 'rejected') throw n.reason
          if (ended.status === 'rejected') throw ended.reason
          // COMMIT of a transaction a statement failed in rolls back, and says so.
          const tag = (Array.isArray(ended.value) ? ended.value[0] : ended.value) as pg.QueryResult
          if (tag.command !== 'COMMIT') throw new Error(`could not commit: the server answered ${tag.command}`)
          root.done = true
          if (!readOnly) this.writes++
          for (const f of root.after) f()
          return result
        } catch (err) {
          root.done = true
          // Nothing of the transaction reached the server: no lock, no transaction to end.
          if (root.prelude !== '' && lockText !== undefined) locked = false
          try {
            // After every statement already handed to `send`: one sent behind it would run alone.
            if (root.prelude === '') await root.started.then(noop, noop).then(() => client.query('ROLLBACK'))
          } catch (e) {
            broken = e as Error
          }
          // A function that caught the server's error and went on still ends here: what the
          // server refused first decides whether the transaction may run again.
          throw root.failed && isRetryable(root.failed) ? root.failed : err
        } finally {
          root.done = true
          if (locked && !broken) {
            // A connection that kept the lock would hold every later transaction of the key.
            await client
              .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockName ?? ''])
              .catch((e: Error) => (broken = e))
          }
          client.off('error', lost)
          client.release(broken)
        }
      },
      'save the change',
      options.budgetMs
    )
  }

  /**
   * Sends the transaction's start (Root.prelude); `Root.started` is its answer. Statements that
   * may change something wait for it (`send`), unless it is a lone BEGIN, which cannot fail in a
   * way that would leave them outside the transaction.
   */
  private start(root: Root): Promise<unknown> {
    const text = root.prelude
    root.prelude = ''
    root.ready = text.startsWith('BEGIN ')
    root.started = root.client.query(text).then(
      () => (root.ready = true),
      (err: unknown) => {
        root.failed ??= err
        throw err
      }
    )
    return root.started
  }

  /**
   * Hands a statement of the transaction to its connection, in the order of the calls. The
   * connection sends each at once, without waiting for the answers to those before it (pg's
   * pipeline mode), so statements the core starts together cost one round trip (PostgreSQL
   * manual, 55.2.4 "Pipelining").
   *
   * Behind a start that takes the queue's lock, a statement that may change something waits
   * for the start's answer, and is never sent when it failed: sent behind a lock that failed,
   * it would run outside any transaction. One that only reads, or takes an id (`early`: an id
   * is never taken back anyway, PostgreSQL manual 9.17), goes right behind the start, unless
   * others wait before it. A lone BEGIN cannot fail that way: everything goes right behind it.
   * `early` is asked only while the start is unanswered.
   */
  private send<R>(root: Root, submit: (client: pg.PoolClient) => Promise<R>, early?: () => boolean): Promise<R> {
    holdWrites(root.client)
    if (root.prelude !== '') void this.start(root).catch(noop)
    if (root.waiting === 0 && (root.ready || early?.() === true)) return submit(root.client)
    root.waiting++
    // Callbacks on one promise run in the order they were added: the statements' order.
    return root.started.then(
      () => {
        root.waiting--
        if (root.done) throw new Error('could not run a statement: its transaction has ended')
        holdWrites(root.client)
        return submit(root.client)
      },
      (err: unknown) => {
        root.waiting--
        throw err
      }
    )
  }

  /** Runs `attempt` until it succeeds, retrying serialization failures and deadlocks on timers. */
  private async retrying<T>(attempt: () => Promise<T>, verb: string, budgetMs = this.retryBudgetMs): Promise<T> {
    const started = performance.now()
    for (let n = 1; ; n++) {
      try {
        return await attempt()
      } catch (err) {
        const waited = performance.now() - started
        if (isRetryable(err)) {
          if (waited < budgetMs) {
            await sleep(Math.min(backoff(n, 2, 200), budgetMs - waited))
            continue
          }
          throw new RetryLaterError(
            `could not ${verb}: too many concurrent changes to the same records; nothing was changed, try again in ${DEFAULT_RETRY_AFTER_SECONDS} s`,
            DEFAULT_RETRY_AFTER_SECONDS
          )
        }
        throw passingFault(err, verb) ?? err
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
    const name = `sp${root.savepoints.length + 1}`
    await this.send(root, (c) => c.query(`SAVEPOINT ${name}`))
    root.savepoints.push(name)
    try {
      const result = await this.frames.run({ root, level: root.savepoints.length }, () => fn(this.handle()))
      await this.send(root, (c) => c.query(`RELEASE SAVEPOINT ${name}`))
      return result
    } catch (err) {
      // After a serialization failure the whole transaction must go; a savepoint cannot save it.
      if (!isRetryable(root.failed)) {
        await this.send(root, (c) => c.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`))
        root.failed = null
      }
      throw err
    } finally {
      root.savepoints.pop()
    }
  }

  private handle(): Tx {
    return txHandle(
      this,
      () => this.current()?.root,
      async (table) => {
        const id = await this.value<number>(`SELECT nextval(pg_get_serial_sequence('${identifier(table)}', 'id'))`)
        if (typeof id !== 'number') throw new Error(`could not take an id for ${table}: it has no identity column`)
        return id
      }
    )
  }

  // --- engine-specific operations ---------------------------------------------------------

  /**
   * The snapshot's text (xmin:xmax:in-progress ids): two readings are equal exactly when no
   * transaction committed in between, anywhere in the cluster (PostgreSQL manual, 9.27.5
   * "Transaction ID and Snapshot Information Functions").
   */
  async storeVersion(): Promise<string> {
    const r = await this.query('SELECT pg_current_snapshot()::text AS v', [], false, true)
    return String(r.rows[0]?.v ?? '')
  }

  /**
   * Outside a transaction, readings asked for while one is on its way to the server wait for
   * the next, which answers all of them in one statement: under load each GET would otherwise
   * cost a round trip of its own (a polling script's repeated GET is answered from kept bytes
   * after this one reading). Each caller is answered by a statement sent after it asked, so a
   * request sent after another node's commit always sees it.
   */
  scopeVersions(resellerId: number): Promise<ScopeVersions> {
    const root = this.current()?.root
    if (root) return this.readScopes([resellerId]).then((m) => m.get(resellerId) as ScopeVersions)
    if (this.closed) return Promise.reject(closedStore())
    return new Promise((resolve, reject) => {
      const waiting = this.scopeWaiting.get(resellerId)
      if (waiting) waiting.push({ resolve, reject })
      else this.scopeWaiting.set(resellerId, [{ resolve, reject }])
      this.scopeReading ??= this.readWaitingScopes()
    })
  }

  /**
   * Sends the waiting readings, one after another while more wait, on one reader connection
   * held for the run: each goes out in the turn the one before came back, ahead of the answers
   * that one lets go (taken from the pool, a statement waits for the pool's next tick, behind
   * every answer written in this turn, and costs the pool's timers each time).
   */
  private async readWaitingScopes(): Promise<void> {
    let client: pg.PoolClient | null = null
    // Checked out, a connection's error (the server gone) has no listener of the pool's: without
    // this one it would end the process. The statement on it fails and is answered below.
    let broken: Error | undefined
    const lost = (err: Error) => (broken = err)
    const giveBack = (err?: Error) => {
      client?.off('error', lost)
      client?.release(err ?? broken)
      client = null
      broken = undefined
    }
    try {
      while (this.scopeWaiting.size > 0) {
        const batch = this.scopeWaiting
        this.scopeWaiting = new Map()
        try {
          if (this.closed) throw closedStore()
          if (!client) {
            client = await this.readers.connect()
            client.on('error', lost)
          }
          const read = await this.readScopesNow(undefined, [...batch.keys()], client)
          for (const [id, callers] of batch) for (const c of callers) c.resolve(read.get(id) as ScopeVersions)
          // Nothing answered stays reachable from a batch V8 may have moved to the old generation.
          batch.clear()
        } catch (err) {
          // A connection that failed once is not given back for reuse.
          giveBack(err instanceof Error ? err : new Error(String(err)))
          for (const callers of batch.values())
            for (const c of callers) c.reject(passingFault(err, 'read the store') ?? err)
        }
      }
    } finally {
      giveBack()
      this.scopeReading = null
    }
  }

  /** The scope versions of `resellerIds`, from one statement (one snapshot). */
  private readScopes(resellerIds: number[]): Promise<Map<number, ScopeVersions>> {
    const root = this.current()?.root
    const reading = this.readScopesNow(root, resellerIds)
    if (root) root.reading = reading.catch(noop)
    return reading
  }

  private async readScopesNow(
    root: Root | undefined,
    resellerIds: number[],
    on?: pg.PoolClient
  ): Promise<Map<number, ScopeVersions>> {
    const scopes = resellerIds.map(resellerScope)
    const readings = root?.readings
    // Kept only when no statement that may change something was started after it.
    const changes = root?.changes
    const read = (text: string, names: string[]) =>
      on
        ? on.query({ text, values: [names], name: nameOf(text) })
        : this.query(text, [names as unknown as SqlArg], false, true)
    let gens: Map<string | null, number | null>
    let catalogue: string
    let schema = readings?.schema
    if (schema !== undefined) {
      // The schema token is the transaction's already: the generations alone.
      const r = await read(`SELECT scope, gen FROM cache_generations WHERE scope = ANY($1::text[])`, [
        ...scopes,
        'catalogue'
      ])
      gens = new Map((r.rows as { scope: string; gen: number }[]).map((x) => [x.scope, x.gen]))
      catalogue = `${gens.get('catalogue') ?? 0}.${schema}`
    } else {
      const r = await read(SCOPES_AND_SCHEMA, scopes)
      const rows = r.rows as { scope: string | null; gen: number | null; c: number | null; s: number; k: number }[]
      schema = schemaToken(rows[0])
      catalogue = `${rows[0]?.c ?? 0}.${schema}`
      gens = new Map(rows.filter((x) => x.scope !== null).map((x) => [x.scope, x.gen]))
    }
    if (readings && root?.changes === changes) {
      readings.schema = schema
      readings.catalogue = catalogue
    }
    return new Map(resellerIds.map((id, i) => [id, { reseller: String(gens.get(scopes[i]) ?? 0), catalogue }] as const))
  }

  async catalogueVersion(): Promise<string> {
    const root = this.current()?.root
    // Outside a transaction: a part of the next shared scope reading (`scopeVersions`), which
    // under load answers many requests' readings with one statement. No reseller has id 0.
    if (!root) return (await this.scopeVersions(0)).catalogue
    // A reading of the versions on its way answers this one too, unless a change came after it.
    const readings = root.readings
    if (root.reading && readings.catalogue === undefined) await root.reading
    if (readings.catalogue !== undefined) return readings.catalogue
    const changes = root.changes
    const keep = (version: string, schema: string) => {
      if (root.changes === changes) {
        readings.schema = schema
        readings.catalogue = version
      }
      return version
    }
    const known = readings.schema
    if (known !== undefined) {
      const c = await this.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'catalogue'`)
      return keep(`${c ?? 0}.${known}`, known)
    }
    const r = await this.query(
      `SELECT (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c, ${SCHEMA_AND_KEEPERS}`,
      [],
      false,
      true
    )
    const row = r.rows[0] as { c: number | null; s: number; k: number } | undefined
    const schema = schemaToken(row)
    return keep(`${row?.c ?? 0}.${schema}`, schema)
  }

  localWrites(): number {
    return this.writes
  }

  /**
   * A case-insensitive substring of the domain within the caller's orders, from the GIN
   * trigram index on (reseller_id, domain) (migration 0013's PostgreSQL part). pg_trgm answers
   * ILIKE '%term%' from the index for terms of three characters or more and re-checks each
   * candidate; a shorter term scans the reseller's orders, as on SQLite.
   */
  domainQuery(resellerId: number, term: string, status: string | undefined): DomainQuery {
    const match = this.domainMatch(term)
    const where = `o.reseller_id = ?${status ? ' AND o.status = ?' : ''} AND ${match.sql}`
    const args: SqlArg[] = [resellerId, ...(status ? [status] : []), ...match.args]
    return {
      page: { sql: `SELECT o.id FROM orders o WHERE ${where} ORDER BY o.id DESC LIMIT ? OFFSET ?`, args },
      count: { sql: `SELECT COUNT(*) AS n FROM orders o WHERE ${where}`, args }
    }
  }

  domainMatch(term: string): { sql: string; args: SqlArg[] } {
    return {
      sql: `o.domain ILIKE ? ESCAPE '\\' ${PLAN_EACH_CALL}`,
      args: [`%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]
    }
  }

  /**
   * A session-level advisory lock (PostgreSQL manual, 13.3.5 "Advisory Locks") on a connection
   * of its own: held while that connection lives, released by the server when the node dies.
   */
  async tryLeadership(name: string): Promise<Leadership | null> {
    const client = new pg.Client(this.clientConfig)
    client.on('error', () => (held = false))
    let held = false
    await client.connect()
    try {
      const r = await client.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [`certdesk:${name}`])
      held = r.rows[0]?.ok === true
    } catch (err) {
      await client.end().catch(() => undefined)
      throw err
    }
    if (!held) {
      await client.end()
      return null
    }
    this.leaderClients.add(client)
    client.on('end', () => {
      held = false
      this.leaderClients.delete(client)
    })
    return {
      get held() {
        return held
      },
      release: async () => {
        held = false
        await client.end().catch(() => undefined)
      }
    }
  }

  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    if (!/^[a-z][a-z0-9_:.-]{0,62}$/.test(channel)) throw new Error(`could not listen on ${JSON.stringify(channel)}`)
    if (!this.listener) {
      const client = new pg.Client(this.clientConfig)
      client.on('notification', (m) => this.events.emit(m.channel, m.payload ?? ''))
      client.on('error', () => undefined)
      await client.connect()
      this.listener = client
    }
    if (!this.listening.has(channel)) {
      await this.listener.query(`LISTEN "${channel}"`)
      this.listening.add(channel)
    }
    this.events.on(channel, fn)
    return async () => void this.events.off(channel, fn)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.listener?.end().catch(() => undefined)
    this.listener = null
    for (const c of this.leaderClients) await c.end().catch(() => undefined)
    if (this.readers !== this.pool) await this.readers.end()
    await this.pool.end()
  }
}

/**
 * Queue names written into a statement's text: letters, digits and `:_-` only, so the quoted
 * literal can hold no quote or backslash (anything else is sent as a value, one round trip more).
 */
const INLINE_LOCK_NAME = /^[A-Za-z0-9:_-]{1,200}$/

/**
 * The tables the keeper triggers (KEEPER_TRIGGERS) are on, as migrations 0003 and 0009 put them.
 */
export const KEEPER_TABLES: readonly string[] = [
  'products',
  'product_prices',
  'reseller_groups',
  'resellers',
  'api_keys',
  'orders',
  'invoices',
  'credit_transactions'
]

/**
 * The schema version and how many keeper triggers are in force. A writer that dropped or
 * disabled one (to bulk-load rows) writes without moving the versions, so while one is missing
 * no kept answer may be reused (../store-version.ts, `keepersComplete`). This rides on every
 * shared reading, so it is kept cheap: the tables are found by name (`to_regclass`, through the
 * search path, as every statement finds them), once per reading, and their triggers through
 * pg_trigger's index on the table. Joining pg_class by namespace cost 0.07 ms of the server's
 * time per reading, this 0.03 ms; the reading without it about 0.065 ms in all (pgbench,
 * prepared statements).
 */
const SCHEMA_AND_KEEPERS = `(SELECT version FROM ${SCHEMA_TABLE}) AS s,
  (SELECT COUNT(*) FROM pg_trigger t
    WHERE t.tgrelid = ANY(ARRAY(SELECT to_regclass(x)::oid FROM unnest('{${KEEPER_TABLES.join(',')}}'::text[]) x))
      AND t.tgname = ANY('{${KEEPER_TRIGGERS.join(',')}}'::name[])
      AND t.tgenabled <> 'D') AS k`

/** The scope versions with the catalogue's and the schema token, of the scope names in $1. */
const SCOPES_AND_SCHEMA = `SELECT g.scope, g.gen, x.c, x.s, x.k
  FROM (SELECT (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c, ${SCHEMA_AND_KEEPERS}) x
  LEFT JOIN cache_generations g ON g.scope = ANY($1::text[])`

/** The statement `nextId` takes an id with: it may go out before the start is answered (`send`). */
const NEXT_ID = /^SELECT nextval\(pg_get_serial_sequence\('[a-z_][a-z0-9_]*', 'id'\)\)$/

/**
 * Whether a statement (PostgreSQL's text) surely only reads: a SELECT or WITH that names no
 * writing statement, row lock or function with effects. Anything else, or anything in doubt (a
 * string that holds such a word), goes to the main pool, which runs everything.
 */
const READ_START = /^[\s(]*(?:SELECT|WITH)\b/i
const WRITE_WORDS =
  /\b(?:INSERT|UPDATE|DELETE|MERGE|TRUNCATE|nextval|setval|pg_notify|pg_advisory\w*|pg_try_advisory\w*)\b|\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b|\bFOR\s+KEY\s+SHARE\b/i
export function onlyReads(text: string): boolean {
  return READ_START.test(text) && !WRITE_WORDS.test(text)
}

const noop = (): void => undefined

/** Connections whose socket holds its writes until the current burst of statements is handed over. */
const holding = new WeakSet<object>()
/**
 * Statements handed to a connection in one go (one turn of the event loop's queues) leave in
 * one write to the socket (Node's `socket.cork`, nested with pg's own per statement), released
 * once the promise callbacks queued now have run: one system call and one wake-up of the
 * server's process where each statement took its own (profiled: the writes were the largest
 * part of CertDesk's time per order).
 */
function holdWrites(client: pg.PoolClient): void {
  if (holding.has(client)) return
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } })
    .connection?.stream
  if (!stream?.cork || !stream.uncork) return
  stream.cork()
  holding.add(client)
  process.nextTick(() => {
    holding.delete(client)
    stream.uncork?.()
  })
}

let unkept = 0
function schemaToken(row: { s: number; k: number } | undefined): string {
  const s = row?.s ?? 0
  return row && row.k === KEEPER_TRIGGERS.length ? String(s) : `${s}!${++unkept}`
}
