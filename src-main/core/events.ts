/**
 * The event log: what happened to orders and certificates, in SQLite. It feeds GET /events,
 * the deploy webhooks and the desktop notifications. `record` takes the db handle so
 * callers write the event inside the transaction that made the change: an order is never
 * created without its `order.created` event, and never the other way round.
 */
import type { CoreContext } from './context'
import { resellerDeployEvent } from './deploy/deploy-events'
import type { Page, Paging } from './ledger'
import { addDays, isoDate, isoTimestamp } from './time'
import type { SqlArg, Store } from './store'

/**
 * Days before expiry at which a certificate that will not be renewed (its subscription ends,
 * or code signing) is announced once as `certificate.expiring`; the same lead the large CAs use
 * for their first renewal notice.
 */
export const EXPIRY_NOTICE_DAYS = 30

export const EVENT_TYPES = [
  'order.created',
  'order.paid',
  'order.cancelled',
  'validation.passed',
  'validation.failed',
  'certificate.issued',
  'certificate.reissued',
  'certificate.expiring',
  'deploy.succeeded',
  'deploy.failed',
  'subscription.created',
  'installation.passed',
  'installation.failed',
  'certificate.imported'
] as const
/**
 * Events only the admin reads (no reseller: GET /events and the reseller's log never show them),
 * because what they say may name the admin's paths, hosts and channels (alerts/).
 */
export const ADMIN_EVENT_TYPES = ['alert.raised', 'alert.cleared'] as const
export type EventType = (typeof EVENT_TYPES)[number]
export type AdminEventType = (typeof ADMIN_EVENT_TYPES)[number]

export interface EventInput {
  type: EventType | AdminEventType
  resellerId: number | null
  orderId?: number | null
  message: string
  /** Details for scripts; JSON, never a secret or a private key. */
  data?: Record<string, unknown>
}

export interface CertEvent {
  id: number
  type: EventType
  resellerId: number | null
  orderId: number | null
  orderNumber: string | null
  message: string
  data: Record<string, unknown>
  createdAt: string
}

export interface EventFilter {
  type?: EventType
  /** Events at or after this instant. */
  since?: Date
  orderId?: number
}

interface EventRow {
  id: number
  type: EventType
  reseller_id: number | null
  order_id: number | null
  order_number: string | null
  message: string
  data: string
  created_at: string
}

/** An event as read back, whatever set its type is from. */
const eventOf = <T extends string>(r: Omit<EventRow, 'type'> & { type: T }): Omit<CertEvent, 'type'> & { type: T } => ({
  id: r.id,
  type: r.type,
  resellerId: r.reseller_id,
  orderId: r.order_id,
  orderNumber: r.order_number,
  message: r.message,
  data: JSON.parse(r.data) as Record<string, unknown>,
  createdAt: r.created_at
})

/** Writes one event; call inside the caller's transaction so it commits with the change. */
export async function recordEvent(db: Store, at: Date, e: EventInput): Promise<number> {
  const info = await db.insert(
    'INSERT INTO events (reseller_id, order_id, type, message, data, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    e.resellerId,
    e.orderId ?? null,
    e.type,
    e.message,
    JSON.stringify(e.data ?? {}),
    isoTimestamp(at)
  )
  return info
}

/**
 * Writes several events with one statement (one round trip to a PostgreSQL store), in the order
 * given; call inside the caller's transaction. An order placed from credit writes two.
 */
export async function recordEvents(db: Store, at: Date, events: readonly EventInput[]): Promise<void> {
  if (events.length === 0) return
  const args = events.flatMap((e) => [
    e.resellerId,
    e.orderId ?? null,
    e.type,
    e.message,
    JSON.stringify(e.data ?? {}),
    isoTimestamp(at)
  ])
  await db.run(
    `INSERT INTO events (reseller_id, order_id, type, message, data, created_at) VALUES ${events.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    ...args
  )
}

export class Events {
  constructor(private readonly ctx: CoreContext) {}

  async record(e: EventInput): Promise<number> {
    return await recordEvent(this.ctx.store, this.ctx.clock(), e)
  }

  /**
   * One `certificate.expiring` event per certificate that ends within EXPIRY_NOTICE_DAYS with
   * no reissue planned (spec: "When the subscription ends, no reissue is made"). Idempotent, so
   * every scheduler pass may call it; returns the orders it announced.
   */
  async noticeExpiring(): Promise<number[]> {
    const now = this.ctx.clock()
    const db = this.ctx.store
    return await db.tx(async () => {
      const rows = await db.all<{
        id: number
        reseller_id: number
        order_number: string
        domain: string
        cert_valid_till: string
        purchase_end_date: string
      }>(
        `SELECT o.id, o.reseller_id, o.order_number, o.domain, o.cert_valid_till, o.purchase_end_date FROM orders o
            WHERE o.status = 'completed' AND o.next_reissue_at IS NULL AND o.cert_valid_till IS NOT NULL
              AND o.cert_valid_till >= ? AND o.cert_valid_till <= ?
            ORDER BY o.id`,
        isoDate(now),
        isoDate(addDays(now, EXPIRY_NOTICE_DAYS))
      )
      if (rows.length === 0) return []
      // The notices already given, per order and end date (read here: the engines share no JSON functions).
      const ids = db.inList(rows.map((o) => o.id))
      const given = new Set(
        (
          await db.all<{ order_id: number; data: string | null }>(
            `SELECT order_id, data FROM events WHERE type = 'certificate.expiring' AND order_id ${ids.sql}`,
            ids.arg
          )
        ).map((e) => `${e.order_id} ${(JSON.parse(e.data ?? '{}') as { valid_till?: string }).valid_till}`)
      )
      const news = rows.filter((o) => !given.has(`${o.id} ${o.cert_valid_till}`))
      for (const o of news) {
        await recordEvent(db, now, {
          type: 'certificate.expiring',
          resellerId: o.reseller_id,
          orderId: o.id,
          message: `Certificate of order ${o.order_number}${o.domain ? ` (${o.domain})` : ''} expires on ${o.cert_valid_till} and will not be renewed: the subscription ends on ${o.purchase_end_date}`,
          data: { valid_till: o.cert_valid_till, purchase_end_date: o.purchase_end_date }
        })
      }
      return news.map((o) => o.id)
    })
  }

  /**
   * The reseller's events, newest first, as the reseller may read them (deploy events without
   * the admin's paths, URLs or commands); `resellerId: null` lists every reseller's with the
   * admin's full detail (the desktop app and `certdesk admin events list`).
   */
  async list(resellerId: number | null, filter: EventFilter, page: Paging): Promise<Page<CertEvent>> {
    // The admin's own events (alerts) are read with `listAdmin`; this log is the reseller API's.
    const where: string[] = [`e.type NOT IN (${ADMIN_EVENT_TYPES.map((t) => `'${t}'`).join(', ')})`]
    const args: SqlArg[] = []
    if (resellerId !== null) {
      where.push('e.reseller_id = ?')
      args.push(resellerId)
    }
    if (filter.type) {
      where.push('e.type = ?')
      args.push(filter.type)
    }
    if (filter.since) {
      // Timestamps are fixed-width UTC text, so text order is time order.
      where.push('e.created_at >= ?')
      args.push(isoTimestamp(filter.since))
    }
    if (filter.orderId !== undefined) {
      where.push('e.order_id = ?')
      args.push(filter.orderId)
    }
    const sqlWhere = `WHERE ${where.join(' AND ')}`
    const rows = (await this.ctx.store.all(
      `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
         ${sqlWhere} ORDER BY e.id DESC LIMIT ? OFFSET ?`,
      ...args,
      page.limit,
      page.offset
    )) as EventRow[]
    const { n } = (await this.ctx.store.get(`SELECT COUNT(*) AS n FROM events e ${sqlWhere}`, ...args)) as { n: number }
    // A reseller reads what happened to its orders; the admin's deploy configuration stays out.
    const view = resellerId === null ? (e: CertEvent): CertEvent => e : resellerDeployEvent
    return {
      items: rows.map((r) => view(eventOf(r))),
      total: n,
      ...page
    }
  }

  /** The admin's own events of one type (alert.raised, alert.cleared), newest first. */
  async listAdmin(
    type: AdminEventType,
    page: Paging
  ): Promise<Page<Omit<CertEvent, 'type'> & { type: AdminEventType }>> {
    const rows = (await this.ctx.store.all(
      `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
          WHERE e.reseller_id IS NULL AND e.type = ? ORDER BY e.id DESC LIMIT ? OFFSET ?`,
      type,
      page.limit,
      page.offset
    )) as (Omit<EventRow, 'type'> & { type: AdminEventType })[]
    const { n } = (await this.ctx.store.get(
      'SELECT COUNT(*) AS n FROM events WHERE reseller_id IS NULL AND type = ?',
      type
    )) as { n: number }
    return {
      items: rows.map(eventOf),
      total: n,
      ...page
    }
  }
}
