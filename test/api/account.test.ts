import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'
import { manualClock } from '../support/clock'

type Body = Record<string, unknown>
const clock = manualClock('2026-11-05T09:00:00Z')
let s: TestServer

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
})
afterAll(async () => await s.close())

describe('GET /account', () => {
  it('shows the reseller with balance, discount and order stats', async () => {
    const r = await s.reseller({ credit: 500, discount: 5, name: 'Northwind Hosting' })
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'a.example.com' } })
    const res = await s.request<{ reseller: Body }>('GET', '/account', { key: r.key })
    expect(res.status).toBe(200)
    expect(res.body.reseller).toMatchObject({
      id: r.id,
      name: 'Northwind Hosting',
      discount_rate: 5,
      credit_balance: 470.36,
      group_id: 1,
      group_name: 'Standard',
      stats: { order_count: 1, total_revenue: 29.64 }
    })
  })
})

describe('GET /stats', () => {
  it('counts orders and revenue, charts daily sales, brands and statuses', async () => {
    const r = await s.reseller({ credit: 2000 })
    clock.set('2026-10-20T12:00:00Z') // last month, outside the daily chart's 30 days
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 8, domain: 'old.example.com' } })
    clock.set('2026-11-02T12:00:00Z')
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'a.example.com' } })
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 1, domain: 'b.example.com' } })
    clock.set('2026-11-05T12:00:00Z')
    const c = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'c.example.com' } })
    await s.request('PUT', `/orders/${c.body.order_id}`, { key: r.key, body: { action: 'cancel' } })
    const res = await s.request<{
      stats: Body
      charts: { daily_sales: Body[]; brand_distribution: Body[]; status_distribution: Body }
    }>('GET', '/stats', { key: r.key })
    expect(res.status).toBe(200)
    expect(res.body.stats).toEqual({
      total_orders: 4,
      active_orders: 0,
      pending_orders: 3,
      total_revenue: 850.4,
      monthly_revenue: 54.4,
      credit_balance: 1149.6
    })
    expect(res.body.charts.daily_sales.length).toBe(30)
    expect(res.body.charts.daily_sales.at(-1)).toEqual({ date: '2026-11-05', orders: 1, revenue: 0 })
    expect(res.body.charts.daily_sales.find((d) => d.date === '2026-11-02')).toEqual({
      date: '2026-11-02',
      orders: 2,
      revenue: 54.4
    })
    expect(res.body.charts.daily_sales[0].date).toBe('2026-10-07')
    expect(res.body.charts.brand_distribution).toEqual([
      { brand: 'Sectigo', count: 2 },
      { brand: 'DigiCert', count: 1 },
      { brand: 'RapidSSL', count: 1 }
    ])
    expect(res.body.charts.status_distribution).toEqual({ completed: 0, pending: 3, processing: 0, cancelled: 1 })
  })
})
