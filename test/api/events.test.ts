import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { manualClock } from '../support/clock'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type EventsBody = { success: boolean; events: Body[]; pagination: Body }
const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
})
afterAll(() => s.close())

describe('GET /events', () => {
  it("pages through the history newest first, filters by type and since, and shows only the caller's events", async () => {
    const r = s.reseller({ credit: 1000 })
    const other = s.reseller({ credit: 100 })
    await s.request('POST', '/orders', { key: other.key, body: { product_id: 2, domain: 'other.example.test' } })
    const ids: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await s.request<Body>('POST', '/orders', {
        key: r.key,
        body: { product_id: 2, domain: `e${i}.example.test` }
      })
      ids.push(res.body.order_id as number)
      clock.advanceDays(1)
    }
    const cancelled = await s.request('PUT', `/orders/${ids[5]}`, { key: r.key, body: { action: 'cancel' } })
    expect(cancelled.status).toBe(200)

    const all = await s.request<EventsBody>('GET', '/events', { key: r.key })
    expect(all.status).toBe(200)
    expect(all.body.success).toBe(true)
    // 6 orders, each created and paid, then one cancel.
    expect(all.body.pagination).toEqual({ total: 13, limit: 50, offset: 0 })
    expect(all.body.events[0]).toMatchObject({
      type: 'order.cancelled',
      order_id: ids[5],
      created_at: '2026-11-27 10:00:00'
    })
    expect(all.body.events[0].message).toMatch(/^Order ORD-2026-\d{6} cancelled$/)
    expect(all.body.events[0].data).toEqual({ refunded_cents: 3120 })
    expect(all.body.events[0].order_number).toMatch(/^ORD-2026-\d{6}$/)
    expect(JSON.stringify(all.body.events)).not.toContain('other.example.test')
    const ids13 = all.body.events.map((e) => e.id as number)
    expect([...ids13].sort((a, b) => b - a)).toEqual(ids13)

    // Paging walks the same list without gaps or repeats.
    const seen: number[] = []
    for (let offset = 0; offset < 13; offset += 5) {
      const page = await s.request<EventsBody>('GET', `/events?limit=5&offset=${offset}`, { key: r.key })
      expect(page.body.pagination).toEqual({ total: 13, limit: 5, offset })
      seen.push(...page.body.events.map((e) => e.id as number))
    }
    expect(seen).toEqual(ids13)

    const created = await s.request<EventsBody>('GET', '/events?type=order.created&limit=2', { key: r.key })
    expect(created.body.pagination.total).toBe(6)
    expect(created.body.events.map((e) => e.order_id)).toEqual([ids[5], ids[4]])

    const since = await s.request<EventsBody>('GET', '/events?since=2026-11-25', { key: r.key })
    expect(since.body.events.map((e) => [e.type, e.created_at])).toEqual([
      ['order.cancelled', '2026-11-27 10:00:00'],
      ['order.paid', '2026-11-26 10:00:00'],
      ['order.created', '2026-11-26 10:00:00'],
      ['order.paid', '2026-11-25 10:00:00'],
      ['order.created', '2026-11-25 10:00:00']
    ])
    const sinceTs = await s.request<EventsBody>(
      'GET',
      `/events?since=${encodeURIComponent('2026-11-26 10:00:00')}&type=order.paid`,
      { key: r.key }
    )
    expect(sinceTs.body.events.map((e) => e.order_id)).toEqual([ids[5]])

    const clamped = await s.request<EventsBody>('GET', '/events?limit=500', { key: r.key })
    expect(clamped.body.pagination.limit).toBe(100)
  })

  it('records an on-invoice order as created, and as paid only when POST /credits pays it', async () => {
    const r = s.reseller({ credit: 100 })
    const order = s.service.orders.create(
      s.service.resellers.get(r.id),
      { productId: 2, domain: 'invoice.example.test' },
      'invoice'
    ).order
    const before = await s.request<EventsBody>('GET', `/events?order_id=${order.id}`, { key: r.key })
    expect(before.body.events.map((e) => e.type)).toEqual(['order.created'])
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: order.id } })).status).toBe(200)
    const after = await s.request<EventsBody>('GET', `/events?order_id=${order.id}`, { key: r.key })
    expect(after.body.events.map((e) => [e.type, e.data])).toEqual([
      ['order.paid', { amount_cents: 3120 }],
      ['order.created', { product_id: 2, total_cents: 3120 }]
    ])
    // A refused payment (already paid) records nothing.
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: order.id } })).status).toBe(409)
    expect(
      (await s.request<EventsBody>('GET', `/events?order_id=${order.id}`, { key: r.key })).body.pagination.total
    ).toBe(2)
  })

  it('refuses bad parameters with 400 in the envelope, and other methods with 405', async () => {
    const r = s.reseller({ credit: 10 })
    for (const q of ['?type=order.exploded', '?since=yesterday', '?since=2026-02-30', '?limit=0', '?offset=-1']) {
      const res = await s.request<Body>('GET', `/events${q}`, { key: r.key })
      expect(res.status, q).toBe(400)
      expect(res.body.success).toBe(false)
      expect(typeof res.body.error).toBe('string')
    }
    expect((await s.request<Body>('GET', '/events?type=order.exploded', { key: r.key })).body.error).toContain(
      'must be one of order.created'
    )
    expect((await s.request<Body>('GET', '/events?since=yesterday', { key: r.key })).body.error).toBe(
      'since must be a day (YYYY-MM-DD) or a UTC timestamp (YYYY-MM-DD HH:MM:SS)'
    )
    const post = await s.request<Body>('POST', '/events', { key: r.key, body: {} })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    expect((await s.request('GET', '/events')).status).toBe(401)
  })

  it('is documented in the OpenAPI document with its filters and event types', async () => {
    const r = s.reseller({ credit: 10 })
    const doc = await s.request<{
      paths: Record<string, Record<string, { parameters: { name: string; schema: { enum?: string[] } }[] }>>
    }>('GET', '/openapi.json', { key: r.key })
    const get = doc.body.paths['/events'].get
    expect(get.parameters.map((p) => p.name).sort()).toEqual(['limit', 'offset', 'order_id', 'since', 'type'])
    expect(get.parameters.find((p) => p.name === 'type')?.schema.enum).toEqual([
      'order.created',
      'order.paid',
      'order.cancelled',
      'validation.passed',
      'validation.failed',
      'certificate.issued',
      'certificate.reissued',
      'certificate.expiring',
      'certificate.revoked',
      'deploy.succeeded',
      'deploy.failed',
      'subscription.created',
      'installation.passed',
      'installation.failed',
      'certificate.imported'
    ])
  })
})
