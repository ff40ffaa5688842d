/**
 * Which tables a copy of the store carries, their columns, and the order they are loaded in.
 *
 * The schema is read from a fresh in-memory SQLite store migrated by this CertDesk: the
 * migrations are the one source of the schema on both engines (PostgreSQL's is translated from
 * them, with the same tables, columns, keys and trigger names: test/core/store/schema-parity),
 * and the copy refuses any store at another version, so both ends have exactly these tables.
 *
 * The order: a table after every table it references (its foreign keys are checked row by row
 * on both engines, and PostgreSQL's cannot be deferred). The tables' own triggers are off while
 * the rows go in (copy.ts, `withoutTriggers`): what they keep is copied like every other row,
 * and a trigger that writes a table loaded earlier would change a row already copied. A column
 * that references its own table (a certificate replaced by a later one) is loaded empty and set
 * once the whole table is in.
 */
import Database from 'better-sqlite3'
import { migrate } from './db'
import { COUNTERPARTS } from './counterparts'

export interface CopyTable {
  name: string
  columns: string[]
  /** Columns that reference this same table: loaded as NULL, then set by `id`. */
  selfReferences: string[]
  /** Whether rows have an `id` (read in id order, and identity sequences to move on PostgreSQL). */
  hasId: boolean
  /** Filled by triggers of other tables (tallies, cache generations): it follows their rows. */
  keptByTriggers: boolean
}

export interface CopyTrigger {
  name: string
  /** Its CREATE TRIGGER statement as this CertDesk's migrations leave it (SQLite's dialect). */
  sql: string
}

export interface CopyPlan {
  /** The schema version both ends must be at. */
  version: number
  /** In load order. */
  tables: CopyTable[]
  /** The triggers a SQLite store has, but the ones that keep SQLite's own search index. */
  triggers: CopyTrigger[]
}

let cached: CopyPlan | undefined

/** SQLite's triggers that keep its own search index (not a table a copy carries): they stay on. */
const SEARCH_INDEX_TRIGGERS = new Set(COUNTERPARTS.filter((c) => c.sqlite.kind === 'trigger').map((c) => c.sqlite.name))

/** Trigger statements that add rows to a table: INSERT [OR x] INTO t, REPLACE INTO t. */
const FILLS = /\b(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO\s+["`]?(\w+)/gi

export function copyPlan(nativeBinding?: string): CopyPlan {
  if (cached) return cached
  const db = new Database(':memory:', nativeBinding ? { nativeBinding } : {})
  try {
    migrate(db)
    cached = planOf(db)
  } finally {
    db.close()
  }
  return cached
}

function planOf(db: Database.Database): CopyPlan {
  const master = db.prepare(`SELECT type, name, tbl_name AS tbl, sql FROM sqlite_master ORDER BY rowid`).all() as {
    type: string
    name: string
    tbl: string
    sql: string | null
  }[]
  const virtual = master
    .filter((m) => m.type === 'table' && /^CREATE VIRTUAL TABLE/i.test(m.sql ?? ''))
    .map((m) => m.name)
  // A virtual table (FTS5) keeps its data in shadow tables named after it; both are SQLite's
  // own index, rebuilt by its triggers on the target (PostgreSQL has a GIN index instead).
  const engineOwn = (name: string) =>
    name.startsWith('sqlite_') || virtual.some((v) => name === v || name.startsWith(`${v}_`))
  const names = master.filter((m) => m.type === 'table' && !engineOwn(m.name)).map((m) => m.name)
  const known = new Set(names)

  const after = new Map<string, Set<string>>(names.map((n) => [n, new Set()]))
  const tables = new Map<string, CopyTable>()
  for (const name of names) {
    const columns = (
      db.prepare(`SELECT name FROM pragma_table_info(?) ORDER BY cid`).all(name) as { name: string }[]
    ).map((c) => c.name)
    const selfReferences: string[] = []
    for (const fk of db.prepare(`SELECT "table" AS ref, "from" AS col FROM pragma_foreign_key_list(?)`).all(name) as {
      ref: string
      col: string
    }[]) {
      if (fk.ref === name) selfReferences.push(fk.col)
      else if (known.has(fk.ref)) after.get(name)?.add(fk.ref)
    }
    tables.set(name, { name, columns, selfReferences, hasId: columns.includes('id'), keptByTriggers: false })
  }
  const triggers: CopyTrigger[] = []
  for (const t of master.filter((m) => m.type === 'trigger')) {
    const body = (t.sql ?? '').replace(/^[\s\S]*?\bBEGIN\b/i, '')
    for (const m of body.matchAll(FILLS)) {
      const kept = m[1] !== t.tbl ? tables.get(m[1]) : undefined
      if (kept) kept.keptByTriggers = true
    }
    if (!SEARCH_INDEX_TRIGGERS.has(t.name)) triggers.push({ name: t.name, sql: t.sql ?? '' })
  }

  // Kahn's algorithm, taking tables in the order the migrations created them when free to choose.
  const order: CopyTable[] = []
  const placed = new Set<string>()
  while (order.length < names.length) {
    const next = names.find((n) => !placed.has(n) && [...(after.get(n) ?? [])].every((d) => placed.has(d)))
    if (!next) {
      const left = names.filter((n) => !placed.has(n))
      throw new Error(`could not order the tables for a copy: ${left.join(', ')} depend on each other in a cycle`)
    }
    placed.add(next)
    order.push(tables.get(next) as CopyTable)
  }
  const version = db.pragma('user_version', { simple: true }) as number
  return { version, tables: order, triggers }
}
