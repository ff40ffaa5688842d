/**
 * The audit log is append-only on PostgreSQL as on SQLite: on a database migrated the way a
 * team server's is, the store itself refuses to change, remove or replace an entry or an
 * outcome, from any connection, with the words SQLite uses.
 */
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../support/postgres'

let database: TestDatabase
let client: pg.Client

beforeAll(async () => {
  database = await createTestDatabase()
  client = new pg.Client({ connectionString: database.tcpUrl })
  await client.connect()
  await client.query(
    `INSERT INTO audit_log (at, actor, source, action, targets) VALUES
       ('2026-11-21 10:00:00', 'olga', '192.0.2.1', 'topUp', '{"reseller id":1}'),
       ('2026-11-21 10:00:05', 'otto', '192.0.2.2', 'createOrder', '{}')`
  )
  await client.query(
    `INSERT INTO audit_outcomes (audit_id, outcome, status, finished_at)
       SELECT id, 'denied', 403, at FROM audit_log WHERE actor = 'olga'`
  )
})

afterAll(async () => {
  await client?.end()
  await database?.drop()
})

it('refuses UPDATE, DELETE, an upsert and a second row of a key, and keeps every row as it was', async () => {
  const before = (
    await client.query('SELECT * FROM audit_log a LEFT JOIN audit_outcomes o ON o.audit_id = a.id ORDER BY a.id')
  ).rows
  const attempts: [string, RegExp][] = [
    ["UPDATE audit_log SET actor = 'someone else'", /an entry cannot be changed/],
    ['DELETE FROM audit_log', /an entry cannot be removed/],
    ["UPDATE audit_outcomes SET outcome = 'ok'", /an outcome cannot be changed/],
    ['DELETE FROM audit_outcomes', /an outcome cannot be removed/],
    [
      `INSERT INTO audit_outcomes (audit_id, outcome, status, finished_at) SELECT audit_id, 'ok', 200, finished_at
         FROM audit_outcomes ON CONFLICT (audit_id) DO UPDATE SET outcome = 'ok'`,
      /an outcome cannot be replaced/
    ],
    [
      `INSERT INTO audit_log (id, at, actor, source, action, targets) SELECT id, at, 'x', source, action, targets
         FROM audit_log ORDER BY id LIMIT 1 ON CONFLICT (id) DO UPDATE SET actor = 'x'`,
      /an entry cannot be replaced/
    ]
  ]
  for (const [sql, why] of attempts) {
    const err = await client.query(sql).then(
      () => null,
      (e: Error & { code?: string }) => e
    )
    expect(err?.message, sql).toMatch(/^the audit log is append-only: /)
    expect(err?.message, sql).toMatch(why)
    expect(err?.code, sql).toBe('23001')
  }
  const after = (
    await client.query('SELECT * FROM audit_log a LEFT JOIN audit_outcomes o ON o.audit_id = a.id ORDER BY a.id')
  ).rows
  expect(after).toEqual(before)
  // New entries still go in.
  await client.query(
    `INSERT INTO audit_log (at, actor, source, action, targets) VALUES ('2026-11-21 10:01:00', 'olga', 'x', 'signOut', '{}')`
  )
  expect((await client.query('SELECT COUNT(*)::int AS n FROM audit_log')).rows[0].n).toBe(3)
})
