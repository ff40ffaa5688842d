import { addDays, isoDate } from '../time'
import {
  RENEWAL_VIEW_DAYS,
  type OrderListView,
  type OrderViewCounts,
  type OrderWorklist
} from '../../../src-shared/list-records'
import { VERDICT_LABELS } from '../installations/verdict'
import type { Verdict } from '../../../src-shared/records'
import type { SqlArg, Store } from '../store'

/** A filter as SQL: conditions joined with AND, and their arguments. */
export interface Where {
  sql: string[]
  args: SqlArg[]
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
    // A 0/1 column compared as a number: PostgreSQL takes no integer as a condition.
    case 'installation_problems':
      return { sql: ['o.install_problem = 1'], args: [] }
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
export async function orderViewCounts(db: Store, resellerId: number, now: Date): Promise<OrderViewCounts> {
  const n = async (sql: string, ...args: SqlArg[]): Promise<number> =>
    (await db.value<number | null>(sql, ...args)) ?? 0
  // All four from one snapshot.
  return await db.tx(
    async (): Promise<OrderViewCounts> => ({
      needs_validation: await n(
        `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND status = 'validation_pending'`,
        resellerId
      ),
      renewal_due: await n(
        'SELECT SUM(n) AS n FROM order_renewal_days WHERE reseller_id = ? AND day <= ?',
        resellerId,
        renewalHorizon(now)
      ),
      installation_problems: await n('SELECT n FROM order_problem_tallies WHERE reseller_id = ?', resellerId),
      unpaid: await n(
        `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND payment_status = 'unpaid' AND status != 'cancelled'`,
        resellerId
      )
    }),
    { readOnly: true }
  )
}

/** The tally behind a view alone (no other filter), for the list's total. */
export async function viewTotal(db: Store, resellerId: number, view: OrderListView, now: Date): Promise<number> {
  return (await orderViewCounts(db, resellerId, now))[view]
}

/** A verdict a check gave; "unchecked" (a certificate stored, its check still ahead) is none. */
const checked = (v: string | null): Verdict | null => (v === null || v === 'unchecked' ? null : (v as Verdict))

type FactRow = [
  id: number,
  renewalDue: string | null,
  renewalKind: 'reissue' | 'renewal' | null,
  verdict: string | null,
  total: number,
  valid: number | null
]

/**
 * What the rows of one page show beyond the order: each order's validation rows through their
 * (order_id, name) index, its next renewal and verdict from its own row, and the methods its
 * names use (a second query: the engines share no string aggregate).
 */
export async function worklistFacts(db: Store, ids: number[]): Promise<Map<number, OrderWorklist>> {
  const list = db.inList(ids)
  const rows = await db.arrays<FactRow>(
    `SELECT o.id, o.renewal_due,
       CASE WHEN o.renewal_due IS NULL THEN NULL
            WHEN o.renewal_due = o.next_reissue_at AND o.cert_valid_till IS NOT NULL THEN 'reissue'
            ELSE 'renewal' END,
       o.install_verdict, COUNT(d.id), SUM(CASE WHEN d.status = 'valid' THEN 1 ELSE 0 END)
     FROM orders o LEFT JOIN dcv_checks d ON d.order_id = o.id
     WHERE o.id ${list.sql} GROUP BY o.id`,
    list.arg
  )
  const methods = new Map<number, Set<string>>()
  for (const m of await db.all<{ order_id: number; method: string }>(
    `SELECT DISTINCT order_id, method FROM dcv_checks WHERE order_id ${list.sql}`,
    list.arg
  ))
    methods.set(m.order_id, (methods.get(m.order_id) ?? new Set()).add(m.method))
  return new Map(
    rows.map(([id, renewalDue, renewalKind, verdict, total, valid]) => {
      const found = checked(verdict)
      return [
        id,
        {
          namesTotal: total,
          namesValid: valid ?? 0,
          methods: [...(methods.get(id) ?? [])].sort(),
          renewalDue,
          renewalKind,
          installVerdict: found,
          installLabel: found && VERDICT_LABELS[found]
        }
      ]
    })
  )
}
