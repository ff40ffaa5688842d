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
import { backoff, Mutex, sleep } from './mutex'
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
   * writes anything. An order reads both three times; each reading is a round trip.
   */
  readings: { schema?: string; catalogue?: string }
  /**
   * Statements (no values) not yet sent that must run before the transaction's next one: the
   * queue's lock and BEGIN. They go in the same simple-query message as the next statement
   * when that one can be written without values (the scope reading an order starts with), or
   * alone before it: one round trip to the server instead of two or three.
   */
  prelude: string
  /** `TxOptions.scopesFirst` as read with the prelude, until the transaction's next statement. */
  firstScopes?: { resellerId: number; versions: ScopeVersions }
  /** The connection must not go back to the pool (`readFirstScopes`). */
  discard?: boolean
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
  /** Connections that hold FIRST_SCOPES. */
  private readonly prepared = new WeakSet<pg.PoolClient>()
  /** The queues transactions name (`TxOptions.queue`), while anyone holds or waits for one. */
  private readonly queues = new Map<string, Mutex>()

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
        root.readings.catalogue = undefined
        if (/^\s*(ALTER|DROP|CREATE)\b/i.test(sql)) root.readings.schema = undefined
      }
      try {
        await this.begin(root)
        return await run(root.client)
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
    if (frame) {
      await this.begin(frame.root)
      return fetchAll(frame.root.client)
    }
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
    let queue = this.queues.get(options.queue)
    if (!queue) this.queues.set(options.queue, (queue = new Mutex()))
    const release = await queue.acquire()
    try {
      return await this.outermost(fn, options)
    } finally {
      release()
      if (queue.queued === 0 && this.queues.get(options.queue) === queue) this.queues.delete(options.queue)
    }
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
          prelude: ''
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
          // The function runs once the lock is held; a transaction without one sends its BEGIN
          // with its first statement (the snapshot is taken there either way).
          const first = options.scopesFirst
          if (first !== undefined && Number.isSafeInteger(first)) {
            const versions = (await this.frames.run({ root, level: 0 }, () => this.readScopes([first]))).get(first)
            if (versions) root.firstScopes = { resellerId: first, versions }
          } else if (lockText !== undefined) await this.begin(root)
          const result = await this.frames.run({ root, level: 0 }, () => fn(this.handle()))
          if (root.savepoints.length > 0) throw new Error('could not commit: a nested transaction was not awaited')
          await this.begin(root)
          for (const [channel, payload] of root.notes)
            await client.query('SELECT pg_notify($1, $2)', [channel, payload])
          if (locked && lockText !== undefined) {
            // The unlock rides with COMMIT: it runs only once COMMIT has succeeded (a failing
            // statement ends the message), and the `finally` below unlocks otherwise.
            await client.query(`COMMIT; SELECT pg_advisory_unlock(hashtextextended(${lockText}, 0))`)
            locked = false
          } else await client.query('COMMIT')
          root.done = true
          if (!readOnly) this.writes++
          for (const f of root.after) f()
          return result
        } catch (err) {
          root.done = true
          // Nothing of the transaction reached the server: no lock, no transaction to end.
          if (root.prelude !== '' && lockText !== undefined) locked = false
          try {
            if (root.prelude === '') await client.query('ROLLBACK')
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
          client.release(broken ?? (root.discard ? new Error('prepared statement in doubt') : undefined))
        }
      },
      'save the change',
      options.budgetMs
    )
  }

  /**
   * Sends what the transaction has not yet sent of its start (Root.prelude), with `next` (a
   * statement without values) in the same message when given: its answer is then the last.
   */
  private async begin(root: Root, next?: string): Promise<pg.QueryResult | undefined> {
    root.firstScopes = undefined
    if (root.prelude === '') return next === undefined ? undefined : await root.client.query(next)
    const text = next === undefined ? root.prelude : `${root.prelude}; ${next}`
    root.prelude = ''
    try {
      const r = (await root.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[]
      return Array.isArray(r) ? r[r.length - 1] : r
    } catch (err) {
      root.failed ??= err
      throw err
    }
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
    await this.begin(root)
    await root.client.query(`SAVEPOINT ${name}`)
    root.savepoints.push(name)
    try {
      const result = await this.frames.run({ root, level: root.savepoints.length }, () => fn(this.handle()))
      await root.client.query(`RELEASE SAVEPOINT ${name}`)
      return result
    } catch (err) {
      // After a serialization failure the whole transaction must go; a savepoint cannot save it.
      if (!isRetryable(root.failed)) {
        await root.client.query(`ROLLBACK TO SAVEPOINT ${name}`)
        await root.client.query(`RELEASE SAVEPOINT ${name}`)
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
    if (root?.firstScopes?.resellerId === resellerId) {
      // Read with BEGIN, and no statement since: what this reading would answer.
      const { versions } = root.firstScopes
      root.firstScopes = undefined
      return Promise.resolve(versions)
    }
    if (root) return this.readScopes([resellerId]).then((m) => m.get(resellerId) as ScopeVersions)
    if (this.closed) return Promise.reject(closedStore())
    return new Promise((resolve, reject) => {
      const waiting = this.scopeWaiting.get(resellerId)
      if (waiting) waiting.push({ resolve, reject })
      else this.scopeWaiting.set(resellerId, [{ resolve, reject }])
      this.scopeReading ??= this.readWaitingScopes()
    })
  }

  private async readWaitingScopes(): Promise<void> {
    try {
      while (this.scopeWaiting.size > 0) {
        const batch = this.scopeWaiting
        this.scopeWaiting = new Map()
        try {
          const read = await this.readScopes([...batch.keys()])
          for (const [id, callers] of batch) for (const c of callers) c.resolve(read.get(id) as ScopeVersions)
        } catch (err) {
          for (const callers of batch.values()) for (const c of callers) c.reject(err)
        }
      }
    } finally {
      this.scopeReading = null
    }
  }

  /** The scope versions of `resellerIds`, from one statement (one snapshot). */
  private async readScopes(resellerIds: number[]): Promise<Map<number, ScopeVersions>> {
    const scopes = resellerIds.map(resellerScope)
    const root = this.current()?.root
    const readings = root?.readings
    // A transaction's first statement rides with its BEGIN (Root.prelude) when it needs no
    // values: the scope names are `reseller:<id>` of safe integers, written into the text.
    const inline = root !== undefined && root.prelude !== '' && resellerIds.every((id) => Number.isSafeInteger(id))
    const array = (names: string[]) => `ARRAY[${names.map((n) => `'${n}'`).join(', ')}]::text[]`
    const read = async (text: string, names: string[]): Promise<pg.QueryResult> =>
      inline
        ? ((await this.begin(root, text.replace('$1::text[]', array(names)))) as pg.QueryResult)
        : await this.query(text, [names as unknown as SqlArg], false, true)
    let gens: Map<string | null, number | null>
    let catalogue: string
    if (readings?.schema !== undefined) {
      // The schema token is the transaction's already: the generations alone.
      const r = await read(`SELECT scope, gen FROM cache_generations WHERE scope = ANY($1::text[])`, [
        ...scopes,
        'catalogue'
      ])
      gens = new Map((r.rows as { scope: string; gen: number }[]).map((x) => [x.scope, x.gen]))
      catalogue = `${gens.get('catalogue') ?? 0}.${readings.schema}`
    } else {
      const r = inline ? await this.readFirstScopes(root, array(scopes)) : await read(SCOPES_AND_SCHEMA, scopes)
      const rows = r.rows as { scope: string | null; gen: number | null; c: number | null; s: number; k: number }[]
      const schema = schemaToken(rows[0])
      if (readings) readings.schema = schema
      catalogue = `${rows[0]?.c ?? 0}.${schema}`
      gens = new Map(rows.filter((x) => x.scope !== null).map((x) => [x.scope, x.gen]))
    }
    if (readings) readings.catalogue = catalogue
    return new Map(resellerIds.map((id, i) => [id, { reseller: String(gens.get(scopes[i]) ?? 0), catalogue }] as const))
  }

  /**
   * SCOPES_AND_SCHEMA as the transaction's first statement, in the message of its start: executed
   * from FIRST_SCOPES, prepared in the same message (in a transaction of its own, ended by the
   * COMMIT after it) on a connection that has not prepared it yet. A message that fails with
   * the PREPARE in it leaves unknown whether the statement exists, so its connection is not
   * given back to the pool.
   */
  private async readFirstScopes(root: Root, scopes: string): Promise<pg.QueryResult> {
    if (this.prepared.has(root.client))
      return (await this.begin(root, `EXECUTE ${FIRST_SCOPES}(${scopes})`)) as pg.QueryResult
    root.prelude = `PREPARE ${FIRST_SCOPES}(text[]) AS ${SCOPES_AND_SCHEMA}; COMMIT; ${root.prelude}`
    root.discard = true
    const r = (await this.begin(root, `EXECUTE ${FIRST_SCOPES}(${scopes})`)) as pg.QueryResult
    root.discard = false
    this.prepared.add(root.client)
    return r
  }

  async catalogueVersion(): Promise<string> {
    const readings = this.current()?.root.readings
    if (readings?.catalogue !== undefined) return readings.catalogue
    if (readings?.schema !== undefined) {
      const c = await this.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'catalogue'`)
      return (readings.catalogue = `${c ?? 0}.${readings.schema}`)
    }
    const r = await this.query(
      `SELECT (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c, ${SCHEMA_AND_KEEPERS}`,
      [],
      false,
      true
    )
    const row = r.rows[0] as { c: number | null; s: number; k: number } | undefined
    const schema = schemaToken(row)
    const version = `${row?.c ?? 0}.${schema}`
    if (readings) {
      readings.schema = schema
      readings.catalogue = version
    }
    return version
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
 * The schema version and how many keeper triggers are in force. A writer that dropped or
 * disabled one (to bulk-load rows) writes without moving the versions, so while one is missing
 * no kept answer may be reused (../store-version.ts, `keepersComplete`). The schema's oid is a
 * sub-select, computed once: `current_schema()::regnamespace` in the condition was computed
 * for every row of pg_class and made this reading cost ten times the rest (0.6 against 0.06 ms).
 */
const SCHEMA_AND_KEEPERS = `(SELECT version FROM ${SCHEMA_TABLE}) AS s,
  (SELECT COUNT(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
      AND t.tgenabled <> 'D'
      AND t.tgname IN (${KEEPER_TRIGGERS.map((t) => `'${t}'`).join(', ')})) AS k`

/** The scope versions with the catalogue's and the schema token, of the scope names in $1. */
const SCOPES_AND_SCHEMA = `SELECT g.scope, g.gen, x.c, x.s, x.k
  FROM (SELECT (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c, ${SCHEMA_AND_KEEPERS}) x
  LEFT JOIN cache_generations g ON g.scope = ANY($1::text[])`

/**
 * SCOPES_AND_SCHEMA prepared on a connection (SQL PREPARE), for the simple-query message that
 * starts a transaction: as text there it would be planned at each call, which costs the server
 * more (measured: 170 µs against 20 µs executed) than the round trips the message saves.
 */
const FIRST_SCOPES = 'certdesk_first_scopes'

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

let unkept = 0
function schemaToken(row: { s: number; k: number } | undefined): string {
  const s = row?.s ?? 0
  return row && row.k === KEEPER_TRIGGERS.length ? String(s) : `${s}!${++unkept}`
}
