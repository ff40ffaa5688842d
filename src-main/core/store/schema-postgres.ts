/**
 * The schema on PostgreSQL, from the same numbered migrations SQLite applies
 * (core/migrations/NNNN-name.sql, the one source of truth), in two parts per number:
 *
 *   1. the common part: every statement of the SQLite file that means the same on both
 *      engines, translated mechanically here (column types, keys, STRICT and WITHOUT ROWID
 *      dropped, IFNULL → COALESCE);
 *   2. the engine-specific part, written by hand beside it in
 *      core/migrations/postgres/NNNN-name.sql: the plpgsql counterparts of SQLite's triggers
 *      (tallies, cache scopes, order versions), pg_trgm where SQLite has an FTS5 trigram table.
 *
 * The statements of the SQLite file that only SQLite understands (CREATE/DROP TRIGGER, FTS5
 * virtual tables and every statement on them, generated columns and the statements of the same
 * migration that name them) are left out of part 1 by kind; that each has its counterpart in
 * part 2 is what test/core/store/schema-parity.test.ts checks, object by object.
 */

/** How a SQLite column type is written on PostgreSQL (STRICT tables allow only these). */
const TYPES: Record<string, string> = {
  INTEGER: 'bigint',
  INT: 'bigint',
  REAL: 'double precision',
  // "C": byte order, as SQLite's BINARY collation compares, whatever the database's locale
  // (ORDER BY domain, the order_number prefix range and the '~' sort key depend on it).
  TEXT: 'text COLLATE "C"',
  BLOB: 'bytea',
  ANY: 'text'
}

export interface Statement {
  /** The statement as written, without its final semicolon. */
  sql: string
  /** Its first words, upper-cased: `CREATE TABLE`, `CREATE TRIGGER`, `INSERT` … */
  kind: string
}

/** Splits a migration into statements, keeping a trigger's BEGIN … END body whole. */
export function splitStatements(script: string): Statement[] {
  const out: Statement[] = []
  let start = 0
  let depth = 0
  let i = 0
  const n = script.length
  const words = (s: string) =>
    s
      .replace(/--[^\n]*/g, ' ')
      .trim()
      .split(/\s+/)
      .slice(0, 3)
      .join(' ')
      .toUpperCase()
  while (i < n) {
    const c = script[i]
    if (c === "'" || c === '"') {
      const q = c
      i++
      while (i < n && !(script[i] === q && script[i + 1] !== q)) i += script[i] === q ? 2 : 1
      i++
    } else if (c === '-' && script[i + 1] === '-') {
      while (i < n && script[i] !== '\n') i++
    } else if (c === '$' && script[i + 1] === '$') {
      const end = script.indexOf('$$', i + 2)
      i = end === -1 ? n : end + 2
    } else if (/[A-Za-z]/.test(c) && !/[A-Za-z0-9_]/.test(script[i - 1] ?? '')) {
      let j = i
      while (j < n && /[A-Za-z0-9_]/.test(script[j])) j++
      const w = script.slice(i, j).toUpperCase()
      // Only a trigger body nests statements (CREATE TRIGGER … BEGIN …; …; END).
      if (w === 'BEGIN' && /^CREATE (TEMP |TEMPORARY )?TRIGGER/.test(words(script.slice(start, i)))) depth++
      // CASE … END inside a body closes with the same word as the body.
      else if (w === 'CASE' && depth > 0) depth++
      else if (w === 'END' && depth > 0) depth--
      i = j
    } else if (c === ';' && depth === 0) {
      const sql = script.slice(start, i).trim()
      if (stripComments(sql)) out.push({ sql, kind: kindOf(sql) })
      start = ++i
    } else i++
  }
  const rest = script.slice(start).trim()
  if (stripComments(rest)) out.push({ sql: rest, kind: kindOf(rest) })
  return out
}

const stripComments = (sql: string): string => sql.replace(/--[^\n]*/g, '').trim()

function kindOf(sql: string): string {
  const w = stripComments(sql)
    .split(/\s+/)
    .map((x) => x.toUpperCase())
  if (w[0] === 'CREATE' && (w[1] === 'UNIQUE' || w[1] === 'VIRTUAL')) return `CREATE ${w[1]} ${w[2]}`
  if (w[0] === 'CREATE' || w[0] === 'DROP' || w[0] === 'ALTER') return `${w[0]} ${w[1]}`
  return w[0]
}

/**
 * What the translation remembers across migrations: SQLite's virtual tables (FTS5), whose
 * every later statement is SQLite's alone.
 */
export interface TranslationState {
  virtualTables: Set<string>
}

export const newTranslationState = (): TranslationState => ({ virtualTables: new Set() })

/** `ALTER TABLE t ADD [COLUMN] name TYPE [GENERATED ALWAYS] AS (…)`: the column's name. */
const GENERATED_COLUMN = /\bADD\s+(?:COLUMN\s+)?(\w+)\s+\w+\s+(?:GENERATED\s+ALWAYS\s+)?AS\s*\(/i

/** The common part of one SQLite migration, as PostgreSQL statements, and what was left out. */
export function translateMigration(
  script: string,
  state: TranslationState
): { statements: string[]; sqliteOnly: Statement[] } {
  const statements: string[] = []
  const sqliteOnly: Statement[] = []
  // Generated columns this migration adds. Their expression is SQLite's (MIN of two values, a
  // comparison as 0/1) and SQLite's VIRTUAL kind does not exist on PostgreSQL, which has only
  // STORED ones (PostgreSQL manual, 5.4 "Generated Columns"): part 2 adds each in PostgreSQL's
  // words, after part 1, so a statement of this migration that names one waits for part 2 too.
  const generated = new Set<string>()
  const namesGenerated = (body: string): boolean => [...generated].some((c) => new RegExp(`\\b${c}\\b`, 'i').test(body))
  for (const st of splitStatements(script)) {
    const body = stripComments(st.sql)
    const column = st.kind === 'ALTER TABLE' ? GENERATED_COLUMN.exec(body)?.[1] : undefined
    if (column) {
      generated.add(column.toLowerCase())
      sqliteOnly.push(st)
      continue
    }
    if (namesGenerated(body)) {
      sqliteOnly.push(st)
      continue
    }
    if (st.kind === 'CREATE VIRTUAL TABLE') {
      const name = /^CREATE\s+VIRTUAL\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i.exec(body)?.[1]
      if (name) state.virtualTables.add(name.toLowerCase())
      sqliteOnly.push(st)
      continue
    }
    const touchesVirtual = [...state.virtualTables].some((t) => new RegExp(`\\b${t}\\b`, 'i').test(body))
    if (st.kind === 'CREATE TRIGGER' || st.kind === 'DROP TRIGGER' || touchesVirtual) {
      sqliteOnly.push(st)
      continue
    }
    statements.push(translateStatement(st.kind, body))
  }
  return { statements, sqliteOnly }
}

function translateStatement(kind: string, sql: string): string {
  let out = sql.replace(/\bIFNULL\s*\(/gi, 'COALESCE(')
  if (kind === 'CREATE TABLE') out = translateCreateTable(out)
  else if (kind === 'ALTER TABLE') {
    out = out.replace(/(\bADD\s+COLUMN\s+\w+\s+)(\w+)/i, (_m, head: string, type: string) => head + mapType(type))
  } else if (/^CREATE (UNIQUE )?INDEX/.test(kind)) {
    // An expression in an index's column list needs parentheses on PostgreSQL unless it is a
    // plain function call (PostgreSQL manual, CREATE INDEX); COALESCE is a construct, not one.
    out = out.replace(/,\s*(COALESCE\([^()]*\))/gi, ', ($1)')
  }
  return out
}

function mapType(type: string): string {
  const mapped = TYPES[type.toUpperCase()]
  if (!mapped) throw new Error(`could not translate the column type ${type} for PostgreSQL`)
  return mapped
}

/** CREATE TABLE: types mapped, `id INTEGER PRIMARY KEY` an identity, SQLite's table options dropped. */
function translateCreateTable(sql: string): string {
  const open = sql.indexOf('(')
  const close = matchingParen(sql, open)
  const head = sql.slice(0, open)
  const parts = splitTopLevel(sql.slice(open + 1, close))
  const columns = parts.map((part) => {
    const m = /^(\s*)(\w+)(\s+)(\w+)(.*)$/s.exec(part)
    if (!m || /^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)$/i.test(m[2])) return part
    const [, lead, name, gap, type, rest] = m
    if (/^\s*PRIMARY\s+KEY\b/i.test(rest) && /^INTEGER$/i.test(type) && name.toLowerCase() === 'id') {
      // SQLite's rowid alias: the engine assigns it. BY DEFAULT still takes an explicit id
      // (a book copied from another store keeps its numbers; sequences are moved past them).
      return `${lead}${name}${gap}bigint GENERATED BY DEFAULT AS IDENTITY${rest}`
    }
    return `${lead}${name}${gap}${mapType(type)}${rest}`
  })
  // STRICT and WITHOUT ROWID have no meaning on PostgreSQL (its columns are always typed).
  return `${head}(${columns.join(',')})`
}

function matchingParen(s: string, open: number): number {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    const c = s[i]
    if (c === "'") {
      i = s.indexOf("'", i + 1)
      continue
    }
    if (c === '(') depth++
    else if (c === ')' && --depth === 0) return i
  }
  throw new Error('could not translate a CREATE TABLE for PostgreSQL: unbalanced parentheses')
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === "'") {
      i = s.indexOf("'", i + 1)
      continue
    }
    if (c === '-' && s[i + 1] === '-') {
      i = s.indexOf('\n', i)
      if (i === -1) break
      continue
    }
    if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i))
      start = i + 1
    }
  }
  parts.push(s.slice(start))
  return parts
}
