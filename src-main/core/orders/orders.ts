/**
 * Orders: pricing, creation with its debit and invoice in one transaction, listing, cancel
 * with refund, and paying an on-invoice order from credit (reseller API v3.0, "Order";
 * docs/decisions.md, "Money and orders").
 */
import { randomBytes } from 'node:crypto'
import type { AcmeSubscriptions } from '../acme-server/acme-subscriptions'
import type { Catalogue, Product } from '../billing/catalogue'
import { autoReissues, isAcmeProduct } from '../billing/catalogue'
import type { CoreContext } from '../context'
import { normalizeDomain } from '../dcv/domains'
import { conflict, invalid, notFound } from '../errors'
import { recordEvent, recordEvents } from '../events'
import { coversDebit, post, type Page, type Paging } from '../billing/ledger'
import { OrderCache, pagesAfterOrder, type OrderRef } from './order-cache'
import { SearchTotals } from './order-search'
import { countOrders } from '../billing/tallies'
import { resellerScope } from '../store/store-version'
import type { ScopeVersions } from '../store'
import { validityWindow, maxValidityFor } from '../certificates/lifecycle'
import type { Cents } from '../billing/money'
import { priceOrder, type Quote } from './order-quote'
import type { Reseller } from '../billing/resellers'
import type { Order, OrderFilter, OrderInput, OrderStatus, PaymentStatus, QuoteView } from '../../../src-shared/records'
import { addDays, addMonths, isoDate, isoTimestamp, parseDate, startOfDay } from '../time'

/**
 * A reseller's money transactions run one after another, on this node and across the nodes of a
 * shared store (TxOptions.queue): they all write its balance, tallies and cache scope.
 */
const RESELLER_QUEUE = (resellerId: number) => ({ queue: resellerScope(resellerId) })

export { ORDER_STATUSES } from '../../../src-shared/constants'
export type { Quote } from './order-quote'
export type { Order, OrderFilter, OrderInput, OrderStatus, PaymentStatus, QuoteView } from '../../../src-shared/records'

/**
 * States an order can be cancelled from (reseller API v3.0, "States and transitions": pending
 * or processing only).
 */
const CANCELLABLE: OrderStatus[] = ['pending', 'processing']

/** The store's notification channel of orders placed, for the other nodes of a shared store. */
export const ORDER_PLACED_CHANNEL = 'certdesk_order_placed'

/** What an order placed tells the other nodes: who placed it, reseller, order, balance after, versions. */
interface PlacedNote {
  n: string
  r: number
  o: number
  b: Cents
  from: ScopeVersions
  to: ScopeVersions
}

/** Unpaid invoices are due this many days after the order. */
export const INVOICE_TERMS_DAYS = 14

export interface CreatedOrder {
  order: Order
  creditUsed: Cents
  newBalance: Cents
  /** ACME products: the subscription created with the order, or why it could not be (order cancelled, refunded). */
  subscription?: { id: number } | { error: string; refunded: Cents }
  /**
   * The reseller's scope versions just before and just after this order was written, both read
   * inside its transaction: an answer that was current at `from` and is moved forward by exactly
   * this order (one new order, newest of all; the balance) is current at `to`. Absent for an
   * ACME product, whose subscription is written after that transaction.
   */
  moved?: { from: ScopeVersions; to: ScopeVersions }
}

/**
 * One row of ORDER_SELECT, in its column order. Orders are read as arrays (`Queryable.arrays`): for a page of 50 orders that costs about half of what building the row objects natively
 * does, and a reseller's pages are rebuilt after each of its writes.
 */
type OrderRow = [
  id: number,
  orderNumber: string,
  resellerId: number,
  productId: number,
  productName: string,
  brand: string,
  productType: Product['type'],
  validationType: Product['validationType'],
  domain: string,
  periodMonths: number,
  sanCount: number,
  sanWildcardCount: number,
  contactEmail: string | null,
  basePrice: number,
  sanTotal: number,
  discountAmount: number,
  total: number,
  status: OrderStatus,
  paymentStatus: PaymentStatus,
  autoReissue: number,
  purchaseEndDate: string,
  reissueCount: number,
  certValidFrom: string | null,
  certValidTill: string | null,
  nextReissueAt: string | null,
  statusNote: string | null,
  invoiceNumber: string | null,
  invoiceStatus: string | null,
  createdAt: string,
  updatedAt: string
]

const ORDER_SELECT = `SELECT o.id, o.order_number, o.reseller_id, o.product_id, p.name, p.brand, p.type, p.validation_type,
  o.domain, o.period_months, o.san_count, o.san_wildcard_count, o.contact_email, o.base_price_cents, o.san_total_cents,
  o.discount_cents, o.total_cents, o.status, o.payment_status, o.auto_reissue, o.purchase_end_date, o.reissue_count,
  o.cert_valid_from, o.cert_valid_till, o.next_reissue_at, o.status_note, i.invoice_number, i.status, o.created_at, o.updated_at
  FROM orders o JOIN products p ON p.id = o.product_id LEFT JOIN invoices i ON i.order_id = o.id`

export const orderNumber = (prefix: 'ORD' | 'INV', id: number, at: Date): string =>
  `${prefix}-${at.getUTCFullYear()}-${String(id).padStart(6, '0')}`

export class Orders {
  /** Orders built for earlier pages (order-cache.ts). */
  private readonly kept: OrderCache
  /** Totals of `?domain=` searches (order-search.ts). */
  private readonly searchTotals: SearchTotals
  /** This service among those on one store, in the notes of its orders: it moved its own already. */
  private readonly origin = randomBytes(6).toString('hex')

  constructor(
    private readonly ctx: CoreContext,
    private readonly catalogue: Catalogue,
    private readonly subscriptions?: AcmeSubscriptions,
    /**
     * True when an external CA will issue this product's certificates: their lifetime, and so the
     * reissue schedule, is the CA's, known only once it has issued (lifecycle.ts).
     */
    private readonly externalCa?: (product: Product) => Promise<boolean>
  ) {
    this.kept = new OrderCache(ctx.store)
    this.searchTotals = new SearchTotals(ctx.store)
  }

  /**
   * The price of an order as the desktop app shows it before placing it, with the balance and
   * whether paying from credit would go through (the same rule the debit applies: 402 otherwise).
   */
  async quoteView(reseller: Reseller, input: OrderInput): Promise<QuoteView> {
    const q = await this.quote(reseller, input)
    const balance = (
      (await this.ctx.store.get('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?', reseller.id)) as {
        b: number
      }
    ).b
    return {
      productName: q.product.name,
      domain: q.domain,
      periodMonths: q.periodMonths,
      basePrice: q.basePrice,
      sanTotal: q.sanTotal,
      discountRate: reseller.discountRate,
      discountAmount: q.discountAmount,
      total: q.total,
      balance,
      affordable: coversDebit(balance, q.total)
    }
  }

  async quote(reseller: Reseller, input: OrderInput): Promise<Quote> {
    const product = await this.catalogue.product(reseller.groupId, input.productId)
    return priceOrder(product, reseller, input, () => this.orderDomain(product, input.domain))
  }

  /**
   * Places an order. `credit` (every API order) debits the total at once, or fails with 402
   * and creates nothing; `invoice` (the desktop app's "on invoice") leaves it unpaid with an
   * unpaid invoice for POST /credits to settle.
   */
  async create(reseller: Reseller, input: OrderInput, payment: 'credit' | 'invoice' = 'credit'): Promise<CreatedOrder> {
    const { created, product } = await this.placeTx(reseller, input, payment)
    if (!isAcmeProduct(product)) return created
    const { moved: _written, ...placed } = created
    return await this.subscribe(reseller, placed, product)
  }

  /**
   * Priced and written in one write transaction: the order pays the price the catalogue holds
   * when it is written, even while another process changes prices, and the catalogue's reads
   * run under the transaction's lock instead of each opening a read transaction of its own
   * (profiled: a visible share of a POST /orders).
   */
  private async placeTx(
    reseller: Reseller,
    input: OrderInput,
    payment: 'credit' | 'invoice'
  ): Promise<{ created: CreatedOrder; product: Product }> {
    const store = this.ctx.store
    // On a shared store, before the reseller's turn: an order the catalogue refuses holds no one
    // up and takes no number (a sequence gives none back), and whether an external CA will issue
    // it (which decides its reissue schedule) is a setting read outside the turn. On one desk
    // the turn costs no round trips and a refused order's ids go back with its transaction.
    const issuer = async (product: Product) => (await this.externalCa?.(product)) === true
    const externalFirst = this.ctx.sharedStore ? await issuer((await this.quote(reseller, input)).product) : undefined
    // One reseller's orders run one after another on every engine: each changes its balance.
    // The function awaits only its own statements, so orders that arrive together may share a
    // COMMIT (SQLite; TxOptions.shareCommit).
    const turn = { ...RESELLER_QUEUE(reseller.id), shareCommit: true }
    return await store.tx(async (t) => {
      // The versions before, the price the catalogue holds now and the ids of the order and
      // its invoice (its number is shown before the row exists: ORD-2026-000042) start
      // together: on PostgreSQL they go out with the transaction's start.
      const [from, q, id, invoiceId] = await Promise.all([
        store.scopeVersions(reseller.id),
        this.quote(reseller, input),
        t.nextId('orders'),
        t.nextId('invoices')
      ])
      const external = externalFirst ?? (await issuer(q.product))
      // The versions after are read behind the order's last statement, in the same round trip.
      const { created, after: to } = await this.place(reseller, q, payment, { id, invoiceId, external }, () =>
        store.scopeVersions(reseller.id)
      )
      // The other nodes of a shared store move what they keep of this reseller forward too.
      if (this.ctx.sharedStore && !isAcmeProduct(q.product)) {
        const note: PlacedNote = {
          n: this.origin,
          r: reseller.id,
          o: created.order.id,
          b: created.newBalance,
          from,
          to
        }
        t.notify(ORDER_PLACED_CHANNEL, JSON.stringify(note))
      }
      return { created: { ...created, moved: { from, to } }, product: q.product }
    }, turn)
  }

  /**
   * Calls `fn` for every order another node of a shared store places (after its commit), with
   * what `create` answered there: the order as it is now, the balance the order left and the
   * reseller's versions just before and just after it, so that what this node keeps can be moved
   * forward as the placing node moved its own. A notification lost (a dropped connection) costs
   * only that: the kept answers are rebuilt when next asked for. Answers the unsubscribe.
   */
  async watchPlacedElsewhere(
    fn: (resellerId: number, placed: Required<Pick<CreatedOrder, 'order' | 'newBalance' | 'moved'>>) => Promise<void>
  ): Promise<() => Promise<void>> {
    return this.ctx.store.listen(ORDER_PLACED_CHANNEL, (payload) => {
      let note: PlacedNote
      try {
        note = JSON.parse(payload) as PlacedNote
      } catch {
        return
      }
      if (note.n === this.origin) return
      void this.get(note.r, note.o)
        .then((order) => fn(note.r, { order, newBalance: note.b, moved: { from: note.from, to: note.to } }))
        .catch(() => undefined)
    })
  }

  /**
   * Spec "Order transitions": an ACME subscription order is `completed` as soon as its
   * subscription exists; when the subscription cannot be created the order ends `cancelled`
   * and what was paid goes back to credit, in one transaction with its ledger row.
   */
  private async subscribe(reseller: Reseller, created: CreatedOrder, product: Product): Promise<CreatedOrder> {
    const db = this.ctx.store
    const orderId = created.order.id
    try {
      if (!this.subscriptions) throw new Error('ACME subscriptions are not set up in this service')
      const sub = await this.subscriptions.create(created.order, product)
      await db.run(
        `UPDATE orders SET status = 'completed', next_reissue_at = NULL, updated_at = ? WHERE id = ?`,
        isoTimestamp(this.ctx.clock()),
        orderId
      )
      return { ...created, order: await this.get(reseller.id, orderId), subscription: { id: sub.id } }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err)
      const undone = await db.tx(async () => {
        await db.run(
          `UPDATE orders SET status = 'processing', status_note = ? WHERE id = ?`,
          `could not create the ACME subscription: ${reason}`,
          orderId
        )
        return await this.cancel(reseller.id, orderId)
      })
      return {
        order: undone.order,
        creditUsed: created.creditUsed,
        newBalance: undone.newBalance,
        subscription: { error: reason, refunded: undone.refunded }
      }
    }
  }

  /**
   * Writes an order with its debit, invoice and events; call only inside `placeTx`. Statements
   * that do not wait for each other's answers start together: on PostgreSQL they go to the
   * server in one round trip (store/postgres-engine.ts `send`), on SQLite they run in the order
   * they are started. A debit refused with 402 rolls back every one of them with the transaction.
   */
  private async place<A>(
    reseller: Reseller,
    q: Quote,
    payment: 'credit' | 'invoice',
    { id, invoiceId, external }: { id: number; invoiceId: number; external: boolean },
    /** Started behind the order's writes; its answer comes back as `after`. */
    then: () => Promise<A>
  ): Promise<{ created: CreatedOrder; after: A }> {
    const db = this.ctx.store
    const now = this.ctx.clock()
    const ts = isoTimestamp(now)
    const number = orderNumber('ORD', id, now)
    const purchaseEnd = addMonths(startOfDay(now), q.periodMonths)
    const auto = autoReissues(q.product)
    const window = validityWindow(q.product, now, purchaseEnd, auto)
    // The local CA's schedule is known now; an external CA's only from the certificate it issues.
    const planned = external ? { nextReissueAt: null } : window
    const paid = payment === 'credit'
    const debited = paid && q.total > 0
    const [, posting, invoiceNumber, , after] = await Promise.all([
      db.run(
        `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, san_count,
           san_wildcard_count, contact_email, base_price_cents, san_total_cents, discount_cents, total_cents,
           status, payment_status, auto_reissue, purchase_end_date, next_reissue_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)`,
        id,
        number,
        reseller.id,
        q.product.id,
        q.domain,
        q.periodMonths,
        q.sanCount,
        q.sanWildcardCount,
        q.contactEmail,
        q.basePrice,
        q.sanTotal,
        q.discountAmount,
        q.total,
        paid ? 'paid' : 'unpaid',
        auto ? 1 : 0,
        isoDate(purchaseEnd),
        planned.nextReissueAt ? isoDate(planned.nextReissueAt) : null,
        ts,
        ts
      ),
      debited
        ? post(db, {
            resellerId: reseller.id,
            amount: -q.total,
            description: `Order ${number}: ${q.product.name}${q.domain ? ` for ${q.domain}` : ''}, ${q.years} year(s)`,
            orderId: id,
            at: now
          })
        : null,
      this.insertInvoice(invoiceId, id, reseller.id, q.total, paid ? 'paid' : 'unpaid', now),
      // Both events in one statement.
      recordEvents(db, now, [
        {
          type: 'order.created',
          resellerId: reseller.id,
          orderId: id,
          message: `Order ${number} created for ${q.domain || q.product.name}`,
          data: { product_id: q.product.id, total_cents: q.total }
        },
        ...(paid
          ? [
              {
                type: 'order.paid',
                resellerId: reseller.id,
                orderId: id,
                message: `Order ${number} paid from credit`,
                data: { amount_cents: q.total }
              } as const
            ]
          : [])
      ]),
      then()
    ])
    const creditUsed = debited ? q.total : 0
    let balance: Cents | null = posting ? posting.balanceAfter : null
    if (balance === null)
      balance = (
        (await db.get('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?', reseller.id)) as {
          b: number
        }
      ).b
    // The order as the rows just written hold it, without reading them back: every value is
    // one this transaction wrote (test/core/order-create.test.ts compares it with `get`).
    const order: Order = {
      id,
      orderNumber: number,
      resellerId: reseller.id,
      productId: q.product.id,
      productName: q.product.name,
      brand: q.product.brand,
      productType: q.product.type,
      validationType: q.product.validationType,
      domain: q.domain,
      periodMonths: q.periodMonths,
      sanCount: q.sanCount,
      sanWildcardCount: q.sanWildcardCount,
      contactEmail: q.contactEmail,
      basePrice: q.basePrice,
      sanTotal: q.sanTotal,
      discountAmount: q.discountAmount,
      total: q.total,
      status: 'pending',
      paymentStatus: paid ? 'paid' : 'unpaid',
      autoReissue: auto,
      maxValidityDays: maxValidityFor({ type: q.product.type }, parseDate(ts)),
      purchaseEndDate: isoDate(purchaseEnd),
      reissueCount: 0,
      certValidFrom: null,
      certValidTill: null,
      nextReissueAt: planned.nextReissueAt ? isoDate(planned.nextReissueAt) : null,
      statusNote: null,
      invoiceNumber,
      invoiceStatus: paid ? 'paid' : 'unpaid',
      createdAt: ts,
      updatedAt: ts
    }
    return { created: { order, creditUsed, newBalance: balance }, after }
  }

  async get(resellerId: number, orderId: number): Promise<Order> {
    const [row] = await this.ctx.store.arrays<OrderRow>(
      `${ORDER_SELECT} WHERE o.id = ? AND o.reseller_id = ?`,
      orderId,
      resellerId
    )
    // Another reseller's order is 404, never 403 (docs/decisions.md): its existence is not disclosed.
    if (!row) throw notFound(`order ${orderId} not found`)
    return this.toOrder(row)
  }

  async list(resellerId: number, filter: OrderFilter, page: Paging): Promise<Page<Order>> {
    const db = this.ctx.store
    const term = filter.domain ? filter.domain.toLowerCase() : null
    const search = term === null ? null : db.domainQuery(resellerId, term, filter.status)
    // Without a term: the index of migration 0003 that serves the filter and the order alone
    // (OFFSET skips index entries, not joined rows).
    const inner = search
      ? search.page
      : {
          sql: `SELECT o.id FROM orders o WHERE o.reseller_id = ?${filter.status ? ' AND o.status = ?' : ''} ORDER BY o.id DESC LIMIT ? OFFSET ?`,
          args: filter.status ? [resellerId, filter.status] : [resellerId]
        }
    // One read transaction: the page's ids and versions, and the orders read for them, come
    // from one snapshot even while another process writes.
    return await db.tx(
      async (): Promise<Page<Order>> => {
        // The page's ids first, each with its number in order_versions.
        const refs = await db.arrays<OrderRef>(
          `SELECT p.id, COALESCE(v.v, 0) FROM (${inner.sql}) p
         LEFT JOIN order_versions v ON v.order_id = p.id ORDER BY p.id DESC`,
          ...inner.args,
          page.limit,
          page.offset
        )
        const items = await this.kept.resolve(refs, async (ids) => await this.load(ids))
        const total =
          search && term !== null
            ? await this.searchTotals.total(resellerId, term, filter.status, async () => {
                const row = (await db.get(search.count.sql, ...search.count.args)) as { n: number }
                return row.n
              })
            : await countOrders(db, resellerId, filter.status)
        return { items, total, ...page }
      },
      { readOnly: true }
    )
  }

  /**
   * The reseller's unfiltered newest-first pages just after the order `placed`, worked out from
   * pages that were current just before it (at `placed.moved.from`): see `pagesAfterOrder`.
   * Null for a page that cannot be worked out without reading it again.
   */
  async pagesAfter(
    resellerId: number,
    placed: { order: Order; moved: NonNullable<CreatedOrder['moved']> },
    pages: readonly Page<Order>[]
  ): Promise<(Page<Order> | null)[]> {
    // Frozen like the orders kept here: later pages share it and nobody may change it in place.
    const order = Object.freeze({ ...placed.order })
    return await pagesAfterOrder(pages, order, async (index) => await this.orderAt(resellerId, index, placed.moved.to))
  }

  /**
   * The order at `index` (from 0) of the reseller's newest-first list, read only while the
   * reseller's scope is still at `at`: null once anything moved it on, or when no order stands
   * there.
   */
  private async orderAt(resellerId: number, index: number, at: ScopeVersions): Promise<Order | null> {
    const db = this.ctx.store
    return await db.tx(
      async (): Promise<Order | null> => {
        const now = await db.scopeVersions(resellerId)
        if (now.reseller !== at.reseller || now.catalogue !== at.catalogue) return null
        const [ref] = await db.arrays<OrderRef>(
          `SELECT p.id, COALESCE(v.v, 0) FROM
           (SELECT o.id FROM orders o WHERE o.reseller_id = ? ORDER BY o.id DESC LIMIT 1 OFFSET ?) p
         LEFT JOIN order_versions v ON v.order_id = p.id`,
          resellerId,
          index
        )
        return ref ? (await this.kept.resolve([ref], async (ids) => await this.load(ids)))[0] : null
      },
      { readOnly: true }
    )
  }

  /** Orders by id, read whole. */
  async load(ids: number[]): Promise<Order[]> {
    const store = this.ctx.store
    const list = store.inList(ids)
    const rows = await store.arrays<OrderRow>(`${ORDER_SELECT} WHERE o.id ${list.sql}`, list.arg)
    return rows.map((r) => this.toOrder(r))
  }

  /**
   * Cancels an order in `pending` or `processing` (anything else is 409), refunds what was paid
   * as a credit transaction and cancels the invoice, all in one transaction.
   */
  async cancel(resellerId: number, orderId: number): Promise<{ order: Order; refunded: Cents; newBalance: Cents }> {
    const db = this.ctx.store
    return await db.tx(async () => {
      const order = await this.get(resellerId, orderId)
      if (!CANCELLABLE.includes(order.status)) {
        throw conflict(
          `order ${order.orderNumber} is ${order.status}; only pending or processing orders can be cancelled`
        )
      }
      const now = this.ctx.clock()
      const ts = isoTimestamp(now)
      let refunded = 0
      if (order.paymentStatus === 'paid' && order.total > 0) {
        await post(db, {
          resellerId,
          amount: order.total,
          description: `Refund for cancelled order ${order.orderNumber}`,
          orderId,
          at: now
        })
        refunded = order.total
      }
      await db.run(
        `UPDATE orders SET status = 'cancelled', payment_status = CASE WHEN payment_status = 'paid' THEN 'refunded' ELSE payment_status END,
             next_reissue_at = NULL, updated_at = ? WHERE id = ?`,
        ts,
        orderId
      )
      await db.run(`UPDATE invoices SET status = 'cancelled', cancelled_at = ? WHERE order_id = ?`, ts, orderId)
      await recordEvent(db, now, {
        type: 'order.cancelled',
        resellerId,
        orderId,
        message: `Order ${order.orderNumber} cancelled`,
        data: { refunded_cents: refunded }
      })
      const balance = (
        (await db.get('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?', resellerId)) as {
          b: number
        }
      ).b
      return { order: await this.get(resellerId, orderId), refunded, newBalance: balance }
    }, RESELLER_QUEUE(resellerId))
  }

  /** POST /credits: pays an unpaid order from the balance (402 when short, 409 when not unpaid). */
  async payFromCredit(
    resellerId: number,
    orderId: number
  ): Promise<{ order: Order; amountPaid: Cents; newBalance: Cents }> {
    const db = this.ctx.store
    return await db.tx(async () => {
      const order = await this.get(resellerId, orderId)
      if (order.paymentStatus !== 'unpaid')
        throw conflict(`order ${order.orderNumber} is already ${order.paymentStatus}`)
      if (order.status === 'cancelled') throw conflict(`order ${order.orderNumber} is cancelled`)
      const now = this.ctx.clock()
      const ts = isoTimestamp(now)
      const tx =
        order.total > 0
          ? await post(db, {
              resellerId,
              amount: -order.total,
              description: `Payment of invoice ${order.invoiceNumber ?? ''} for order ${order.orderNumber}`,
              orderId,
              at: now
            })
          : null
      await db.run(`UPDATE orders SET payment_status = 'paid', updated_at = ? WHERE id = ?`, ts, orderId)
      await db.run(`UPDATE invoices SET status = 'paid', paid_at = ? WHERE order_id = ?`, ts, orderId)
      await recordEvent(db, now, {
        type: 'order.paid',
        resellerId,
        orderId,
        message: `Order ${order.orderNumber} paid from credit`,
        data: { amount_cents: order.total }
      })
      const newBalance = tx
        ? tx.balanceAfter
        : (
            (await db.get('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?', resellerId)) as {
              b: number
            }
          ).b
      return { order: await this.get(resellerId, orderId), amountPaid: order.total, newBalance }
    }, RESELLER_QUEUE(resellerId))
  }

  /** Writes the order's invoice; returns its number. */
  private async insertInvoice(
    id: number,
    orderId: number,
    resellerId: number,
    total: Cents,
    status: 'paid' | 'unpaid',
    now: Date
  ): Promise<string> {
    const db = this.ctx.store
    const ts = isoTimestamp(now)
    const number = orderNumber('INV', id, now)
    await db.run(
      `INSERT INTO invoices (id, invoice_number, order_id, reseller_id, total_cents, status, due_date, created_at, paid_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      number,
      orderId,
      resellerId,
      total,
      status,
      isoDate(status === 'paid' ? now : addDays(now, INVOICE_TERMS_DAYS)),
      ts,
      status === 'paid' ? ts : null
    )
    return number
  }

  private orderDomain(product: Product, domain: string | undefined): string {
    if (product.type === 'code-signing') {
      if (domain !== undefined && domain.trim() !== '') throw invalid('code-signing products take no domain')
      return ''
    }
    if (domain === undefined || domain.trim() === '') throw invalid('domain is required')
    const wildcard = product.type === 'wildcard' || product.wildcardOnly ? 'required' : 'forbidden'
    return normalizeDomain(domain, wildcard)
  }

  private toOrder(r: OrderRow): Order {
    const [
      id,
      orderNumber,
      resellerId,
      productId,
      productName,
      brand,
      productType,
      validationType,
      domain,
      periodMonths,
      sanCount,
      sanWildcardCount,
      contactEmail,
      basePrice,
      sanTotal,
      discountAmount,
      total,
      status,
      paymentStatus,
      autoReissue,
      purchaseEndDate,
      reissueCount,
      certValidFrom,
      certValidTill,
      nextReissueAt,
      statusNote,
      invoiceNumber,
      invoiceStatus,
      createdAt,
      updatedAt
    ] = r
    return {
      id,
      orderNumber,
      resellerId,
      productId,
      productName,
      brand,
      productType,
      validationType,
      domain,
      periodMonths,
      sanCount,
      sanWildcardCount,
      contactEmail,
      basePrice,
      sanTotal,
      discountAmount,
      total,
      status,
      paymentStatus,
      autoReissue: autoReissue === 1,
      maxValidityDays: maxValidityFor({ type: productType }, parseDate(certValidFrom || createdAt)),
      purchaseEndDate,
      reissueCount,
      certValidFrom,
      certValidTill,
      nextReissueAt,
      statusNote,
      invoiceNumber,
      invoiceStatus,
      createdAt,
      updatedAt
    }
  }
}
