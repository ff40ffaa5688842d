/**
 * Opening the PostgreSQL store: the URL checked, a pool whose connections return rows in
 * SQLite's shapes and run with the store's session settings, one connection tried (so a wrong
 * URL, password or host is one clear line), then the schema brought up to date.
 */
import pg from 'pg'
import { migratePostgres } from './postgres-migrate'
import { PostgresStore, type PostgresStoreOptions } from './postgres-engine'
import { openFailure, parsePostgresUrl, StoreOpenError, EXIT_UNAVAILABLE } from './postgres-errors'

export interface PostgresOpenOptions extends PostgresStoreOptions {
  /** Connections in the pool that writes (default 10). */
  poolSize?: number
  /** Connections in the pool that reads outside writing transactions (default 10). */
  readerPoolSize?: number
  /** A statement running longer is cancelled and the caller hears 503 (default 30 s). */
  statementTimeoutMs?: number
  /** How long opening waits for the server (default 10 s). */
  connectTimeoutMs?: number
  /**
   * Looks at the database on the first connection, before anything is migrated or changed; a
   * StoreOpenError it throws ends the open with that line (a copy refuses a database that is
   * not empty).
   */
  inspect?: (client: pg.ClientBase) => Promise<void>
}

/** PostgreSQL type OIDs (pg_type.oid) whose text form is parsed here. */
const INT8 = 20
const NUMERIC = 1700

/**
 * int8 (COUNT(*), bigint columns: ids, cents) and numeric (SUM of bigint) as JS numbers, as
 * SQLite's INTEGER arrives. A value past 2^53 cannot be one exactly, and money must stay exact:
 * it is refused, never rounded.
 */
function parseInteger(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new RangeError(`could not read ${text} from the store: it is past 2^53`)
  return n
}
function parseNumeric(text: string): number {
  const n = Number(text)
  if (Number.isInteger(n) && !Number.isSafeInteger(n))
    throw new RangeError(`could not read ${text} from the store: it is past 2^53`)
  return n
}

export const rowTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format !== 'binary' && oid === INT8) return parseInteger
    if (format !== 'binary' && oid === NUMERIC) return parseNumeric
    return pg.types.getTypeParser(oid, format as 'text')
  }) as pg.CustomTypesConfig['getTypeParser']
}

/** Planner costs of the writing connections (clientConfig). */
const WRITER_PLANNER = '-c random_page_cost=1.1 -c cpu_tuple_cost=0.2'

/** The settings every connection of the store starts with (PostgreSQL manual, 20.11 "Client Connection Defaults"). */
export function clientConfig(url: URL, options: PostgresOpenOptions): pg.ClientConfig {
  const statementTimeout = options.statementTimeoutMs ?? 30_000
  return {
    connectionString: url.toString(),
    types: rowTypes,
    application_name: 'certdesk',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    statement_timeout: statementTimeout,
    // A node that stopped in the middle of a transaction must not hold its row locks for ever.
    idle_in_transaction_session_timeout: Math.max(60_000, statementTimeout * 2),
    // Every statement outside an explicit transaction is SERIALIZABLE too (postgres-engine.ts);
    // UTC, so a server-side timestamp never carries the server's zone. Index scans preferred even
    // on small tables: "sequential scans will always necessitate a relation-level predicate
    // lock", so a transaction that scans the few reseller or counter rows conflicts with every
    // other one that writes any of them; the manual's remedy is a lower random_page_cost and a
    // higher cpu_tuple_cost (PostgreSQL manual, 13.2.3 "Serializable Isolation Level"). Readers
    // (the reader pool) keep the defaults: they take no predicate locks.
    options: `-c default_transaction_isolation=serializable -c TimeZone=UTC ${WRITER_PLANNER}`
  }
}

export async function openPostgresStore(rawUrl: string, options: PostgresOpenOptions = {}): Promise<PostgresStore> {
  const { url, shown } = parsePostgresUrl(rawUrl)
  const config = clientConfig(url, options)
  const user = decodeURIComponent(url.username) || process.env.PGUSER || process.env.USER || ''
  const host = url.searchParams.get('host') ?? (url.hostname || 'localhost')
  const where = host.startsWith('/') ? `${host}/.s.PGSQL.${url.port || 5432}` : `${host}:${url.port || 5432}`
  // The first connection on its own, so that a failed one is closed for certain (a client that
  // failed during authentication inside a pool would keep its socket, and the server its slot,
  // until the server's authentication_timeout).
  const first = new pg.Client(config)
  first.on('error', () => undefined)
  try {
    await first.connect()
  } catch (err) {
    await first.end().catch(() => undefined)
    throw openFailure(err, shown, user, where)
  }
  try {
    await options.inspect?.(first)
    await migratePostgres(first)
  } catch (err) {
    if (err instanceof StoreOpenError) throw err
    const cause = (err as { cause?: { code?: unknown } }).cause
    if (cause?.code === '42501') throw openFailure(cause, shown, user, where)
    throw new StoreOpenError(`could not open the store at ${shown}: ${(err as Error).message}`, EXIT_UNAVAILABLE)
  } finally {
    await first.end().catch(() => undefined)
  }
  // Pipeline mode: the statements a transaction starts together go out together (PostgresStore.send).
  const pool = new pg.Pool({ ...config, pipeline: true, max: options.poolSize ?? 10 })
  // Reads outside a writing transaction: one snapshot each, read-only by the session's default
  // too, so a statement taken for a read by mistake fails instead of writing unserialized.
  const readers = new pg.Pool({
    ...config,
    pipeline: true,
    options: '-c default_transaction_isolation=repeatable\\ read -c default_transaction_read_only=on -c TimeZone=UTC',
    max: options.readerPoolSize ?? 10
  })
  // An idle connection the server closed (a restart, a failover) is dropped by the pool; the
  // next statement takes a new one. Without a listener the error would end the process.
  pool.on('error', () => undefined)
  readers.on('error', () => undefined)
  return new PostgresStore(pool, config, { ...options, readers })
}
