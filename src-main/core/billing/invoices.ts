/** Invoices: one per order, `unpaid` -> `sent` -> `paid`, or `cancelled` with the order. */
import type { CoreContext } from '../context'
import type { SqlArg } from '../store'
import { notFound } from '../errors'
import type { Page, Paging } from './ledger'
import { countInvoices } from './tallies'
import type { Invoice, InvoiceStatus } from '../../../src-shared/records'

export { INVOICE_STATUSES } from '../../../src-shared/constants'
export type { Invoice, InvoiceStatus } from '../../../src-shared/records'

const SELECT = `SELECT i.id, i.invoice_number AS invoiceNumber, i.order_id AS orderId, o.order_number AS orderNumber,
  o.domain, p.name AS productName, i.total_cents AS total, i.currency, i.status, i.due_date AS dueDate,
  i.created_at AS createdAt, i.paid_at AS paidAt, i.sent_at AS sentAt, i.cancelled_at AS cancelledAt
  FROM invoices i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = o.product_id`

export class Invoices {
  constructor(private readonly ctx: CoreContext) {}

  async list(resellerId: number, filter: { status?: InvoiceStatus }, page: Paging): Promise<Page<Invoice>> {
    const where = filter.status ? 'i.reseller_id = ? AND i.status = ?' : 'i.reseller_id = ?'
    const args: SqlArg[] = filter.status ? [resellerId, filter.status] : [resellerId]
    // The page's ids first, from invoices_reseller or invoices_reseller_status alone: OFFSET then
    // skips index entries, not invoices joined with their orders and products.
    const items = (await this.ctx.store.all(
      `${SELECT} WHERE i.id IN (SELECT i.id FROM invoices i WHERE ${where} ORDER BY i.id DESC LIMIT ? OFFSET ?)
         ORDER BY i.id DESC`,
      ...args,
      page.limit,
      page.offset
    )) as Invoice[]
    return { items, total: await countInvoices(this.ctx.store, resellerId, filter.status), ...page }
  }

  async get(resellerId: number, id: number): Promise<Invoice> {
    const row = (await this.ctx.store.get(`${SELECT} WHERE i.id = ? AND i.reseller_id = ?`, id, resellerId)) as
      Invoice | undefined
    if (!row) throw notFound(`invoice ${id} not found`)
    return row
  }
}
