import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { manualClock } from '../support/clock'
import { startServer, type TestServer } from '../support/server'

// GET /stats counts the last 30 days and this month from tallies kept per reseller and day by
// the triggers of migration 0009. Whatever writes the orders, the numbers must be exactly what
// the orders themselves say; and a cached answer holds for its day only.
type Body = Record<string, unknown>
const time = manualClock('2026-11-03T10:00:00Z')
let s: TestServer

beforeAll(async () => {
  s = await startServer({ clock: time.clock })
})
afterAll(async () => await s.close())

const stats = async (key: string): Promise<{ stats: Body; charts: { daily_sales: Body[] } }> => {
  const res = await s.request<{ stats: Body; charts: { daily_sales: Body[] } }>('GET', '/stats', { key })
  expect(res.status).toBe(200)
  return res.body
}

/** What the orders themselves say for the 30 days up to `today` and for its month, as GET /stats showed it before the tallies. */
async function fromOrders(resellerId: number, today: string): Promise<{ daily: Body[]; month: number }> {
  const db = s.service.ctx.store
  const first = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10)
  const rows = (await db.all(
    `SELECT substr(created_at, 1, 10) AS date, COUNT(*) AS orders,
              COALESCE(SUM(CASE WHEN payment_status = 'paid' THEN total_cents END), 0) AS revenue
       FROM orders WHERE reseller_id = ? AND created_at >= ? GROUP BY 1`,
    resellerId,
    `${first} 00:00:00`
  )) as { date: string; orders: number; revenue: number }[]
  const daily = Array.from({ length: 30 }, (_, i) => {
    const date = new Date(Date.parse(`${first}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10)
    const r = rows.find((x) => x.date === date)
    return { date, orders: r?.orders ?? 0, revenue: (r?.revenue ?? 0) / 100 }
  })
  const { month } = (await db.get(
    `SELECT COALESCE(SUM(total_cents), 0) AS month FROM orders WHERE reseller_id = ? AND created_at >= ? AND payment_status = 'paid'`,
    resellerId,
    `${today.slice(0, 7)}-01 00:00:00`
  )) as { month: number }
  return { daily, month: month / 100 }
}

describe('GET /stats from the tallies per day', () => {
  it('counts each day and this month exactly as the orders do, after orders, cancels, payments and edits by hand', async () => {
    const r = await s.reseller({ credit: 5000 })
    const place = async (at: string, domain: string): Promise<number> => {
      time.set(at)
      const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
      expect(res.status).toBe(200)
      return res.body.order_id as number
    }
    await place('2026-10-20T08:00:00Z', 'october.example.com')
    await place('2026-11-01T00:00:00Z', 'first-of-month.example.com')
    const cancelled = await place('2026-11-03T09:00:00Z', 'cancelled.example.com')
    await place('2026-11-03T23:59:59Z', 'late.example.com')
    expect((await s.request('PUT', `/orders/${cancelled}`, { key: r.key, body: { action: 'cancel' } })).status).toBe(
      200
    )
    // On invoice on the 2nd, paid from credit on the 3rd: revenue of the day it was ordered.
    time.set('2026-11-02T12:00:00Z')
    const unpaid = await s.service.orders.create(
      await s.service.resellers.get(r.id),
      { productId: 2, domain: 'invoice.example.com' },
      'invoice'
    )
    time.set('2026-11-03T12:00:00Z')
    let shown = await stats(r.key)
    let expected = await fromOrders(r.id, '2026-11-03')
    expect(shown.charts.daily_sales).toEqual(expected.daily)
    expect(shown.stats.monthly_revenue).toBe(expected.month)
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: unpaid.order.id } })).status).toBe(200)

    // A repair by hand moves an order to another day and changes a total.
    await s.service.ctx.store.run(
      `UPDATE orders SET created_at = '2026-10-31 22:00:00' WHERE domain = 'first-of-month.example.com'`
    )
    await s.service.ctx.store.run(`UPDATE orders SET total_cents = total_cents + 100 WHERE domain = 'late.example.com'`)

    shown = await stats(r.key)
    expected = await fromOrders(r.id, '2026-11-03')
    expect(shown.charts.daily_sales).toEqual(expected.daily)
    expect(shown.stats.monthly_revenue).toBe(expected.month)
    expect(shown.charts.daily_sales.find((d) => d.date === '2026-11-02')).toMatchObject({ orders: 1 })
    expect((shown.charts.daily_sales.find((d) => d.date === '2026-11-02')?.revenue as number) > 0).toBe(true)
  })

  it('answers for the day it is asked on: a new day shows without any write', async () => {
    const r = await s.reseller({ credit: 500 })
    time.set('2026-11-10T23:00:00Z')
    expect(
      (await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'day.example.com' } })).status
    ).toBe(200)
    const before = await stats(r.key)
    const hits = s.app.readCache.hits
    expect(await stats(r.key)).toEqual(before)
    expect(s.app.readCache.hits).toBe(hits + 1)
    expect(before.charts.daily_sales.at(-1)).toMatchObject({ date: '2026-11-10', orders: 1 })

    time.set('2026-11-11T00:00:01Z')
    const after = await stats(r.key)
    expect(after.charts.daily_sales.at(-1)).toEqual({ date: '2026-11-11', orders: 0, revenue: 0 })
    expect(after.charts.daily_sales.at(-2)).toMatchObject({ date: '2026-11-10', orders: 1 })
    expect(after.charts.daily_sales[0].date).toBe('2026-10-13')
  })
})
