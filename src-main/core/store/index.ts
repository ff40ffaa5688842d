/**
 * The store: one port (port.ts), two engines. SQLite in the data dir is the desk's default;
 * a `postgres://` URL puts the book in PostgreSQL for a team. Nothing outside src-main/core
 * learns which engine runs.
 */
import type { Store } from './port'
import { openPostgresStore, type PostgresOpenOptions } from './postgres-open'
import { openSqliteStore, type SqliteStoreOptions } from './sqlite-engine'

export type {
  DomainQuery,
  EngineName,
  Leadership,
  Queryable,
  Row,
  RunResult,
  ScopeVersions,
  SqlArg,
  Store,
  Tx,
  TxOptions
} from './port'
export { StoreOpenError } from './postgres-errors'
export { PostgresStore } from './postgres-engine'
export { SqliteStore } from './sqlite-engine'

export type StoreTarget =
  | { engine: 'sqlite'; dataDir: string; nativeBinding?: string; options?: SqliteStoreOptions }
  | { engine: 'postgres'; url: string; options?: PostgresOpenOptions }

/** Whether a `--database` value names a PostgreSQL server rather than a SQLite data dir. */
export const isPostgresUrl = (value: string): boolean => /^postgres(ql)?:\/\//i.test(value)

/** Opens the store and brings its schema to the newest version. */
export async function openStore(target: StoreTarget): Promise<Store> {
  if (target.engine === 'postgres') return openPostgresStore(target.url, target.options)
  return openSqliteStore(target.dataDir, target.nativeBinding, target.options)
}
