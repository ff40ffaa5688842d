/**
 * How far the store, or a part of it, has moved. A transport may reuse an answer computed from
 * the store alone while the numbers it was computed at are unchanged.
 */
import type { Db } from './db'

/**
 * A token that changes whenever the store changes: `data_version` moves when another
 * connection (the admin CLI, another process) commits, `total_changes()` when this one writes
 * a row, triggers included.
 */
export function storeVersion(db: Db): string {
  const row = db.prepare('SELECT (SELECT data_version FROM pragma_data_version) AS d, total_changes() AS c').get() as {
    d: number
    c: number
  }
  return `${row.d}.${row.c}`
}

/**
 * The parts of the store one reseller's answers are computed from, each as a token that moves
 * with every write to that part. Migration 0009's triggers move the numbers inside the
 * writer's own transaction, so a write by any process (the admin CLI, the scheduler, a repair
 * by hand) is seen by the next read here, and a write that touches neither part (another
 * reseller's order) moves neither token.
 */
export interface ScopeVersions {
  /** The reseller's account row, API keys, orders, invoices and ledger. */
  reseller: string
  /**
   * Products, prices and reseller groups, which every reseller's answers may name. A schema
   * change moves it too: a writer that dropped a trigger to bulk-load rows, or a migration,
   * then empties every cached answer, because what it wrote cannot be known.
   */
  catalogue: string
}

/**
 * Rows this connection has written so far, triggers included (`total_changes()`). It reads no
 * table, so it opens no read transaction: a fraction of what `scopeVersions` costs. While it is
 * unchanged, nothing this process did can have moved a scope version.
 */
export function localWrites(db: Db): number {
  return db.prepare('SELECT total_changes()').pluck().get() as number
}

/** The scope name migration 0009 gives a reseller's rows. */
export const resellerScope = (resellerId: number): string => `reseller:${resellerId}`

/**
 * The triggers that move the numbers kept answers are checked against: the catalogue's version
 * (migration 0003), the scope generations and the order versions (migration 0009).
 */
export const KEEPER_TRIGGERS: readonly string[] = [
  ...['products', 'prices'].flatMap((t) => ['insert', 'update', 'delete'].map((e) => `catalogue_version_${t}_${e}`)),
  ...['orders', 'invoices', 'ledger', 'api_keys', 'resellers', 'products', 'prices', 'groups'].flatMap((t) =>
    ['insert', 'update', 'delete'].map((e) => `cache_gen_${t}_${e}`)
  ),
  'order_versions_orders_update',
  'order_versions_orders_delete',
  ...['insert', 'update', 'delete'].map((e) => `order_versions_invoices_${e}`)
]

/** Per connection: the schema version last checked and whether every keeper trigger was there. */
const checked = new WeakMap<Db, { schema: number; complete: boolean }>()
let unkept = 0

/**
 * Whether the store, at schema version `schema`, still has every trigger in KEEPER_TRIGGERS.
 * A writer that dropped one (to bulk-load rows, or by mistake) writes without moving any
 * number, so what it changed cannot be known: while one is missing nothing may be answered
 * from a copy. Dropping or creating a trigger moves the schema version, so the check runs
 * once per version.
 */
export function keepersComplete(db: Db, schema: number): boolean {
  const last = checked.get(db)
  if (last && last.schema === schema) return last.complete
  const present = new Set(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).pluck().all() as string[])
  const complete = KEEPER_TRIGGERS.every((t) => present.has(t))
  checked.set(db, { schema, complete })
  return complete
}

/**
 * The schema part of a version token: the schema version, or, while a keeper trigger is
 * missing, a token never given out twice, so no kept answer ever matches it.
 */
function schemaToken(db: Db, schema: number): string {
  return keepersComplete(db, schema) ? String(schema) : `${schema}!${++unkept}`
}

/** The catalogue part of `scopeVersions` alone, for answers that name products but belong to no one reseller. */
export function catalogueVersion(db: Db): string {
  const row = db
    .prepare(
      `SELECT (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c,
              (SELECT schema_version FROM pragma_schema_version) AS s`
    )
    .get() as { c: number | null; s: number }
  return `${row.c ?? 0}.${schemaToken(db, row.s)}`
}

export function scopeVersions(db: Db, resellerId: number): ScopeVersions {
  // One statement, so both numbers come from one snapshot of the store.
  const row = db
    .prepare(
      `SELECT (SELECT gen FROM cache_generations WHERE scope = ?) AS r,
              (SELECT gen FROM cache_generations WHERE scope = 'catalogue') AS c,
              (SELECT schema_version FROM pragma_schema_version) AS s`
    )
    .get(resellerScope(resellerId)) as { r: number | null; c: number | null; s: number }
  return { reseller: String(row.r ?? 0), catalogue: `${row.c ?? 0}.${schemaToken(db, row.s)}` }
}
