/**
 * The desktop lists (orders, invoices, the credit ledger) paged by key: a page is read "after
 * the last row of the page before" (or "before the first row of the page after") as a range of
 * an index that serves the list's order, so its cost does not grow with its depth. A jump to a
 * position with no neighbour loaded counts index entries from the nearer end of the list, so the
 * oldest row is as cheap as the newest. The reseller API keeps limit/offset (reseller API v3.0
 * "Limits"); this is the desktop app's own path. The same reads, in large batches, feed the CSV
 * exports.
 */
import type { CoreContext } from '../context'
import type { Orders } from './orders'
import { storedFormOf } from './order-search'
import { orderViewCounts, UNPAID, viewTotal, viewWhere, worklistFacts, type Where } from './order-worklist'
import { countInvoices, countLedger, countOrders } from '../billing/tallies'
import type { CreditTransaction, Invoice, Order } from '../../../src-shared/records'
import type {
  KeyedPage,
  ListFilter,
  ListName,
  ListQuery,
  OrderSort,
  OrderViewCounts,
  OrderWorklist,
  RowKey
} from '../../../src-shared/list-records'
import type { SqlArg, Store } from '../store'

type Dir = 'asc' | 'desc'

/** Order numbers read "ORD-<year>-<number>": a term starting so is a number prefix, the rest a domain part. */
const ORDER_NUMBER = /^ord-/i

/** Each sort's key expression (null: the id itself) and the direction it reads first. */
const ORDER_KEYS: Record<OrderSort, { key: string | null; dir: Dir }> = {
  // Ids grow with creation time, so date order is id order (orders_reseller).
  date: { key: null, dir: 'desc' },
  domain: { key: 'o.domain', dir: 'asc' },
  status: { key: 'o.status', dir: 'asc' },
  // Migration 0012's expression index: orders without a certificate sort last.
  expiry: { key: `IFNULL(o.cert_valid_till, '~')`, dir: 'asc' },
  // Migration 0018's expression index: orders that renew never sort last.
  renewal: { key: `IFNULL(o.renewal_due, '~')`, dir: 'asc' }
}

interface ListSpec {
  from: string
  id: string
  reseller: string
  key: string | null
  dir: Dir
  where: Where
}

export interface ExportBatch {
  /** The rows as CSV cells, in the columns of `header`. */
  rows: (string | number | null)[][]
  last: RowKey | null
}

export const EXPORT_HEADERS: Record<ListName, string[]> = {
  orders: [
    'order_number',
    'created_at',
    'domain',
    'product',
    'status',
    'payment_status',
    'total_usd',
    'cert_valid_till',
    'purchase_end_date',
    'next_renewal',
    'installation'
  ],
  invoices: ['invoice_number', 'order_number', 'domain', 'product', 'total_usd', 'status', 'due_date', 'created_at'],
  transactions: ['id', 'created_at', 'type', 'amount_usd', 'balance_after_usd', 'description', 'order_id']
}

/** Columns of each export, in EXPORT_HEADERS order; money stays integer cents until written. */
const EXPORT_COLUMNS: Record<ListName, string> = {
  orders: `o.order_number, o.created_at, o.domain, p.name, o.status, o.payment_status, o.total_cents,
    o.cert_valid_till, o.purchase_end_date, o.renewal_due, o.install_verdict`,
  invoices: `i.invoice_number, o.order_number, o.domain, p.name, i.total_cents, i.status, i.due_date, i.created_at`,
  transactions: `t.id, t.created_at, t.type, t.amount_cents, t.balance_after_cents, t.description, t.order_id`
}
/** Which export column holds cents, written as a decimal string ("1234.50"). */
const MONEY_COLUMNS: Record<ListName, number[]> = { orders: [6], invoices: [4], transactions: [3, 4] }

const INVOICE_SELECT = `SELECT i.id, i.invoice_number AS invoiceNumber, i.order_id AS orderId, o.order_number AS orderNumber,
  o.domain, p.name AS productName, i.total_cents AS total, i.currency, i.status, i.due_date AS dueDate,
  i.created_at AS createdAt, i.paid_at AS paidAt, i.sent_at AS sentAt, i.cancelled_at AS cancelledAt
  FROM invoices i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = o.product_id`
const TX_SELECT = `SELECT t.id, t.amount_cents AS amount, t.type, t.description, t.balance_after_cents AS balanceAfter,
  t.order_id AS orderId, o.order_number AS orderNumber, t.created_at AS createdAt
  FROM credit_transactions t LEFT JOIN orders o ON o.id = t.order_id`

/** Integer cents as a decimal string without float rounding: -123456 -> "-1234.56". */
export function centsText(cents: number): string {
  const sign = cents < 0 ? '-' : ''
  const a = Math.abs(cents)
  const frac = a % 100
  return `${sign}${(a - frac) / 100}.${frac < 10 ? '0' : ''}${frac}`
}

export class ListPages {
  private readonly db: Store
  private readonly clock: () => Date

  constructor(
    ctx: Pick<CoreContext, 'store' | 'clock'>,
    private readonly orders: Pick<Orders, 'load'>
  ) {
    this.db = ctx.store
    this.clock = ctx.clock
  }

  /** A page of orders, each with what the worklist shows of it (order-worklist.ts). */
  async orderPage(resellerId: number, q: ListQuery): Promise<KeyedPage<Order & { worklist: OrderWorklist }>> {
    const spec = this.orderSpec(resellerId, q)
    return await this.db.tx(
      async (): Promise<KeyedPage<Order & { worklist: OrderWorklist }>> => {
        const total = await this.orderTotal(resellerId, q.filter)
        const { keys, position } = await this.keys(spec, resellerId, q, total)
        const ids = keys.map((k) => k.id)
        const byId = new Map((await this.orders.load(ids)).map((o) => [o.id, o]))
        const facts = await worklistFacts(this.db, ids)
        return {
          items: keys.map((k) => ({ ...byId.get(k.id)!, worklist: facts.get(k.id)! })),
          keys,
          total,
          position
        }
      },
      { readOnly: true }
    )
  }

  /** How many orders each saved view holds (tally rows only). */
  async viewCounts(resellerId: number): Promise<OrderViewCounts> {
    return await orderViewCounts(this.db, resellerId, this.clock())
  }

  async invoicePage(resellerId: number, q: ListQuery): Promise<KeyedPage<Invoice>> {
    const spec = this.invoiceSpec(q)
    return await this.db.tx(
      async (): Promise<KeyedPage<Invoice>> => {
        const status = q.filter.status as Invoice['status'] | undefined
        const total = await countInvoices(this.db, resellerId, q.filter.unpaid ? 'unpaid' : status)
        const { keys, position } = await this.keys(spec, resellerId, q, total)
        const ids = this.db.inList(keys.map((k) => k.id))
        const rows = await this.db.all<Invoice>(`${INVOICE_SELECT} WHERE i.id ${ids.sql}`, ids.arg)
        const byId = new Map(rows.map((r) => [r.id, r]))
        return { items: keys.map((k) => byId.get(k.id)!), keys, total, position }
      },
      { readOnly: true }
    )
  }

  /** A page of the credit ledger, each row with the number of its order (a link in the list). */
  async ledgerPage(
    resellerId: number,
    q: ListQuery
  ): Promise<KeyedPage<CreditTransaction & { orderNumber: string | null }>> {
    const spec = this.ledgerSpec()
    return await this.db.tx(
      async (): Promise<KeyedPage<CreditTransaction & { orderNumber: string | null }>> => {
        const total = await countLedger(this.db, resellerId)
        const { keys, position } = await this.keys(spec, resellerId, q, total)
        const ids = this.db.inList(keys.map((k) => k.id))
        const rows = await this.db.all<CreditTransaction & { orderNumber: string | null }>(
          `${TX_SELECT} WHERE t.id ${ids.sql}`,
          ids.arg
        )
        const byId = new Map(rows.map((r) => [r.id, r]))
        return { items: keys.map((k) => byId.get(k.id)!), keys, total, position }
      },
      { readOnly: true }
    )
  }

  /** How many rows an export of this list and filter will write. */
  async exportTotal(list: ListName, resellerId: number, filter: ListFilter): Promise<number> {
    if (list === 'orders') return await this.orderTotal(resellerId, filter)
    if (list === 'invoices')
      return await countInvoices(this.db, resellerId, filter.unpaid ? 'unpaid' : (filter.status as Invoice['status']))
    return await countLedger(this.db, resellerId)
  }

  /**
   * The next `limit` rows of an export after `after` (from the start when null), as CSV cells:
   * one range read of the list's index joined with the columns, so a whole export is linear.
   */
  async exportBatch(
    list: ListName,
    resellerId: number,
    q: Pick<ListQuery, 'filter' | 'sort' | 'dir'>,
    after: RowKey | null,
    limit: number
  ): Promise<ExportBatch> {
    const full = { ...q, position: 0, limit }
    const spec =
      list === 'orders'
        ? this.orderSpec(resellerId, full)
        : list === 'invoices'
          ? this.invoiceSpec(full)
          : this.ledgerSpec()
    const from =
      list === 'orders'
        ? 'orders o JOIN products p ON p.id = o.product_id'
        : list === 'invoices'
          ? 'invoices i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = o.product_id'
          : 'credit_transactions t'
    const keyExpr = spec.key ?? spec.id
    const where = [`${spec.reseller} = ?`, ...spec.where.sql]
    const args: SqlArg[] = [resellerId, ...spec.where.args]
    const dir = q.dir ?? spec.dir
    if (after) this.pushAfter(where, args, spec, after, dir)
    const rows = await this.db.arrays(
      `SELECT ${keyExpr}, ${spec.id}, ${EXPORT_COLUMNS[list]} FROM ${from} WHERE ${where.join(' AND ')}
       ORDER BY ${keyExpr} ${dir}, ${spec.id} ${dir} LIMIT ?`,
      ...args,
      limit
    )
    const money = MONEY_COLUMNS[list].map((m) => m + 2)
    const tail = rows.at(-1)
    const last = tail ? { key: tail[0] as string | number | null, id: tail[1] as number } : null
    // In place: a batch is turned into cells without a second copy of it.
    for (const r of rows) {
      for (const m of money) r[m] = centsText(r[m] as number)
      r.splice(0, 2)
    }
    return { rows: rows as (string | number | null)[][], last }
  }

  // ---- specs ----------------------------------------------------------------------------------

  private orderSpec(resellerId: number, q: ListQuery): ListSpec {
    const sort = ORDER_KEYS[q.sort ?? 'date']
    const where: Where = { sql: [], args: [] }
    if (q.filter.status) {
      where.sql.push('o.status = ?')
      where.args.push(q.filter.status)
    }
    if (q.filter.unpaid) where.sql.push(...UNPAID.sql)
    if (q.filter.view) {
      const v = viewWhere(q.filter.view, this.clock())
      where.sql.push(...v.sql)
      where.args.push(...v.args)
    }
    const term = q.filter.search?.trim()
    if (term) {
      if (ORDER_NUMBER.test(term)) {
        // A prefix as a range of the unique order_number index: no wildcard reaches LIKE.
        const prefix = term.toUpperCase()
        where.sql.push('o.id IN (SELECT id FROM orders WHERE order_number >= ? AND order_number < ?)')
        where.args.push(prefix, `${prefix}\uffff`)
      } else {
        // The same match as the reseller API's order list (Orders.list), over the same index, for
        // the term in the form domains are stored in (an IDN as its A-labels).
        const m = this.db.domainMatch(storedFormOf(term))
        where.sql.push(m.sql)
        where.args.push(...m.args)
      }
    }
    void resellerId
    return { from: 'orders o', id: 'o.id', reseller: 'o.reseller_id', key: sort.key, dir: sort.dir, where }
  }

  private invoiceSpec(q: ListQuery): ListSpec {
    const where: Where = { sql: [], args: [] }
    const status = q.filter.unpaid ? 'unpaid' : q.filter.status
    if (status) {
      where.sql.push('i.status = ?')
      where.args.push(status)
    }
    return { from: 'invoices i', id: 'i.id', reseller: 'i.reseller_id', key: null, dir: 'desc', where }
  }

  private ledgerSpec(): ListSpec {
    return {
      from: 'credit_transactions t',
      id: 't.id',
      reseller: 't.reseller_id',
      key: null,
      dir: 'desc',
      where: { sql: [], args: [] }
    }
  }

  private async orderTotal(resellerId: number, filter: ListFilter): Promise<number> {
    // A view alone is one of its tallies; combined with anything else, its index range is counted.
    if (filter.view && !filter.search?.trim() && !filter.status && !filter.unpaid)
      return await viewTotal(this.db, resellerId, filter.view, this.clock())
    if (filter.search?.trim() || filter.view) {
      const spec = this.orderSpec(resellerId, { filter, position: 0, limit: 1 })
      return (
        (await this.db.get(
          `SELECT COUNT(*) AS n FROM orders o WHERE o.reseller_id = ? AND ${spec.where.sql.join(' AND ')}`,
          resellerId,
          ...spec.where.args
        )) as { n: number }
      ).n
    }
    if (!filter.unpaid) return await countOrders(this.db, resellerId, filter.status)
    // Migration 0003's tallies are kept by status and payment status.
    if (filter.status === 'cancelled') return 0
    const row = filter.status
      ? await this.db.get(
          `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND payment_status = 'unpaid' AND status = ?`,
          resellerId,
          filter.status
        )
      : await this.db.get(
          `SELECT SUM(n) AS n FROM order_tallies WHERE reseller_id = ? AND payment_status = 'unpaid' AND status != 'cancelled'`,
          resellerId
        )
    return (row as { n: number | null }).n ?? 0
  }

  // ---- keys -----------------------------------------------------------------------------------

  private pushAfter(where: string[], args: SqlArg[], spec: ListSpec, at: RowKey, dir: Dir): void {
    const cmp = dir === 'asc' ? '>' : '<'
    if (spec.key === null) {
      where.push(`${spec.id} ${cmp} ?`)
      args.push(at.id)
    } else {
      where.push(`(${spec.key}, ${spec.id}) ${cmp} (?, ?)`)
      args.push(at.key, at.id)
    }
  }

  /** The keys of one page: after a row, before a row, or at a position counted from the nearer end. */
  private async keys(
    spec: ListSpec,
    resellerId: number,
    q: ListQuery,
    total: number
  ): Promise<{ keys: RowKey[]; position: number }> {
    const dir = q.dir ?? spec.dir
    const back: Dir = dir === 'asc' ? 'desc' : 'asc'
    const read = async (order: Dir, limit: number, offset: number, anchor?: RowKey): Promise<RowKey[]> => {
      const where = [`${spec.reseller} = ?`, ...spec.where.sql]
      const args: SqlArg[] = [resellerId, ...spec.where.args]
      if (anchor) this.pushAfter(where, args, spec, anchor, order)
      const keyExpr = spec.key ?? spec.id
      const rows = await this.db.arrays<[string | number | null, number]>(
        `SELECT ${keyExpr}, ${spec.id} FROM ${spec.from} WHERE ${where.join(' AND ')}
         ORDER BY ${keyExpr} ${order}, ${spec.id} ${order} LIMIT ? OFFSET ?`,
        ...args,
        limit,
        offset
      )
      return rows.map(([key, id]) => ({ key, id }))
    }
    if (q.after) return { keys: await read(dir, q.limit, 0, q.after), position: q.position }
    if (q.before) return { keys: (await read(back, q.limit, 0, q.before)).reverse(), position: q.position }
    const position = Math.max(0, Math.min(q.position, Math.max(0, total - 1)))
    const n = Math.min(q.limit, Math.max(0, total - position))
    const fromEnd = total - position - n
    // Counting from the nearer end: the oldest rows are read backwards from the end, not
    // reached by skipping a million index entries.
    if (fromEnd < position) return { keys: (await read(back, n, fromEnd)).reverse(), position }
    return { keys: await read(dir, q.limit, position), position }
  }
}
