/**
 * Prepared statements kept per connection. better-sqlite3 prepares anew on every `prepare`,
 * and preparing cost more than running most of CertDesk's queries (profiled: 12% of a GET
 * /products). Callers keep writing `db.prepare(sql)`; the same text gets the same statement.
 */
import type Database from 'better-sqlite3'

type Statement = Database.Statement<unknown[]>

/** Distinct SQL texts kept at most; a few lists build their text from the filters they get. */
const MAX_STATEMENTS = 500

export function installStatementCache(db: Database.Database): void {
  const prepare = db.prepare.bind(db) as (sql: string) => Statement
  const kept = new Map<string, Statement>()
  db.prepare = ((sql: string): Statement => {
    const hit = kept.get(sql)
    // A statement still stepping through `iterate()` cannot run twice at once: give a fresh one.
    if (hit && !hit.busy) {
      // Modes set by an earlier caller must not leak into this one.
      if (hit.reader) hit.pluck(false).expand(false).raw(false)
      return hit
    }
    const stmt = prepare(sql)
    if (kept.size >= MAX_STATEMENTS) kept.clear()
    kept.set(sql, stmt)
    return stmt
  }) as Database.Database['prepare']
}
