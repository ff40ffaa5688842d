/**
 * The store port: the one interface the core talks to its store through, whichever engine is
 * behind it (SQLite through better-sqlite3 on the desk, PostgreSQL through `pg` for a team).
 * Every call returns a promise, so a store across the network never blocks the event loop.
 *
 * Statements are written once, in the SQL both engines share, with `?` placeholders; the
 * PostgreSQL engine translates them (sql-postgres.ts). What the engines do differently is not
 * hidden behind SQL but named here as operations: search, the store and scope versions, ids,
 * leadership and notifications.
 */

/** A value a statement takes. Booleans are stored as 0/1 on both engines (docs/decisions.md, "The store"). */
export type SqlArg = string | number | bigint | null | Buffer | Uint8Array

export type Row = Record<string, unknown>

/** Rows per batch of `Store.each` unless the caller says. */
export const EACH_BATCH = 500

export interface RunResult {
  /** Rows the statement itself changed (not those its triggers did). */
  changes: number
}

/** Statements, run in the current transaction when one is open (see `Store.tx`), else on their own. */
export interface Queryable {
  /** The first row, or undefined. */
  get<T = Row>(sql: string, ...args: SqlArg[]): Promise<T | undefined>
  all<T = Row>(sql: string, ...args: SqlArg[]): Promise<T[]>
  /** The first column of the first row, or undefined when there is no row. */
  value<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T | undefined>
  /** The first column of every row. */
  column<T = unknown>(sql: string, ...args: SqlArg[]): Promise<T[]>
  /**
   * Every row as an array of its columns, in the order the SELECT names them: about half the
   * cost of building row objects, for wide rows read by the page (orders).
   */
  arrays<T extends unknown[] = unknown[]>(sql: string, ...args: SqlArg[]): Promise<T[]>
  run(sql: string, ...args: SqlArg[]): Promise<RunResult>
  /**
   * An INSERT into a table with an `id` key that the engine assigns, written without a
   * RETURNING clause; answers that id (SQLite's rowid, PostgreSQL's identity through an added
   * `RETURNING id`). A statement that returns rows (`… RETURNING x`) goes through `get`/`all`.
   */
  insert(sql: string, ...args: SqlArg[]): Promise<number>
}

/** What a transaction's function is handed: its statements, and what happens after it. */
export interface Tx extends Queryable {
  /**
   * Runs `fn` once the outermost transaction has committed (never when it rolls back). A
   * transaction's function may run more than once (PostgreSQL retries a serialization
   * failure), so work that must not repeat or must not happen for a rolled-back change (a
   * keychain write, a message to a listener, a cache update) goes here.
   */
  afterCommit(fn: () => void): void
  /** Sends `payload` on `channel` to every listener of this store (any process) after commit. */
  notify(channel: string, payload: string): void
  /**
   * The id the next row of `table` gets, for rows whose number is shown before the insert
   * (ORD-2026-000042): `MAX(id) + 1` under SQLite's write lock, the table's identity sequence
   * on PostgreSQL (unique across connections; a rolled-back transaction leaves a gap).
   */
  nextId(table: string): Promise<number>
}

export interface TxOptions {
  /**
   * Reads only. SQLite: a snapshot on the read connection, never waiting for a writer;
   * PostgreSQL: `REPEATABLE READ READ ONLY` on a reader connection, one snapshot that is never
   * refused for serialization. A write inside it is refused.
   */
  readOnly?: boolean
  /**
   * How long this transaction may wait for another process's write lock (SQLite) or keep
   * retrying serialization failures (PostgreSQL) before the caller hears 503; the store's
   * default otherwise. Background work nobody waits for (a scheduler pass) may wait longer.
   */
  budgetMs?: number
  /**
   * Transactions that name the same queue run one after another, in this process and across
   * every node of a shared store. They write the same rows (one reseller's balance, ledger
   * tallies and cache scope): side by side on PostgreSQL, all but one of them would be refused
   * for serialization at their first shared write and run again, over and over under load;
   * queued, each waits its turn instead (in-process first, so waiting transactions never hold
   * more than one of the pool's connections; then on an advisory lock other nodes share).
   * SQLite runs one writer at a time anyway. Ignored by a nested transaction, which runs in its
   * parent's turn.
   */
  queue?: string
  /**
   * SQLite: this transaction may share its COMMIT with the ones that follow it (a group commit,
   * sqlite-shared-commit.ts). When it ends it leaves the transaction open; each that follows runs
   * in a savepoint of it, so a refused one is undone alone, and one COMMIT serves them all, at
   * the end of the first turn of the event loop in which none joined. No caller hears its answer
   * before that COMMIT, so an answered write is a committed one, and a crash loses only
   * unanswered ones. The COMMIT (the WAL write) is most of a small write's cost: writes that
   * arrive together pay for it once. Only for a function that awaits nothing but its own
   * statements: one that waited for another transaction's answer would wait for itself.
   * PostgreSQL commits each transaction on its own connection and ignores it.
   */
  shareCommit?: boolean
}

/** One reading of the scope versions (see ../store-version.ts for what each part means). */
export interface ScopeVersions {
  reseller: string
  catalogue: string
}

/** GET /orders?domain=: the page's ids (newest first) and the query that counts all of them. */
export interface DomainQuery {
  page: { sql: string; args: SqlArg[] }
  count: { sql: string; args: SqlArg[] }
}

/** Held leadership for one job (one scheduler pass across all nodes at a time). */
export interface Leadership {
  /** False once the lock is gone (the connection that held it was lost). */
  readonly held: boolean
  release(): Promise<void>
}

export type EngineName = 'sqlite' | 'postgres'

export interface Store extends Queryable {
  readonly engine: EngineName
  /**
   * Runs `fn` as one transaction and answers what it returns; a throw rolls everything back.
   * Inside `fn`, the store's own statements (and any nested `tx`, as a savepoint) belong to
   * it, so a helper that takes the store needs no transaction handle. SQLite: one writer at a
   * time (`BEGIN IMMEDIATE`), waiting on timers, never blocking, for another process's lock.
   * PostgreSQL: `SERIALIZABLE`, re-run on a serialization failure or deadlock; `fn` must
   * therefore touch nothing but the store before it returns (see `Tx.afterCommit`).
   */
  tx<T>(fn: (t: Tx) => Promise<T>, options?: TxOptions): Promise<T>
  /**
   * Every row of a query, handed to `fn` in batches of at most `batch`, all from one snapshot,
   * without holding the whole result in memory (a CSV export of a million orders): SQLite
   * iterates on a read connection of its own, PostgreSQL fetches from a cursor in a
   * `REPEATABLE READ READ ONLY` transaction. Inside a transaction, its snapshot. Answers the
   * number of rows. `fn` is called once per batch, never again for the same rows.
   */
  each<T = Row>(sql: string, args: SqlArg[], fn: (rows: T[]) => Promise<void> | void, batch?: number): Promise<number>
  /**
   * A list of values as one argument: `x ${sql}` is `x IN (list)`, or with `not` `x NOT IN
   * (list)`, for a list of any length under one prepared statement. SQLite reads the list as
   * JSON (`IN (SELECT value FROM json_each(?))`), PostgreSQL as an array (`= ANY(?)`, `<> ALL(?)`,
   * the array's type taken from the column it is compared with).
   */
  inList(values: readonly (number | string)[], not?: boolean): { sql: string; arg: SqlArg }
  /** Whether the caller runs inside a transaction of this store. */
  inTransaction(): boolean

  // Engine-specific operations, side by side in each engine.

  /** A token that moves whenever anything in the store changes, by any process. */
  storeVersion(): Promise<string>
  /** The versions of the parts of the store one reseller's answers are computed from. */
  scopeVersions(resellerId: number): Promise<ScopeVersions>
  /** The catalogue part of `scopeVersions` alone. */
  catalogueVersion(): Promise<string>
  /** Write transactions this process has committed: a counter, no query. */
  localWrites(): number
  /** GET /orders?domain= over the engine's substring index (FTS5 trigram / pg_trgm). */
  domainQuery(resellerId: number, term: string, status: string | undefined): DomainQuery
  /**
   * A condition on the orders row `o`: its domain holds `term` (lower case) as a substring, over
   * the same index as `domainQuery`, for lists that combine it with other filters.
   */
  domainMatch(term: string): { sql: string; args: SqlArg[] }
  /**
   * Leadership for `name`, or null while another holds it: across every node on PostgreSQL
   * (an advisory lock, freed by the server when the holder's connection dies); within this
   * process on SQLite (one desk, one scheduling process).
   */
  tryLeadership(name: string): Promise<Leadership | null>
  /** Calls `fn` for every notification on `channel` (sent by `Tx.notify`); answers the unsubscribe. */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>
  close(): Promise<void>
}
