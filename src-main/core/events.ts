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

export const isAdminEventType = (type: string): type is AdminEventType =>
  (ADMIN_EVENT_TYPES as readonly string[]).includes(type)

/** Every type the admin's log holds and its filter takes: the reseller's and the admin's own. */
export const ADMIN_LOG_TYPES: readonly (EventType | AdminEventType)[] = [...EVENT_TYPES, ...ADMIN_EVENT_TYPES]

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

/** An event of the admin's log: a reseller's event, or one of the admin's own (an alert). */
export type AdminLogEvent = Omit<CertEvent, 'type'> & { type: EventType | AdminEventType }

export interface AdminEventFilter extends Omit<EventFilter, 'type'> {
  type?: EventType | AdminEventType
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
   * the admin's paths, URLs or commands): GET /events. `resellerId: null` lists every reseller's
   * with the admin's full detail. The admin's own events (alerts) are never in it: `adminLog`.
   */
  list(resellerId: number | null, filter: EventFilter, page: Paging): Page<CertEvent> {
    return this.read(resellerId, filter, page, false) as Page<CertEvent>
  }

  /**
   * The admin's event log (the desktop app's, `certdesk admin events list`): the events of one
   * reseller, or of all with `null`, together with the admin's own alert events about their
   * orders (docs/alerts.md), newest first; `filter.type` may be an alert type too.
   */
  adminLog(resellerId: number | null, filter: AdminEventFilter, page: Paging): Page<AdminLogEvent> {
    return this.read(resellerId, filter, page, true)
  }

  private read(
    resellerId: number | null,
    filter: AdminEventFilter,
    page: Paging,
    withAdminEvents: boolean
  ): Page<AdminLogEvent> {
    const common: string[] = []
    const commonArgs: unknown[] = []
    if (filter.type) {
      common.push('e.type = ?')
      commonArgs.push(filter.type)
    }
    if (filter.since) {
      // Timestamps are fixed-width UTC text, so text order is time order.
      common.push('e.created_at >= ?')
      commonArgs.push(isoTimestamp(filter.since))
    }
    if (filter.orderId !== undefined) {
      common.push('e.order_id = ?')
      commonArgs.push(filter.orderId)
    }
    const adminList = ADMIN_EVENT_TYPES.map((t) => `'${t}'`).join(', ')
    const adminType = filter.type !== undefined && isAdminEventType(filter.type)
    // Two sets, each read newest first through its own index: the reseller's events
    // (events_reseller) and the admin's alert events, which carry no reseller and belong to one
    // through their order (events_reseller_type with reseller_id NULL).
    const parts: { where: string; args: unknown[] }[] = []
    if (!adminType) {
      const own = resellerId === null ? [] : ['e.reseller_id = ?']
      parts.push({
        where: [`e.type NOT IN (${adminList})`, ...own, ...common].join(' AND '),
        args: [...(resellerId === null ? [] : [resellerId]), ...commonArgs]
      })
    }
    if (withAdminEvents) {
      const own = resellerId === null ? [] : ['e.order_id IN (SELECT id FROM orders WHERE reseller_id = ?)']
      parts.push({
        where: ['e.reseller_id IS NULL', `e.type IN (${adminList})`, ...own, ...common].join(' AND '),
        args: [...(resellerId === null ? [] : [resellerId]), ...commonArgs]
      })
    }
    if (parts.length === 0) return { items: [], total: 0, ...page }
    const db = this.ctx.db
    let rows: EventRow[]
    if (parts.length === 1) {
      rows = db
        .prepare(
          `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
           WHERE ${parts[0].where} ORDER BY e.id DESC LIMIT ? OFFSET ?`
        )
        .all(...parts[0].args, page.limit, page.offset) as EventRow[]
    } else {
      // A page of the merged sets needs at most offset + limit rows of each.
      const reach = Math.min(page.offset + page.limit, Number.MAX_SAFE_INTEGER)
      const arms = parts.map(
        (p) => `SELECT id FROM (SELECT e.id FROM events e WHERE ${p.where} ORDER BY e.id DESC LIMIT ?)`
      )
      rows = db
        .prepare(
          `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
           WHERE e.id IN (SELECT id FROM (${arms.join(' UNION ALL ')}) ORDER BY id DESC LIMIT ? OFFSET ?)
           ORDER BY e.id DESC`
        )
        .all(...parts.flatMap((p) => [...p.args, reach]), page.limit, page.offset) as EventRow[]
    }
    let total = 0
    for (const p of parts) {
      total += (db.prepare(`SELECT COUNT(*) AS n FROM events e WHERE ${p.where}`).get(...p.args) as { n: number }).n
    }
    // A reseller reads what happened to its orders; the admin's deploy configuration stays out.
    const view = resellerId === null ? (e: CertEvent): CertEvent => e : resellerDeployEvent
    return {
      items: rows.map((r) => {
        const e = eventOf(r)
        return isAdminEventType(e.type) ? { ...e, type: e.type } : view({ ...e, type: e.type as EventType })
      }),
      total,
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
