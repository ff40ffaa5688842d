/**
 * Is a store's schema exactly the one CertDesk's migrations create? A store from elsewhere (a
 * backup being restored, a store about to be backed up) may carry objects CertDesk never made:
 * a trigger runs its SQL on every write CertDesk makes, a view or table can stand where code
 * expects its own, a changed index or check alters what the code relies on. Such a store is
 * refused whole rather than cleaned: what else was changed cannot be known.
 *
 * The reference is a fresh in-memory store migrated to the same version, compared entry by
 * entry in `sqlite_master` (type, name, table and the SQL text, with comments and runs of white
 * space outside quoted text ignored, as SQLite does when it parses them).
 */
import Database from 'better-sqlite3'
import type { Db } from './db'
import { migrations } from './db'

interface SchemaEntry {
  type: string
  name: string
  tbl_name: string
  sql: string | null
}

/**
 * Tables SQLite itself adds when statistics are gathered (`ANALYZE`, `PRAGMA optimize`); their
 * rows steer the query planner only. Allowed beside the reference, and only as tables.
 */
const SQLITE_STAT_TABLES = new Set(['sqlite_stat1', 'sqlite_stat2', 'sqlite_stat3', 'sqlite_stat4'])

const references = new Map<number, Map<string, SchemaEntry>>()

const keyOf = (e: Pick<SchemaEntry, 'type' | 'name'>): string => `${e.type} ${e.name}`

function entries(db: Db): Map<string, SchemaEntry> {
  const rows = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master').all() as SchemaEntry[]
  return new Map(rows.map((r) => [keyOf(r), { ...r, sql: r.sql === null ? null : normalizeSql(r.sql) }]))
}

/** `sqlite_master` of a new store at `version`, made once per version. */
function reference(version: number): Map<string, SchemaEntry> {
  let ref = references.get(version)
  if (!ref) {
    const db = new Database(':memory:')
    try {
      for (const m of migrations) {
        if (m.version > version) break
        db.exec(m.sql)
      }
      ref = entries(db)
    } finally {
      db.close()
    }
    references.set(version, ref)
  }
  return ref
}

/**
 * How the schema of `db` (at store version `version`) differs from what CertDesk creates, one
 * phrase per object ("trigger x is not one CertDesk creates"); empty when it is the same.
 */
export function schemaDifferences(db: Db, version: number): string[] {
  const want = reference(version)
  const have = entries(db)
  const out: string[] = []
  for (const [key, e] of have) {
    const ref = want.get(key)
    if (!ref) {
      if (e.type === 'table' && SQLITE_STAT_TABLES.has(e.name)) continue
      out.push(`${key} is not one CertDesk creates`)
    } else if (ref.sql !== e.sql || ref.tbl_name !== e.tbl_name)
      out.push(`${key} is not defined as CertDesk defines it`)
  }
  for (const key of want.keys()) if (!have.has(key)) out.push(`${key} is missing`)
  return out.sort()
}

/**
 * SQL text with comments dropped and white space outside quotes collapsed to one space (none
 * next to punctuation), so two spellings SQLite parses alike compare equal and nothing else does.
 */
export function normalizeSql(sql: string): string {
  let out = ''
  let pendingSpace = false
  const punct = /[(),;=<>+\-*/|.]/
  const emit = (s: string): void => {
    if (pendingSpace && out !== '' && !punct.test(out[out.length - 1]) && !punct.test(s[0])) out += ' '
    pendingSpace = false
    out += s
  }
  for (let i = 0; i < sql.length;) {
    const c = sql[i]
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      i = end === -1 ? sql.length : end + 1
      pendingSpace = true
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      i = end === -1 ? sql.length : end + 2
      pendingSpace = true
    } else if (/\s/.test(c)) {
      i++
      pendingSpace = true
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      // A quoted literal or identifier, as is (a doubled quote stays inside it).
      const close = c === '[' ? ']' : c
      let j = i + 1
      for (; j < sql.length; j++) {
        if (sql[j] === close) {
          if (close !== ']' && sql[j + 1] === close) j++
          else break
        }
      }
      emit(sql.slice(i, j + 1))
      i = j + 1
    } else {
      emit(c)
      i++
    }
  }
  return out
}
