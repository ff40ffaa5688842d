import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, migrations } from '../../src-main/core/db'
import { startServer, type TestReseller, type TestServer } from '../support/server'

// GET /orders?domain= answers from migration 0013's trigram index (terms of 3+ printable ASCII
// characters) or a LIKE scan (the others). Either way a user must see exactly what a LIKE over
// every row of theirs finds, whatever the term holds, after any kind of write.
type Body = Record<string, unknown>
let s: TestServer
let a: TestReseller
let b: TestReseller

beforeAll(async () => {
  s = await startServer()
  a = s.reseller({ credit: 5000 })
  // Enough resellers that ids 1 and 11 both exist: an owner must never match a longer id.
  for (let i = 0; i < 10; i++) b = s.reseller({ credit: 5000 })
  for (const [who, domain] of [
    [a, 'www.nimbus-12.com'],
    [a, 'shop.nimbus-123.net'],
    [a, 'nimbus.example.org'],
    [a, 'or.example.com'],
    [a, 'near.example.com'],
    [b, 'www.nimbus-12.com'],
    [b, 'nimbus.example.net']
  ] as const) {
    expect((await s.request('POST', '/orders', { key: who.key, body: { product_id: 2, domain } })).status).toBe(200)
  }
})
afterAll(() => s.close())

const db = (): TestServer['service']['ctx']['db'] => s.service.ctx.db

/** What LIKE over every one of the reseller's rows finds for `term`, newest first. */
function likeRows(resellerId: number, term: string): string[] {
  const pattern = `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return (
    db()
      .prepare(`SELECT domain FROM orders WHERE reseller_id = ? AND domain LIKE ? ESCAPE '\\' ORDER BY id DESC`)
      .all(resellerId, pattern) as { domain: string }[]
  ).map((r) => r.domain)
}

async function search(who: TestReseller, term: string): Promise<{ domains: string[]; total: unknown }> {
  const res = await s.request<{ orders: Body[]; pagination: Body }>(
    'GET',
    `/orders?limit=100&domain=${encodeURIComponent(term)}`,
    { key: who.key }
  )
  expect(res.status, `GET /orders?domain=${term}: ${JSON.stringify(res.body)}`).toBe(200)
  return { domains: res.body.orders.map((o) => o.domain as string), total: res.body.pagination.total }
}

const HOSTILE = [
  'nimbus',
  'NIMBUS-12',
  'nimbus-12',
  'xample.c',
  '.c',
  'o',
  'or',
  'OR',
  'nimbus OR shop',
  'or.example',
  'NEAR(',
  'NEAR(nimbus shop)',
  'near',
  '"',
  '""',
  'nimbus"',
  '"nimbus"',
  'nim*',
  '*',
  '%',
  '%mbu%',
  '_',
  'nimbus_12',
  'nimbus%12',
  '\\',
  "'",
  "nimbus' OR '1'='1",
  '#1#',
  `#${1}`,
  'owner : "#1#"',
  'domain:nimbus',
  '^nimbus',
  '{domain}',
  'nimbus -shop',
  'NOT',
  'AND',
  ')',
  '(',
  'bücher',
  'ſhop',
  'K',
  'www',
  'example.org'
]

/** Every hostile term, for both resellers: the same rows and total as LIKE, never a 500. */
async function expectSameAsLike(): Promise<void> {
  for (const who of [a, b]) {
    for (const term of HOSTILE) {
      const want = likeRows(who.id, term)
      const got = await search(who, term)
      expect(got.domains, `reseller ${who.id}, term ${JSON.stringify(term)}`).toEqual(want)
      expect(got.total, `total for ${JSON.stringify(term)}`).toBe(want.length)
    }
  }
}

describe('GET /orders?domain= through the trigram index', () => {
  it('finds what LIKE finds, and takes every term as text, never as FTS or LIKE syntax', async () => {
    await expectSameAsLike()
    // Spot checks of what a user would expect, beside the comparison with LIKE.
    expect((await search(a, 'NIMBUS-12')).domains).toEqual(['shop.nimbus-123.net', 'www.nimbus-12.com'])
    expect((await search(a, 'nimbus OR shop')).domains).toEqual([])
    expect((await search(a, '#1#')).domains).toEqual([])
    expect((await search(b, 'nimbus')).domains).toEqual(['nimbus.example.net', 'www.nimbus-12.com'])
  })

  it('stays in step after domain edits and deletes by another writer, totals included', async () => {
    const ids = (
      db().prepare('SELECT id FROM orders WHERE reseller_id = ? ORDER BY id').all(a.id) as { id: number }[]
    ).map((r) => r.id)
    // Warm the kept totals first: they must not outlive the edits.
    expect((await search(a, 'nimbus')).total).toBe(3)
    // A repair by hand writes text the API would refuse: the index must still match it literally.
    const edit = db().prepare('UPDATE orders SET domain = ? WHERE id = ?')
    edit.run('weird"nimbus*or%_\\.example', ids[0])
    edit.run('NEAR(or "x") nimbus', ids[3])
    db().pragma('foreign_keys = OFF')
    try {
      db().prepare('DELETE FROM orders WHERE id = ?').run(ids[1])
    } finally {
      db().pragma('foreign_keys = ON')
    }
    // Moving an order to another reseller moves it out of the first one's results.
    db().prepare('UPDATE orders SET reseller_id = ? WHERE id = ?').run(b.id, ids[2])
    await expectSameAsLike()
    expect((await search(a, 'nimbus')).total).toBe(2)
    expect((await search(a, 'd"nimbus*or%_')).domains).toEqual(['weird"nimbus*or%_\\.example'])
    expect((await search(a, 'near(or "x")')).domains).toEqual(['NEAR(or "x") nimbus'])
    expect((await search(b, 'nimbus.example.org')).domains).toEqual(['nimbus.example.org'])
  })

  it('is built for orders placed before migration 0013', async () => {
    // The store as schema 12 left it: no search index, nor anything a later migration made.
    // Migrating must index the orders it holds.
    // Undone newest first, each migration's statements last to first (a column goes after its indexes).
    for (const m of migrations.filter((x) => x.version > 12).reverse()) {
      const made = m.sql.matchAll(
        /CREATE\s+(?:VIRTUAL\s+)?(TABLE|INDEX|TRIGGER)\s+(\w+)|ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)/gi
      )
      for (const [, kind, name, table, column] of [...made].reverse())
        db().exec(kind ? `DROP ${kind} IF EXISTS ${name}` : `ALTER TABLE ${table} DROP COLUMN ${column}`)
    }
    expect(db().prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'orders_search'`).pluck().get()).toBe(0)
    db().pragma('user_version = 12')
    migrate(db())
    expect(db().pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(13)
    await expectSameAsLike()
    expect((await search(b, 'nimbus')).total).toBe(3)
  })
})
