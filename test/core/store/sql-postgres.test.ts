/**
 * The translation of the common SQL to PostgreSQL's form: placeholders numbered outside
 * strings, quoted names and comments; SQLite's meanings kept (LIKE without case, null-safe IS,
 * INSERT OR IGNORE, camelCase names); SQLite-only constructs refused by name.
 */
import { describe, expect, it } from 'vitest'
import { SqlTranslationError, toPostgres, withReturningId } from '../../../src-main/core/store/sql-postgres'

describe('the common SQL on PostgreSQL', () => {
  it('numbers placeholders, leaving a ? inside strings, names and comments alone', () => {
    expect(toPostgres(`SELECT '?', "a?b" FROM t -- why?\n WHERE a = ? AND b IN (?, ?) /* ? */`)).toEqual({
      text: `SELECT '?', "a?b" FROM t -- why?\n WHERE a = $1 AND b IN ($2, $3) /* ? */`,
      params: 3
    })
    expect(toPostgres(`SELECT 'it''s ?' WHERE x = ?`).text).toBe(`SELECT 'it''s ?' WHERE x = $1`)
  })

  it('keeps camelCase result names, case-insensitive LIKE and IFNULL', () => {
    expect(toPostgres('SELECT o.id AS orderId, o.domain AS domain FROM orders o WHERE o.domain LIKE ?').text).toBe(
      'SELECT o.id AS "orderId", o.domain AS domain FROM orders o WHERE o.domain ILIKE $1'
    )
    expect(toPostgres(`SELECT IFNULL(a, '~') FROM t`).text).toBe(`SELECT COALESCE(a, '~') FROM t`)
  })

  it('writes null-safe comparisons as IS [NOT] DISTINCT FROM, and leaves IS NULL alone', () => {
    expect(toPostgres('SELECT 1 WHERE a IS ? AND b IS NOT c AND d IS NULL AND e IS NOT NULL').text).toBe(
      'SELECT 1 WHERE a IS NOT DISTINCT FROM $1 AND b IS DISTINCT FROM c AND d IS NULL AND e IS NOT NULL'
    )
  })

  it('writes INSERT OR IGNORE as ON CONFLICT DO NOTHING, before a RETURNING', () => {
    expect(toPostgres('INSERT OR IGNORE INTO t (a) VALUES (?)').text).toBe(
      'INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING'
    )
    expect(toPostgres(withReturningId('INSERT OR IGNORE INTO t (a) VALUES (?)')).text).toBe(
      'INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id'
    )
  })

  it.each([
    [`SELECT strftime('%Y', created_at) FROM orders`, 'strftime'],
    ['INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', 'INSERT OR REPLACE'],
    ['SELECT rowid FROM orders', 'rowid'],
    ['SELECT group_concat(name) FROM t', 'group_concat'],
    ['SELECT name FROM sqlite_master', 'sqlite_master'],
    ['SELECT * FROM pragma_table_info(?)', 'pragma_table_info'],
    ['SELECT total_changes()', 'total_changes']
  ])('refuses SQLite-only %s, naming %s', (sql, construct) => {
    expect(() => toPostgres(sql)).toThrow(SqlTranslationError)
    expect(() => toPostgres(sql)).toThrow(construct)
  })
})
