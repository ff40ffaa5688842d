/**
 * The orders list as a worklist: the saved views a reseller returns to, how many orders each
 * holds, and what a row shows beyond the order (validation progress, the next renewal, the
 * installation verdict). Every answer comes from an index range, a few tally rows or the rows
 * of one page (migration 0018), so none of it grows with the size of the store.
 */
import type { Db } from './db'
import { addDays, isoDate } from './time'
import {
  RENEWAL_VIEW_DAYS,
  type OrderListView,
  type OrderViewCounts,
  type OrderWorklist
} from '../../src-shared/list-records'
import { VERDICT_LABELS } from './installations/verdict'
import type { Verdict } from '../../src-shared/records'

/** A filter as SQL: conditions joined with AND, and their arguments. */
export interface Where {
  sql: string[]
  args: unknown[]
}

/** The last day (UTC) a "renewal due" order may renew on, seen from `now`. */
export const renewalHorizon = (now: Date): string => isoDate(addDays(now, RENEWAL_VIEW_DAYS))

/**
 * The conditions of a saved view over `orders o`. Each is the range of an index: the status
 * index, the unpaid partial index, the next-renewal index, the installation-problem index.
 */
export function viewWhere(view: OrderListView, now: Date): Where {
  switch (view) {
    case 'needs_validation':
      return { sql: [`o.status = 'validation_pending'`], args: [] }
    // Overdue renewals (a reissue that waits for validation) are due too: everything up to the horizon.
    case 'renewal_due':
      return { sql: [`IFNULL(o.renewal_due, '~') <= ?`], args: [renewalHorizon(now)] }
    case 'installation_problems':
      return { sql: ['o.install_problem'], args: [] }
    case 'unpaid':
      return { sql: [...UNPAID.sql], args: [] }
  }
}

/**
 * Unpaid and still open: a cancelled order's invoice is cancelled, so it is not "unpaid" (the
 * order page and the invoice list say "cancelled" for it).
 */
export const UNPAID: Where = { sql: [`o.payment_status = 'unpaid'`, `o.status != 'cancelled'`], args: [] }

/** Sums of tally rows, so each view's count reads a handful of rows, not its orders. */
export function orderViewCounts(db: Db, resellerId: number, now: Date): OrderViewCounts {
  const n = (sql: string, ...args: unknown[]): number =>
    ((db.prepare(sql).get(...args) as { n: number | null } | undefined)?.n ?? 0) as number
  return db.transaction((): OrderViewCounts => ({
    needs_validation: n(
      `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND status = 'validation_pending'`,
      resellerId
    ),
    renewal_due: n(
      'SELECT SUM(n) AS n FROM order_renewal_days WHERE reseller_id = ? AND day <= ?',
      resellerId,
      renewalHorizon(now)
    ),
    installation_problems: n('SELECT n FROM order_problem_tallies WHERE reseller_id = ?', resellerId),
    unpaid: n(
      `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND payment_status = 'unpaid' AND status != 'cancelled'`,
      resellerId
    )
  }))()
}

/** The tally behind a view alone (no other filter), for the list's total. */
export function viewTotal(db: Db, resellerId: number, view: OrderListView, now: Date): number {
  return orderViewCounts(db, resellerId, now)[view]
}

/** A verdict a check gave; "unchecked" (a certificate stored, its check still ahead) is none. */
const checked = (v: string | null): Verdict | null => (v === null || v === 'unchecked' ? null : (v as Verdict))

type FactRow = [
  id: number,
  renewalDue: string | null,
  renewalKind: 'reissue' | 'renewal' | null,
  verdict: string | null,
  total: number,
  valid: number | null,
  methods: string | null
]

/**
 * What the rows of one page show beyond the order, in one query: each order's validation rows
 * through their (order_id, name) index, its next renewal and verdict from its own row.
 */
export function worklistFacts(db: Db, ids: number[]): Map<number, OrderWorklist> {
  const rows = db
    .prepare(
      `SELECT o.id, o.renewal_due,
         CASE WHEN o.renewal_due IS NULL THEN NULL
              WHEN o.renewal_due = o.next_reissue_at AND o.cert_valid_till IS NOT NULL THEN 'reissue'
              ELSE 'renewal' END,
         o.install_verdict, COUNT(d.id), SUM(d.status = 'valid'), GROUP_CONCAT(DISTINCT d.method)
       FROM orders o LEFT JOIN dcv_checks d ON d.order_id = o.id
       WHERE o.id IN (SELECT value FROM json_each(?)) GROUP BY o.id`
    )
    .raw(true)
    .all(JSON.stringify(ids)) as FactRow[]
  return new Map(
    rows.map(([id, renewalDue, renewalKind, verdict, total, valid, methods]) => {
      const found = checked(verdict)
      return [
        id,
        {
          namesTotal: total,
          namesValid: valid ?? 0,
          methods: methods ? [...new Set(methods.split(','))].sort() : [],
          renewalDue,
          renewalKind,
          installVerdict: found,
          installLabel: found && VERDICT_LABELS[found]
        }
      ]
    })
  )
}
