/**
 * Account statistics for GET /stats and GET /account. Revenue counts orders that are paid
 * and not refunded: a cancelled order's refund takes it out again.
 */
import type { CoreContext } from '../context'
import type { Cents } from './money'
import { addDays, isoDate, startOfDay } from '../time'
import type { Stats } from '../../../src-shared/records'

export type { Stats } from '../../../src-shared/records'

/** Days shown in the daily sales chart, today included. */
export const DAILY_SALES_DAYS = 30

/** Statuses counted as "pending" for the dashboard: waiting on payment, a CSR or validation. */
const PENDING = ['pending', 'pending_configuration', 'validation_pending', 'processing']

export class StatsService {
  constructor(private readonly ctx: CoreContext) {}

  async revenue(resellerId: number): Promise<{ orderCount: number; totalRevenue: Cents }> {
    const r = (await this.ctx.store.get(
      `SELECT COALESCE(SUM(n), 0) AS n, COALESCE(SUM(CASE WHEN payment_status = 'paid' THEN total_cents END), 0) AS rev
         FROM order_tallies WHERE reseller_id = ?`,
      resellerId
    )) as { n: number; rev: number }
    return { orderCount: r.n, totalRevenue: r.rev }
  }

  /**
   * The day `stats` counts from: its answer reads the clock through this alone, so an answer
   * may be reused for the rest of the day while the store is unchanged.
   */
  day(): string {
    return isoDate(this.ctx.clock())
  }

  /**
   * The figures of one answer, read in one transaction: one snapshot of the store (a write by
   * another process cannot land between the totals and the chart), and one read lock instead of
   * one per statement (each costs more than the small reads themselves).
   */
  stats(resellerId: number): Promise<Stats> {
    return this.ctx.store.tx(async () => await this.compute(resellerId), { readOnly: true })
  }

  private async compute(resellerId: number): Promise<Stats> {
    const db = this.ctx.store
    const now = this.ctx.clock()
    const today = startOfDay(now)
    const monthStart = `${isoDate(now).slice(0, 7)}-01`
    const firstDay = addDays(today, -(DAILY_SALES_DAYS - 1))

    const statusRows = (await db.all(
      'SELECT status, SUM(n) AS n FROM order_tallies WHERE reseller_id = ? GROUP BY status HAVING SUM(n) > 0',
      resellerId
    )) as { status: string; n: number }[]
    const statusDistribution: Record<string, number> = { completed: 0, pending: 0, processing: 0, cancelled: 0 }
    for (const r of statusRows) statusDistribution[r.status] = r.n
    const total = statusRows.reduce((a, r) => a + r.n, 0)

    // Totals from order_tallies (migration 0003); this month and the last 30 days from the
    // tallies per day (migration 0009): a month of orders is at most 31 rows.
    const { rev } = (await db.get(
      `SELECT COALESCE(SUM(total_cents), 0) AS rev FROM order_tallies WHERE reseller_id = ? AND payment_status = 'paid'`,
      resellerId
    )) as { rev: number }
    const { month } = (await db.get(
      'SELECT COALESCE(SUM(paid_cents), 0) AS month FROM order_day_tallies WHERE reseller_id = ? AND day >= ?',
      resellerId,
      monthStart
    )) as { month: number }

    const daily = (await db.all(
      'SELECT day AS date, n AS orders, paid_cents AS revenue FROM order_day_tallies WHERE reseller_id = ? AND day >= ?',
      resellerId,
      isoDate(firstDay)
    )) as { date: string; orders: number; revenue: number }[]
    const byDate = new Map(daily.map((d) => [d.date, d]))
    const dailySales = Array.from({ length: DAILY_SALES_DAYS }, (_, i) => {
      const date = isoDate(addDays(firstDay, i))
      const d = byDate.get(date)
      return { date, orders: d?.orders ?? 0, revenue: d?.revenue ?? 0 }
    })

    const brandDistribution = (await db.all(
      `SELECT p.brand AS brand, SUM(t.n) AS count FROM order_tallies t JOIN products p ON p.id = t.product_id
         WHERE t.reseller_id = ? GROUP BY p.brand HAVING SUM(t.n) > 0 ORDER BY count DESC, brand`,
      resellerId
    )) as { brand: string; count: number }[]

    const balance = (
      (await db.get('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?', resellerId)) as {
        b: number
      }
    ).b

    return {
      totalOrders: total,
      activeOrders: statusDistribution.completed ?? 0,
      pendingOrders: PENDING.reduce((a, s) => a + (statusDistribution[s] ?? 0), 0),
      totalRevenue: rev,
      monthlyRevenue: month,
      creditBalance: balance,
      dailySales,
      brandDistribution,
      statusDistribution
    }
  }
}
