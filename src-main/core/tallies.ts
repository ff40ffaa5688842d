/**
 * Row counts and sums kept by the triggers of migration 0003, so list totals and statistics
 * read a handful of rows instead of counting a million. The triggers run
 * inside every writer's transaction, so these numbers are exactly what COUNT(*) would say.
 */
import type { Db } from './db'

const sumOf = (row: unknown): number => (row as { n: number | null }).n ?? 0

export function countOrders(db: Db, resellerId: number, status?: string): number {
  return status
    ? sumOf(
        db.prepare('SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND status = ?').get(resellerId, status)
      )
    : sumOf(db.prepare('SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ?').get(resellerId))
}

export function countInvoices(db: Db, resellerId: number, status?: string): number {
  return status
    ? sumOf(
        db.prepare('SELECT n FROM invoice_tallies WHERE reseller_id = ? AND status = ?').get(resellerId, status) ?? {}
      )
    : sumOf(db.prepare('SELECT SUM(n) AS n FROM invoice_tallies WHERE reseller_id = ?').get(resellerId))
}

export function countLedger(db: Db, resellerId: number): number {
  return sumOf(db.prepare('SELECT n FROM ledger_tallies WHERE reseller_id = ?').get(resellerId) ?? {})
}
