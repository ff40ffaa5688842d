/**
 * One consistent view of a store while every table of it is read in batches: a copy taken
 * while `serve` keeps writing must not hold an order without its ledger row. `Store.each`
 * gives one snapshot per query; a copy reads some fifty queries from one.
 *
 * SQLite: a read transaction on a read-only connection of its own; in WAL mode it sees the
 * store as of its first read until it ends, and holds up no writer (sqlite.org/wal.html).
 * PostgreSQL: a `REPEATABLE READ READ ONLY` transaction on a pooled connection, read through
 * cursors; its snapshot is taken at its first statement and is never refused for
 * serialization, so no batch is read twice (PostgreSQL manual, 13.2.2).
 */
import type Database from 'better-sqlite3'
import type pg from 'pg'
import { passingFault } from './postgres-errors'
import { PostgresStore, SCHEMA_TABLE } from './postgres-engine'
import type { EngineName, Store } from './port'
import { SqliteStore } from './sqlite-engine'

/** Statements here are the engine's own SQL without arguments: table and column names only. */
export interface Snapshot {
  readonly engine: EngineName
  /** The schema version the store is at. */
  version(): Promise<number>
  all<T>(sql: string): Promise<T[]>
  /** Every row of `sql` as an array of its columns, handed to `fn` in batches; answers the count. */
  each(sql: string, fn: (rows: unknown[][]) => Promise<void>, batch: number): Promise<number>
  close(): Promise<void>
}

export async function openSnapshot(store: Store): Promise<Snapshot> {
  if (store instanceof SqliteStore) return sqliteSnapshot(store.openReadOnly())
  if (store instanceof PostgresStore) return postgresSnapshot(await store.pool.connect())
  throw new Error(`could not read a snapshot of a ${store.engine} store`)
}

function sqliteSnapshot(db: Database.Database): Snapshot {
  try {
    // The CLI waits here for a checkpoint of another process at most this long; nothing else runs on this thread.
    db.pragma('busy_timeout = 5000')
    db.exec('BEGIN')
    // The snapshot starts at the first read, not at BEGIN.
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get()
  } catch (err) {
    db.close()
    throw err
  }
  return {
    engine: 'sqlite',
    version: async () => db.pragma('user_version', { simple: true }) as number,
    all: async <T>(sql: string) => db.prepare(sql).all() as T[],
    each: async (sql, fn, batch) => {
      let rows: unknown[][] = []
      let n = 0
      for (const row of db.prepare(sql).raw(true).iterate() as IterableIterator<unknown[]>) {
        rows.push(row)
        n++
        if (rows.length >= batch) {
          await fn(rows)
          rows = []
        }
      }
      if (rows.length > 0) await fn(rows)
      return n
    },
    close: async () => {
      if (db.inTransaction) db.exec('COMMIT')
      db.close()
    }
  }
}

async function postgresSnapshot(client: pg.PoolClient): Promise<Snapshot> {
  let broken: Error | undefined
  // A connection the server ends while it is checked out says so here; unheard, it ends the process.
  const lost = (err: Error) => (broken = err)
  client.on('error', lost)
  const query = async <T>(text: string, arrays = false): Promise<T[]> => {
    try {
      const r = arrays ? await client.query({ text, rowMode: 'array' }) : await client.query(text)
      return r.rows as T[]
    } catch (err) {
      throw passingFault(err, 'read the store') ?? err
    }
  }
  try {
    await query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
  } catch (err) {
    client.off('error', lost)
    client.release(err as Error)
    throw err
  }
  let cursors = 0
  return {
    engine: 'postgres',
    version: async () =>
      Number((await query<{ version: number }>(`SELECT version FROM ${SCHEMA_TABLE}`))[0]?.version ?? 0),
    all: (sql) => query(sql),
    each: async (sql, fn, batch) => {
      const cursor = `certdesk_copy_${++cursors}`
      await query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`)
      let n = 0
      for (;;) {
        const rows = await query<unknown[]>(`FETCH ${batch} FROM ${cursor}`, true)
        n += rows.length
        if (rows.length > 0) await fn(rows)
        if (rows.length < batch) break
      }
      await query(`CLOSE ${cursor}`)
      return n
    },
    close: async () => {
      try {
        await client.query('COMMIT')
      } catch (err) {
        broken ??= err as Error
      } finally {
        client.off('error', lost)
        client.release(broken)
      }
    }
  }
}
