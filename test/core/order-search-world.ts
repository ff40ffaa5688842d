/**
 * What the order-search tests share: a server with two resellers' orders whose domains hold
 * the words hostile terms aim at, and the comparison of GET /orders?domain= with a LIKE over
 * every row of the reseller's.
 */
import { expect } from 'vitest'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>

export interface SearchWorld {
  s: TestServer
  a: TestReseller
  b: TestReseller
}

export async function startSearchWorld(): Promise<SearchWorld> {
  const s = await startServer()
  const a = await s.reseller({ credit: 5000 })
  let b = a
  // Enough resellers that ids 1 and 11 both exist: an owner must never match a longer id.
  for (let i = 0; i < 10; i++) b = await s.reseller({ credit: 5000 })
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
  return { s, a, b }
}

/** What LIKE over every one of the reseller's rows finds for `term`, newest first. */
export async function likeRows(s: TestServer, resellerId: number, term: string): Promise<string[]> {
  const pattern = `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return await s.service.ctx.store.column<string>(
    `SELECT domain FROM orders WHERE reseller_id = ? AND domain LIKE ? ESCAPE '\\' ORDER BY id DESC`,
    resellerId,
    pattern
  )
}

export async function search(
  s: TestServer,
  who: TestReseller,
  term: string
): Promise<{ domains: string[]; total: unknown }> {
  const res = await s.request<{ orders: Body[]; pagination: Body }>(
    'GET',
    `/orders?limit=100&domain=${encodeURIComponent(term)}`,
    { key: who.key }
  )
  expect(res.status, `GET /orders?domain=${term}: ${JSON.stringify(res.body)}`).toBe(200)
  return { domains: res.body.orders.map((o) => o.domain as string), total: res.body.pagination.total }
}

export const HOSTILE = [
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
export async function expectSameAsLike({ s, a, b }: SearchWorld): Promise<void> {
  for (const who of [a, b]) {
    for (const term of HOSTILE) {
      const want = await likeRows(s, who.id, term)
      const got = await search(s, who, term)
      expect(got.domains, `reseller ${who.id}, term ${JSON.stringify(term)}`).toEqual(want)
      expect(got.total, `total for ${JSON.stringify(term)}`).toBe(want.length)
    }
  }
}
