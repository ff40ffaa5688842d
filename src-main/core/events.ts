/**
 * The event log: what happened to orders and certificates, in SQLite. It feeds GET /events,
 * the deploy webhooks and the desktop notifications. `record` takes the db handle so
 * callers write the event inside the transaction that made the change: an order is never
 * created without its `order.created` event, and never the other way round.
 */
import type { CoreContext } from './context'
import type { Db } from './db'
import { resellerDeployEvent } from './deploy/deploy-events'
import type { Page, Paging } from './ledger'
import { addDays, isoDate, isoTimestamp } from './time'

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
  'certificate.revoked',
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
export function recordEvent(db: Db, at: Date, e: EventInput): number {
  const info = db
    .prepare('INSERT INTO events (reseller_id, order_id, type, message, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(e.resellerId, e.orderId ?? null, e.type, e.message, JSON.stringify(e.data ?? {}), isoTimestamp(at))
  return Number(info.lastInsertRowid)
}

export class Events {
  constructor(private readonly ctx: CoreContext) {}

  record(e: EventInput): number {
    return recordEvent(this.ctx.db, this.ctx.clock(), e)
  }

  /**
   * One `certificate.expiring` event per certificate that ends within EXPIRY_NOTICE_DAYS with
   * no reissue planned (spec: "When the subscription ends, no reissue is made"). Idempotent, so
   * every scheduler pass may call it; returns the orders it announced.
   */
  noticeExpiring(): number[] {
    const now = this.ctx.clock()
    const db = this.ctx.db
    const rows = db
      .prepare(
        `SELECT o.id, o.reseller_id, o.order_number, o.domain, o.cert_valid_till, o.purchase_end_date FROM orders o
          WHERE o.status = 'completed' AND o.next_reissue_at IS NULL AND o.cert_valid_till IS NOT NULL
            AND o.cert_valid_till >= ? AND o.cert_valid_till <= ?
            AND NOT EXISTS (SELECT 1 FROM events e WHERE e.order_id = o.id AND e.type = 'certificate.expiring'
                              AND json_extract(e.data, '$.valid_till') = o.cert_valid_till)
          ORDER BY o.id`
      )
      .all(isoDate(now), isoDate(addDays(now, EXPIRY_NOTICE_DAYS))) as {
      id: number
      reseller_id: number
      order_number: string
      domain: string
      cert_valid_till: string
      purchase_end_date: string
    }[]
    db.transaction(() => {
      for (const o of rows) {
        recordEvent(db, now, {
          type: 'certificate.expiring',
          resellerId: o.reseller_id,
          orderId: o.id,
          message: `Certificate of order ${o.order_number}${o.domain ? ` (${o.domain})` : ''} expires on ${o.cert_valid_till} and will not be renewed: the subscription ends on ${o.purchase_end_date}`,
          data: { valid_till: o.cert_valid_till, purchase_end_date: o.purchase_end_date }
        })
      }
    }).immediate()
    return rows.map((r) => r.id)
  }

  /**
   * The reseller's events, newest first, as the reseller may read them (deploy events without
   * the admin's paths, URLs or commands); `resellerId: null` lists every reseller's with the
   * admin's full detail (the desktop app and `certdesk admin events list`).
   */
  list(resellerId: number | null, filter: EventFilter, page: Paging): Page<CertEvent> {
    // The admin's own events (alerts) are read with `listAdmin`; this log is the reseller API's.
    const where: string[] = [`e.type NOT IN (${ADMIN_EVENT_TYPES.map((t) => `'${t}'`).join(', ')})`]
    const args: unknown[] = []
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
    const rows = this.ctx.db
      .prepare(
        `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
         ${sqlWhere} ORDER BY e.id DESC LIMIT ? OFFSET ?`
      )
      .all(...args, page.limit, page.offset) as EventRow[]
    const { n } = this.ctx.db.prepare(`SELECT COUNT(*) AS n FROM events e ${sqlWhere}`).get(...args) as { n: number }
    // A reseller reads what happened to its orders; the admin's deploy configuration stays out.
    const view = resellerId === null ? (e: CertEvent): CertEvent => e : resellerDeployEvent
    return {
      items: rows.map((r) => view(eventOf(r))),
      total: n,
      ...page
    }
  }

  /** The admin's own events of one type (alert.raised, alert.cleared), newest first. */
  listAdmin(type: AdminEventType, page: Paging): Page<Omit<CertEvent, 'type'> & { type: AdminEventType }> {
    const rows = this.ctx.db
      .prepare(
        `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
          WHERE e.reseller_id IS NULL AND e.type = ? ORDER BY e.id DESC LIMIT ? OFFSET ?`
      )
      .all(type, page.limit, page.offset) as (Omit<EventRow, 'type'> & { type: AdminEventType })[]
    const { n } = this.ctx.db
      .prepare('SELECT COUNT(*) AS n FROM events WHERE reseller_id IS NULL AND type = ?')
      .get(type) as { n: number }
    return {
      items: rows.map(eventOf),
      total: n,
      ...page
    }
  }
}
