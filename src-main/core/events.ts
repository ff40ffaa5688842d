/**
 * The event log: what happened to orders and certificates, in SQLite. It feeds GET /events,
 * the deploy webhooks and the desktop notifications. `record` takes the db handle so
 * callers write the event inside the transaction that made the change: an order is never
 * created without its `order.created` event, and never the other way round.
 */
import type { CoreContext } from './context'
import { resellerDeployEvent } from './deploy/deploy-events'
import type { Page, Paging } from './billing/ledger'
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
   * the admin's paths, URLs or commands): GET /events. `resellerId: null` lists every reseller's
   * with the admin's full detail. The admin's own events (alerts) are never in it: `adminLog`.
   */
  async list(resellerId: number | null, filter: EventFilter, page: Paging): Promise<Page<CertEvent>> {
    return (await this.read(resellerId, filter, page, false)) as Page<CertEvent>
  }

  /**
   * The admin's event log (the desktop app's, `certdesk admin events list`): the events of one
   * reseller, or of all with `null`, together with the admin's own alert events about their
   * orders (docs/alerts.md), newest first; `filter.type` may be an alert type too.
   */
  async adminLog(resellerId: number | null, filter: AdminEventFilter, page: Paging): Promise<Page<AdminLogEvent>> {
    return await this.read(resellerId, filter, page, true)
  }

  private async read(
    resellerId: number | null,
    filter: AdminEventFilter,
    page: Paging,
    withAdminEvents: boolean
  ): Promise<Page<AdminLogEvent>> {
    const common: string[] = []
    const commonArgs: SqlArg[] = []
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
    const parts: { where: string; args: SqlArg[] }[] = []
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
    const db = this.ctx.store
    // The page and its total from one snapshot.
    const { rows, total } = await db.tx(
      async () => {
        let rows: EventRow[]
        if (parts.length === 1) {
          rows = await db.all<EventRow>(
            `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
             WHERE ${parts[0].where} ORDER BY e.id DESC LIMIT ? OFFSET ?`,
            ...parts[0].args,
            page.limit,
            page.offset
          )
        } else {
          // A page of the merged sets needs at most offset + limit rows of each. (PostgreSQL
          // before 16 wants a name for every subquery in FROM.)
          const reach = Math.min(page.offset + page.limit, Number.MAX_SAFE_INTEGER)
          const arms = parts.map(
            (p, i) => `SELECT id FROM (SELECT e.id FROM events e WHERE ${p.where} ORDER BY e.id DESC LIMIT ?) arm${i}`
          )
          rows = await db.all<EventRow>(
            `SELECT e.*, o.order_number FROM events e LEFT JOIN orders o ON o.id = e.order_id
             WHERE e.id IN (SELECT id FROM (${arms.join(' UNION ALL ')}) arms ORDER BY id DESC LIMIT ? OFFSET ?)
             ORDER BY e.id DESC`,
            ...parts.flatMap((p) => [...p.args, reach]),
            page.limit,
            page.offset
          )
        }
        let total = 0
        for (const p of parts)
          total += (await db.value<number>(`SELECT COUNT(*) AS n FROM events e WHERE ${p.where}`, ...p.args)) ?? 0
        return { rows, total }
      },
      { readOnly: true }
    )
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
