/**
 * Row counts and sums kept by the triggers of migration 0003, so list totals and statistics
 * read a handful of rows instead of counting a million. The triggers run
 * inside every writer's transaction, so these numbers are exactly what COUNT(*) would say.
 */
import type { Store } from '../store'

const sumOf = (row: unknown): number => (row as { n: number | null }).n ?? 0

export async function countOrders(db: Store, resellerId: number, status?: string): Promise<number> {
  return status
    ? sumOf(
        await db.get('SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND status = ?', resellerId, status)
      )
    : sumOf(await db.get('SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ?', resellerId))
}

export async function countInvoices(db: Store, resellerId: number, status?: string): Promise<number> {
  return status
    ? sumOf(
        (await db.get('SELECT n FROM invoice_tallies WHERE reseller_id = ? AND status = ?', resellerId, status)) ?? {}
      )
    : sumOf(await db.get('SELECT SUM(n) AS n FROM invoice_tallies WHERE reseller_id = ?', resellerId))
}

export async function countLedger(db: Store, resellerId: number): Promise<number> {
  return sumOf((await db.get('SELECT n FROM ledger_tallies WHERE reseller_id = ?', resellerId)) ?? {})
}
