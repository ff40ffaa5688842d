import type { SqlArg } from '../../src-main/core/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

// Migration 0003 answers totals from trigger-kept tallies and ?domain= from a trigram index.
// What a user sees must be exactly what counting the rows says, after every kind of write.
type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

const count = async (sql: string, ...args: SqlArg[]): Promise<number> =>
  ((await s.service.ctx.store.get(sql, ...args)) as { n: number }).n

describe('totals after orders, cancels, payments and an admin edit', () => {
  it('match COUNT(*) and SUM over the rows themselves', async () => {
    const r = await s.reseller({ credit: 5000 })
    const domains = [
      'alpha.example.com',
      'beta.example.org',
      'gamma.example.net',
      'shop.alpha.example.com',
      'mail.example.io'
    ]
    const ids: number[] = []
    for (const [i, domain] of domains.entries()) {
      const res = await s.request<Body>('POST', '/orders', {
        key: r.key,
        body: { product_id: 2, domain, period: 12 * (1 + (i % 2)) }
      })
      expect(res.status).toBe(200)
      ids.push(res.body.order_id as number)
    }
    expect((await s.request('PUT', `/orders/${ids[1]}`, { key: r.key, body: { action: 'cancel' } })).status).toBe(200)
    expect((await s.request('PUT', `/orders/${ids[3]}`, { key: r.key, body: { action: 'cancel' } })).status).toBe(200)
    const reseller = await s.service.resellers.get(r.id)
    const unpaid = await s.service.orders.create(reseller, { productId: 2, domain: 'invoice.example.com' }, 'invoice')
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: unpaid.order.id } })).status).toBe(200)
    // A writer that knows nothing of the tallies (a later scheduler, a repair by hand).
    await s.service.ctx.store.run(`UPDATE orders SET status = 'completed' WHERE id = ?`, ids[0])

    for (const status of ['pending', 'completed', 'cancelled', 'processing']) {
      const list = await s.request<Body>('GET', `/orders?status=${status}`, { key: r.key })
      expect((list.body.pagination as Body).total).toBe(
        await count('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ? AND status = ?', r.id, status)
      )
    }
    const all = await s.request<Body>('GET', '/orders', { key: r.key })
    expect((all.body.pagination as Body).total).toBe(6)
    const credits = await s.request<Body>('GET', '/credits', { key: r.key })
    expect((credits.body.pagination as Body).total).toBe(
      await count('SELECT COUNT(*) AS n FROM credit_transactions WHERE reseller_id = ?', r.id)
    )
    const invoices = await s.request<Body>('GET', '/invoices?status=cancelled', { key: r.key })
    expect((invoices.body.pagination as Body).total).toBe(2)

    const stats = await s.request<{ stats: Body; charts: Body }>('GET', '/stats', { key: r.key })
    const paid = await count(
      `SELECT SUM(total_cents) AS n FROM orders WHERE reseller_id = ? AND payment_status = 'paid'`,
      r.id
    )
    expect(stats.body.stats).toMatchObject({
      total_orders: 6,
      active_orders: 1,
      pending_orders: 3,
      total_revenue: paid / 100
    })
    expect(stats.body.charts.status_distribution).toEqual({ completed: 1, pending: 3, processing: 0, cancelled: 2 })
    const account = await s.request<{ reseller: Body }>('GET', '/account', { key: r.key })
    expect(account.body.reseller.stats).toEqual({ order_count: 6, total_revenue: paid / 100 })
  })
})

describe('GET /orders?domain=', () => {
  it('finds the same orders through the index as by reading every row', async () => {
    const r = await s.reseller({ credit: 5000 })
    for (const domain of [
      'www.nimbus-12.com',
      'shop.nimbus-123.net',
      'nimbus.example.org',
      'other.example.com',
      'xn--bcher-kva.example'
    ]) {
      expect((await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })).status).toBe(200)
    }
    const domainsFor = async (term: string): Promise<string[]> => {
      const res = await s.request<{ orders: Body[]; pagination: Body }>(
        'GET',
        `/orders?domain=${encodeURIComponent(term)}`,
        { key: r.key }
      )
      expect(res.status).toBe(200)
      expect(res.body.pagination.total).toBe(res.body.orders.length)
      return res.body.orders.map((o) => o.domain as string)
    }
    // Index path (3+ characters), upper case too, and the plain path (short, LIKE wildcards).
    expect(await domainsFor('NIMBUS-12')).toEqual(['shop.nimbus-123.net', 'www.nimbus-12.com'])
    expect(await domainsFor('example')).toEqual(['xn--bcher-kva.example', 'other.example.com', 'nimbus.example.org'])
    expect(await domainsFor('bcher-k')).toEqual(['xn--bcher-kva.example'])
    expect(await domainsFor('.c')).toEqual(['other.example.com', 'www.nimbus-12.com'])
    expect(await domainsFor('nimbus_12')).toEqual([])
    expect(await domainsFor('%')).toEqual([])
    expect(await domainsFor('no-such-shop')).toEqual([])
  })
})
