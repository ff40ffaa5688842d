/**
 * Parameters are read as the description says and nothing else: a number out of range is a
 * 400 naming it (never a 500 from the store), a query parameter the endpoint does not take is
 * a 400 naming it (never a silently ignored filter), an idempotent retry is recognised by what
 * it asks for, not by how its JSON is spelt, and a subscription's names have one shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer, type TestReseller } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let r: TestReseller

/** 2^63 − 1: the largest SQLite integer, which JSON carries to JavaScript as 2^63. */
const HUGE = '9223372036854775807'

beforeAll(async () => {
  s = await startServer()
  r = s.reseller({ credit: 500 })
})
afterAll(() => s.close())

const balance = async (key: string): Promise<number> =>
  (await s.request<{ balance: number }>('GET', '/balance', { key })).body.balance

describe('numbers out of range', () => {
  it('answers 400 naming offset or limit on every list, never 500', async () => {
    for (const list of ['/orders', '/invoices', '/credits', '/events']) {
      for (const param of ['offset', 'limit']) {
        const res = await s.request<Body>('GET', `${list}?${param}=${HUGE}`, { key: r.key })
        expect(res.status, `${list}?${param}`).toBe(400)
        expect(res.body).toEqual({ success: false, error: `invalid request: ${param} must be <= 9007199254740991` })
      }
      // The largest offset that is in range is an empty page, not a fault.
      const last = await s.request<{ pagination: Body }>('GET', `${list}?offset=9007199254740991`, { key: r.key })
      expect(last.status, list).toBe(200)
      expect(last.body.pagination).toMatchObject({ offset: 9007199254740991, limit: 50 })
    }
  })

  it('answers 400 for ids out of range in the path and in a body, and changes nothing', async () => {
    const before = await balance(r.key)
    for (const path of [`/orders/${HUGE}`, `/invoices/${HUGE}`, `/certificate/${HUGE}`, `/ssl/${HUGE}`]) {
      const res = await s.request<Body>('GET', path, { key: r.key })
      expect(res.status, path).toBe(400)
      expect(res.body.error, path).toMatch(/must be <= 9007199254740991/)
    }
    const paid = await s.request<Body>('POST', '/credits', { key: r.key, body: `{"order_id": ${HUGE}}` })
    expect(paid.status).toBe(400)
    expect(paid.body).toEqual({ success: false, error: 'invalid request: order_id must be <= 9007199254740991' })
    const cancel = await s.request<Body>('PUT', `/orders/${HUGE}`, { key: r.key, body: { action: 'cancel' } })
    expect(cancel.status).toBe(400)
    expect(await balance(r.key)).toBe(before)
  })
})

describe('query parameters an endpoint does not take', () => {
  it('answers 400 naming the parameter and what the endpoint takes, instead of ignoring it', async () => {
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'strict.example.com' } })
    const cases: [string, string][] = [
      ['/credits?type=debit', 'unknown query parameter "type"; GET /credits takes limit, offset'],
      ['/orders?stauts=pending', 'unknown query parameter "stauts"; GET /orders takes status, domain, limit, offset'],
      ['/account?verbose=1', 'unknown query parameter "verbose"; GET /account takes no query parameters'],
      ['/orders/1?expand=invoice', 'unknown query parameter "expand"; GET /orders/:id takes no query parameters'],
      [
        '/products?brnad=Sectigo',
        'unknown query parameter "brnad"; GET /products takes brand, type, validation, include'
      ]
    ]
    for (const [path, error] of cases) {
      const res = await s.request<Body>('GET', path, { key: r.key })
      expect(res.status, path).toBe(400)
      expect(res.body).toEqual({ success: false, error: `invalid request: ${error}` })
    }
    // The same on a write, which then changes nothing.
    const before = await balance(r.key)
    const order = await s.request<Body>('POST', '/orders?dry_run=1', {
      key: r.key,
      body: { product_id: 2, domain: 'dry.example.com' }
    })
    expect(order.status).toBe(400)
    expect(order.body.error).toMatch(/unknown query parameter "dry_run"/)
    expect(await balance(r.key)).toBe(before)
    // The parameters an endpoint does take still work.
    const credits = await s.request<{ transactions: Body[] }>('GET', '/credits?limit=1&offset=0', { key: r.key })
    expect(credits.status).toBe(200)
    expect(credits.body.transactions).toHaveLength(1)
  })
})

describe('idempotent retries', () => {
  it('replays a retry whose JSON has its keys in another order and other spacing, and charges once', async () => {
    const buyer = s.reseller({ credit: 200 })
    const key = { 'idempotency-key': 'retry-by-meaning-1' }
    const first = await s.request<Body>('POST', '/orders', {
      key: buyer.key,
      headers: key,
      body: '{"product_id":2,"domain":"retry.example.com","period":12}'
    })
    expect(first.status).toBe(200)
    const after = await balance(buyer.key)
    const retry = await s.request<Body>('POST', '/orders', {
      key: buyer.key,
      headers: key,
      body: '{\n  "period" : 12,\n  "domain" : "retry.example.com",\n  "product_id" : 2\n}\n'
    })
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body).toEqual(first.body)
    expect(await balance(buyer.key)).toBe(after)
    const orders = await s.request<{ orders: Body[] }>('GET', '/orders', { key: buyer.key })
    expect(orders.body.orders).toHaveLength(1)

    // Another request under the same key is still refused.
    const other = await s.request<Body>('POST', '/orders', {
      key: buyer.key,
      headers: key,
      body: { product_id: 2, domain: 'other.example.com', period: 12 }
    })
    expect(other.status).toBe(409)
    expect(await balance(buyer.key)).toBe(after)
  })
})

describe('the names of an ACME subscription', () => {
  it('have the shape { id, name } in the order detail as in the set-up details', async () => {
    const buyer = s.reseller({ credit: 200 })
    const placed = await s.request<{ order_id: number }>('POST', '/orders', {
      key: buyer.key,
      body: { product_id: 12, domain: 'names.example.com' }
    })
    expect(placed.status).toBe(200)
    const id = placed.body.order_id
    const detail = await s.request<{ order: { acme: { domains: unknown } } }>('GET', `/orders/${id}`, {
      key: buyer.key
    })
    const setup = await s.request<{ acme: { domains: unknown } }>('GET', `/orders/${id}/acme`, { key: buyer.key })
    expect(setup.body.acme.domains).toEqual([
      { id: expect.any(String), name: 'names.example.com' },
      { id: expect.any(String), name: 'www.names.example.com' }
    ])
    expect(detail.body.order.acme.domains).toEqual(setup.body.acme.domains)
  })
})
