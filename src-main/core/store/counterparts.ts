/**
 * The schema objects one engine has and the other answers differently, each named with its
 * counterpart and why. Every other table, column, index, unique key, foreign key and trigger
 * of the SQLite schema exists under the same name on PostgreSQL
 * (test/core/store/schema-parity.test.ts checks both).
 */
export interface Counterpart {
  sqlite: { kind: 'table' | 'trigger'; name: string }
  postgres: { kind: 'index' | 'none'; name: string }
  why: string
}

const SEARCH_INDEX = 'a GIN index on (reseller_id, domain gin_trgm_ops) that PostgreSQL keeps by itself'

export const COUNTERPARTS: readonly Counterpart[] = [
  {
    sqlite: { kind: 'table', name: 'orders_search' },
    postgres: { kind: 'index', name: 'orders_search' },
    why: `FTS5 trigram table (migration 0013) ↔ ${SEARCH_INDEX}`
  },
  ...['insert', 'update', 'delete'].map((e): Counterpart => ({
    sqlite: { kind: 'trigger', name: `orders_search_${e}` },
    postgres: { kind: 'index', name: 'orders_search' },
    why: `keeps the FTS5 table in step with orders ↔ ${SEARCH_INDEX}`
  }))
]

/** Tables only PostgreSQL has. */
export const POSTGRES_ONLY_TABLES: Record<string, string> = {
  certdesk_schema: 'the schema version (SQLite keeps it in PRAGMA user_version)'
}
