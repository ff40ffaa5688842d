/**
 * The core's statements are written once, in the SQL SQLite and PostgreSQL share, with `?`
 * placeholders. This turns one into PostgreSQL's form, mechanically and outside string
 * literals, quoted identifiers and comments:
 *   - `?` becomes `$1`, `$2`, … (PostgreSQL's extended protocol numbers its parameters);
 *   - `AS camelCase` becomes `AS "camelCase"`: PostgreSQL folds an unquoted name to lower case
 *     (PostgreSQL manual, 4.1.1 "Identifiers and Key Words"), SQLite keeps it as written;
 *   - `LIKE` becomes `ILIKE`: SQLite's LIKE ignores the case of ASCII letters
 *     (sqlite.org/lang_expr.html#like), PostgreSQL's does not;
 *   - `IFNULL(` becomes `COALESCE(`, `x IS y` / `x IS NOT y` with a value (not NULL, TRUE,
 *     FALSE) become `IS [NOT] DISTINCT FROM`, SQLite's null-safe comparison;
 *   - `INSERT OR IGNORE` becomes `INSERT … ON CONFLICT DO NOTHING`.
 * What has no mechanical counterpart (SQLite's date functions, `INSERT OR REPLACE`, `GLOB`,
 * `rowid`, pragmas) is refused with the construct named, so a statement never runs with a
 * meaning of its own on one engine.
 */

export interface TranslatedSql {
  text: string
  /** Placeholders found, so a caller can check the argument count. */
  params: number
}

/** Constructs of SQLite's dialect without a mechanical counterpart, and what to write instead. */
const REFUSED: readonly [RegExp, string][] = [
  [
    /^(strftime|julianday|datetime|unixepoch)$/i,
    "SQLite's date functions; compute the value in TypeScript from ctx.clock"
  ],
  [/^group_concat$/i, 'group_concat; aggregate in TypeScript or add an engine operation (string_agg)'],
  [/^(json_extract|json_each|json_group_array|json_object)$/i, "SQLite's JSON functions; parse in TypeScript"],
  [/^glob$/i, 'GLOB; use LIKE'],
  [/^(rowid|_rowid_|oid)$/i, 'rowid; name the id column'],
  [/^(total_changes|changes|last_insert_rowid)$/i, 'a connection counter; use Queryable.insert / RunResult'],
  [/^sqlite_(master|schema|sequence)$/i, "SQLite's catalogue; add an engine operation"],
  [/^pragma(_\w+)?$/i, 'a pragma; add an engine operation']
]

const KEEP_AFTER_IS = new Set(['NULL', 'NOT', 'TRUE', 'FALSE', 'DISTINCT'])

const cache = new Map<string, TranslatedSql>()
const MAX_CACHED = 2000

export class SqlTranslationError extends Error {
  constructor(construct: string, hint: string, sql: string) {
    super(`could not translate a statement for PostgreSQL: ${construct} is ${hint} (${sql.trim().slice(0, 120)})`)
    this.name = 'SqlTranslationError'
  }
}

/** PostgreSQL's form of `sql`, kept per text (the core's statements are a few hundred texts). */
export function toPostgres(sql: string): TranslatedSql {
  const hit = cache.get(sql)
  if (hit) return hit
  const out = translate(sql)
  if (cache.size >= MAX_CACHED) cache.clear()
  cache.set(sql, out)
  return out
}

type Token = { kind: 'word' | 'other' | 'literal' | 'param' | 'space'; text: string }

/** Splits `sql` so that strings, quoted names and comments pass through untouched. */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  const n = sql.length
  while (i < n) {
    const c = sql[i]
    const start = i
    if (c === "'" || c === '"' || c === '`') {
      // A quote inside is written twice in both dialects.
      i++
      while (i < n) {
        if (sql[i] === c) {
          if (sql[i + 1] === c) i += 2
          else {
            i++
            break
          }
        } else i++
      }
      tokens.push({ kind: 'literal', text: sql.slice(start, i) })
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++
      tokens.push({ kind: 'literal', text: sql.slice(start, i) })
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      i = end === -1 ? n : end + 2
      tokens.push({ kind: 'literal', text: sql.slice(start, i) })
    } else if (c === '$' && /[A-Za-z_$]/.test(sql[i + 1] ?? '')) {
      // A dollar-quoted body ($$ … $$, $fn$ … $fn$): PostgreSQL only, passed through whole.
      const m = /^\$([A-Za-z_]\w*)?\$/.exec(sql.slice(i))
      if (m) {
        const end = sql.indexOf(m[0], i + m[0].length)
        i = end === -1 ? n : end + m[0].length
        tokens.push({ kind: 'literal', text: sql.slice(start, i) })
      } else {
        i++
        tokens.push({ kind: 'other', text: c })
      }
    } else if (c === '?') {
      i++
      tokens.push({ kind: 'param', text: c })
    } else if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_$]/.test(sql[i])) i++
      tokens.push({ kind: 'word', text: sql.slice(start, i) })
    } else if (/\s/.test(c)) {
      while (i < n && /\s/.test(sql[i])) i++
      tokens.push({ kind: 'space', text: sql.slice(start, i) })
    } else if (/[0-9]/.test(c)) {
      while (i < n && /[0-9.eE]/.test(sql[i])) i++
      tokens.push({ kind: 'other', text: sql.slice(start, i) })
    } else {
      i++
      tokens.push({ kind: 'other', text: c })
    }
  }
  return tokens
}

function translate(sql: string): TranslatedSql {
  const tokens = tokenize(sql)
  let params = 0
  let orIgnore = false
  // The index of the next token that is not white space, from `i` on.
  const nextSolid = (i: number): number => {
    let j = i
    while (j < tokens.length && tokens[j].kind === 'space') j++
    return j
  }
  const prevSolid = (i: number): Token | undefined => {
    let j = i - 1
    while (j >= 0 && tokens[j].kind === 'space') j--
    return tokens[j]
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (t.kind === 'param') {
      t.text = `$${++params}`
      continue
    }
    if (t.kind !== 'word') continue
    const upper = t.text.toUpperCase()
    for (const [pattern, hint] of REFUSED) {
      if (pattern.test(t.text)) throw new SqlTranslationError(t.text, hint, sql)
    }
    if (upper === 'REPLACE' && prevSolid(i)?.text.toUpperCase() === 'OR') {
      throw new SqlTranslationError('INSERT OR REPLACE', 'SQLite only; write INSERT … ON CONFLICT (key) DO UPDATE', sql)
    }
    if (upper === 'IGNORE' && prevSolid(i)?.text.toUpperCase() === 'OR') {
      // INSERT OR IGNORE INTO → INSERT INTO … ON CONFLICT DO NOTHING
      let j = i - 1
      while (tokens[j].kind === 'space') j--
      for (let k = j; k <= i; k++) tokens[k].text = ''
      const after = nextSolid(i + 1)
      if (tokens[after - 1]?.kind === 'space') tokens[after - 1].text = ''
      orIgnore = true
      continue
    }
    if (upper === 'IFNULL') t.text = 'COALESCE'
    else if (upper === 'LIKE') t.text = 'ILIKE'
    else if (upper === 'AS') {
      const j = nextSolid(i + 1)
      const name = tokens[j]
      if (name?.kind === 'word' && /[A-Z]/.test(name.text) && /[a-z]/.test(name.text)) name.text = `"${name.text}"`
    } else if (upper === 'IS') {
      let j = nextSolid(i + 1)
      let negated = false
      if (tokens[j]?.kind === 'word' && tokens[j].text.toUpperCase() === 'NOT') {
        negated = true
        j = nextSolid(j + 1)
      }
      const what = tokens[j]
      if (what && !(what.kind === 'word' && KEEP_AFTER_IS.has(what.text.toUpperCase()))) {
        if (negated) {
          // "IS NOT" → "IS DISTINCT FROM": drop the NOT
          const notAt = nextSolid(i + 1)
          tokens[notAt].text = 'DISTINCT FROM'
        } else t.text = 'IS NOT DISTINCT FROM'
      }
    }
  }
  let text = tokens.map((t) => t.text).join('')
  if (orIgnore) {
    const returning = /\bRETURNING\b[^']*$/i.exec(text)
    text = returning
      ? `${text.slice(0, returning.index).trimEnd()} ON CONFLICT DO NOTHING ${returning[0]}`
      : `${text.trimEnd().replace(/;$/, '')} ON CONFLICT DO NOTHING`
  }
  return { text, params }
}

/** `sql` with `RETURNING id` added unless it already returns something (Queryable.insert). */
export function withReturningId(sql: string): string {
  return /\bRETURNING\b/i.test(sql) ? sql : `${sql.trimEnd().replace(/;$/, '')} RETURNING id`
}
