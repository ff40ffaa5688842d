/**
 * Alerts: the rules that notice trouble, the alerts they raise and their delivery to the
 * admin's channels. Each alert is raised once per (rule, order, cause), so however many
 * scheduler passes see the same trouble, each channel gets one message; `alert.raised` and
 * `alert.cleared` go to the event log. Deliveries are retried with back-off and recorded.
 *
 * The checks (checks.ts) are cheap on a large store: the expiry check runs once a day over an index, the
 * validation check reads only orders waiting on a validation, deploy and installation problems
 * are read from the event log after a cursor, and due deliveries from a partial index.
 */
import type { CoreContext } from '../context'
import { invalid, notFound } from '../errors'
import type { Page, Paging } from '../billing/ledger'
import { ALERT_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { isoTimestamp } from '../time'
import { AlertChannels, type Channel, type ChannelInput } from './channels'
import { AlertChecks, type PassOutcome } from './checks'
import { bounded, BODY_LIMIT, oneLine, signedPayload, slackPayload, teamsPayload, type Message } from './messages'
import { ALERT_RULES, DEFAULT_VALIDATION_WAIT_HOURS, RULE_LABELS, type AlertRule, type RuleView } from './rules'
import { postJson, sendMail } from './transport'
import type { Store } from '../store'

export { ALERT_RULES, RULE_LABELS, type AlertRule, type RuleView } from './rules'
export { CHANNEL_KINDS, type Channel, type ChannelInput } from './channels'
export { DIGEST_LINES, type PassOutcome } from './checks'

/** Minutes before the next attempt after each failed one; the sixth failure is final. */
export const RETRY_MINUTES = [1, 5, 30, 120, 360] as const
export const MAX_ATTEMPTS = RETRY_MINUTES.length + 1
/** How long a delivery is held by the process sending it, so another process does not send it too. */
const CLAIM_MINUTES = 15
/** Deliveries sent at once; a slow receiver holds up no more than this many. */
const PARALLEL = 4

export interface Alert {
  id: number
  rule: AlertRule
  orderId: number
  orderNumber: string | null
  cause: string
  subject: string
  message: string
  raisedAt: string
  clearedAt: string | null
}

export interface Delivery {
  id: number
  channelId: number
  channelName: string
  channelKind: Channel['kind']
  kind: 'alert' | 'digest' | 'test'
  alertId: number | null
  digestWeek: string | null
  subject: string
  status: 'pending' | 'sent' | 'failed'
  attempts: number
  nextAttemptAt: string | null
  lastError: string | null
  createdAt: string
  sentAt: string | null
}

interface RuleRow {
  rule: AlertRule
  enabled: number
  threshold_hours: number | null
  updated_at: string | null
}

interface DeliveryRow {
  id: number
  channel_id: number
  name: string
  channel_kind: Channel['kind']
  kind: Delivery['kind']
  alert_id: number | null
  digest_week: string | null
  subject: string
  body: string
  status: Delivery['status']
  attempts: number
  next_attempt_at: string | null
  last_error: string | null
  created_at: string
  sent_at: string | null
}

const deliveryView = (r: DeliveryRow): Delivery => ({
  id: r.id,
  channelId: r.channel_id,
  channelName: r.name,
  channelKind: r.channel_kind,
  kind: r.kind,
  alertId: r.alert_id,
  digestWeek: r.digest_week,
  subject: r.subject,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  sentAt: r.sent_at
})

const addMinutes = (d: Date, m: number): Date => new Date(d.getTime() + m * 60_000)

export class Alerts {
  readonly channels: AlertChannels
  private readonly checks: AlertChecks

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings
  ) {
    this.channels = new AlertChannels(ctx)
    this.checks = new AlertChecks(ctx, () => this.rules())
  }

  private async allowPrivate(): Promise<boolean> {
    return await this.settings.flag(ALERT_SETTINGS.allowPrivateAddresses)
  }

  // ---- rules

  async rules(): Promise<RuleView[]> {
    const rows = (await this.ctx.store.all('SELECT * FROM alert_rules')) as RuleRow[]
    return ALERT_RULES.map((rule) => {
      const r = rows.find((x) => x.rule === rule)
      return {
        rule,
        label: RULE_LABELS[rule],
        enabled: r ? r.enabled === 1 : true,
        thresholdHours: rule === 'validation_waiting' ? (r?.threshold_hours ?? DEFAULT_VALIDATION_WAIT_HOURS) : null,
        updatedAt: r?.updated_at ?? null
      }
    })
  }

  async updateRule(rule: string, change: { enabled?: boolean; thresholdHours?: number }): Promise<RuleView> {
    if (!(ALERT_RULES as readonly string[]).includes(rule))
      throw invalid(
        `could not change the alert rule: ${JSON.stringify(String(rule).slice(0, 40))} is not one of ${ALERT_RULES.join(', ')}`
      )
    if (change.enabled !== undefined && typeof change.enabled !== 'boolean')
      throw invalid('could not change the alert rule: enabled must be true or false')
    if (change.thresholdHours !== undefined) {
      if (rule !== 'validation_waiting')
        throw invalid(`could not change the alert rule: only validation_waiting has a threshold in hours`)
      const h = change.thresholdHours
      if (!Number.isInteger(h) || h < 1 || h > 8760)
        throw invalid('could not change the alert rule: the threshold must be whole hours from 1 to 8760 (a year)')
    }
    await this.ctx.store.run(
      `UPDATE alert_rules SET enabled = IFNULL(?, enabled), threshold_hours = IFNULL(?, threshold_hours), updated_at = ?
          WHERE rule = ?`,
      change.enabled === undefined ? null : change.enabled ? 1 : 0,
      change.thresholdHours ?? null,
      isoTimestamp(this.ctx.clock()),
      rule
    )
    return (await this.rules()).find((r) => r.rule === rule) as RuleView
  }

  // ---- channels

  async addChannel(input: ChannelInput): Promise<{ channel: Channel; signingSecret: string | null }> {
    return this.channels.add(input, await this.allowPrivate())
  }

  async removeChannel(id: number): Promise<void> {
    await this.channels.remove(id)
  }

  /** Sends a test message to one channel now and answers its delivery record. */
  async testChannel(id: number): Promise<Delivery> {
    const channel = await this.channels.get(id)
    const now = this.ctx.clock()
    const info = await this.ctx.store.insert(
      `INSERT INTO alert_deliveries (channel_id, kind, subject, body, status, next_attempt_at, created_at)
         VALUES (?, 'test', ?, ?, 'pending', ?, ?)`,
      channel.id,
      'CertDesk test alert',
      `This is a test from CertDesk to the channel "${channel.name}". Alerts will arrive here.`,
      isoTimestamp(now),
      isoTimestamp(now)
    )
    const deliveryId = info
    await this.deliver(deliveryId)
    return await this.delivery(deliveryId)
  }

  // ---- alerts and deliveries

  async list(filter: { open?: boolean }, page: Paging): Promise<Page<Alert>> {
    const where = filter.open ? 'WHERE a.cleared_at IS NULL' : ''
    const rows = (await this.ctx.store.all(
      `SELECT a.*, o.order_number FROM alerts a LEFT JOIN orders o ON o.id = a.order_id ${where}
          ORDER BY a.id DESC LIMIT ? OFFSET ?`,
      page.limit,
      page.offset
    )) as (Omit<Alert, 'orderId' | 'orderNumber' | 'raisedAt' | 'clearedAt'> & {
      order_id: number
      order_number: string | null
      raised_at: string
      cleared_at: string | null
    })[]
    const { n } = (await this.ctx.store.get(`SELECT COUNT(*) AS n FROM alerts a ${where}`)) as { n: number }
    return {
      items: rows.map((r) => ({
        id: r.id,
        rule: r.rule,
        orderId: r.order_id,
        orderNumber: r.order_number,
        cause: r.cause,
        subject: r.subject,
        message: r.message,
        raisedAt: r.raised_at,
        clearedAt: r.cleared_at
      })),
      total: n,
      ...page
    }
  }

  /** The newest deliveries first. */
  async deliveries(page: Paging): Promise<Page<Delivery>> {
    const rows = (await this.ctx.store.all(
      `SELECT d.*, c.name, c.kind AS channel_kind FROM alert_deliveries d JOIN alert_channels c ON c.id = d.channel_id
          ORDER BY d.id DESC LIMIT ? OFFSET ?`,
      page.limit,
      page.offset
    )) as DeliveryRow[]
    const { n } = (await this.ctx.store.get('SELECT COUNT(*) AS n FROM alert_deliveries')) as { n: number }
    return { items: rows.map(deliveryView), total: n, ...page }
  }

  async delivery(id: number): Promise<Delivery> {
    const row = (await this.ctx.store.get(
      `SELECT d.*, c.name, c.kind AS channel_kind FROM alert_deliveries d JOIN alert_channels c ON c.id = d.channel_id
          WHERE d.id = ?`,
      id
    )) as DeliveryRow | undefined
    if (!row) throw notFound(`could not find alert delivery ${id}`)
    return deliveryView(row)
  }

  // ---- the checks

  /**
   * After a scheduler pass: the pass's renewal failures and issues, the daily expiry check, the
   * validations waiting too long, then `tick` (event log, digest, due deliveries).
   */
  async afterPass(outcome: PassOutcome): Promise<void> {
    const now = this.ctx.clock()
    const db = this.ctx.store
    const rules = new Map((await this.rules()).map((r) => [r.rule, r]))
    await db.tx(async () => {
      for (const id of outcome.issued)
        await this.checks.clearOrder(
          id,
          ['renewal_failed', 'validation_waiting', 'expiring', 'renewal_needs_customer'],
          now
        )
      if (rules.get('renewal_failed')?.enabled) await this.checks.renewalFailures(outcome.failed, now)
      if (rules.get('renewal_needs_customer')?.enabled)
        await this.checks.renewalsNeedingCustomer(outcome.needsCustomer ?? [], now)
      await this.checks.validationWaits(now, rules.get('validation_waiting') as RuleView)
      if (rules.get('expiring')?.enabled) await this.checks.expiring(now)
    })
    await this.tick()
  }

  /**
   * The cheap part, also run between the hourly passes: deploy and installation problems from
   * the event log, the weekly digest, and the deliveries that are due.
   */
  async tick(): Promise<void> {
    const now = this.ctx.clock()
    await this.ctx.store.tx(async () => {
      await this.checks.fromEvents(now)
      await this.checks.digests(now)
    })
    await this.deliverDue(now)
  }

  // ---- sending

  private async deliverDue(now: Date): Promise<void> {
    const due = (await this.ctx.store.column(
      `SELECT id FROM alert_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY id LIMIT 100`,
      isoTimestamp(now)
    )) as number[]
    for (let i = 0; i < due.length; i += PARALLEL)
      await Promise.all(due.slice(i, i + PARALLEL).map((id) => this.deliver(id)))
  }

  /** One attempt of one delivery, if no other pass or process holds it. */
  private async deliver(id: number): Promise<void> {
    const db = this.ctx.store
    const start = this.ctx.clock()
    const row = (await db.get('SELECT * FROM alert_deliveries WHERE id = ?', id)) as DeliveryRow | undefined
    if (!row || row.status !== 'pending') return
    const claimed = await db.run(
      `UPDATE alert_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at IS ?`,
      isoTimestamp(addMinutes(start, CLAIM_MINUTES)),
      id,
      row.next_attempt_at
    )
    if (claimed.changes === 0) return
    let error: string | null = null
    try {
      const channel = await this.channels.get(row.channel_id)
      await this.send(channel, await this.message(db, row, start), start)
    } catch (err) {
      error = oneLine(err instanceof Error ? err.message : String(err), 500)
    }
    const end = this.ctx.clock()
    const attempt = row.attempts + 1
    const gaveUp = error !== null && attempt >= MAX_ATTEMPTS
    await db.run(
      `UPDATE alert_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, sent_at = ? WHERE id = ?`,
      error === null ? 'sent' : gaveUp ? 'failed' : 'pending',
      attempt,
      error === null || gaveUp ? null : isoTimestamp(addMinutes(end, RETRY_MINUTES[attempt - 1])),
      error,
      error === null ? isoTimestamp(end) : null,
      id
    )
  }

  private async message(db: Store, row: DeliveryRow, now: Date): Promise<Message> {
    const base = { delivery: `alert-delivery-${row.id}`, subject: row.subject, body: row.body }
    if (row.kind === 'digest') return { ...base, event: 'alert.digest', data: { week: row.digest_week } }
    if (row.kind === 'test') return { ...base, event: 'alert.test', data: { sent_at: isoTimestamp(now) } }
    const a = (await db.get(
      `SELECT a.id, a.rule, a.order_id, a.cause, a.raised_at, o.order_number, o.domain FROM alerts a
           LEFT JOIN orders o ON o.id = a.order_id WHERE a.id = ?`,
      row.alert_id
    )) as Record<string, unknown>
    return {
      ...base,
      event: 'alert.raised',
      data: {
        alert: {
          id: a.id,
          rule: a.rule,
          order_id: a.order_id,
          order_number: a.order_number,
          domain: a.domain || null,
          cause: a.cause,
          raised_at: a.raised_at
        }
      }
    }
  }

  private async send(channel: Channel, m: Message, now: Date): Promise<void> {
    if (channel.kind === 'smtp') {
      await sendMail(await this.channels.smtpSettings(channel), {
        subject: oneLine(`[CertDesk] ${m.subject}`),
        text: bounded(m.body, BODY_LIMIT)
      })
      return
    }
    const url = await this.channels.url(channel)
    let body: string
    let headers: Record<string, string> = { 'user-agent': 'CertDesk-Alerts/1' }
    if (channel.kind === 'slack') body = slackPayload(m)
    else if (channel.kind === 'teams') body = teamsPayload(m)
    else {
      const signed = signedPayload(m, await this.channels.signingSecret(channel.id), Math.floor(now.getTime() / 1000))
      body = signed.body
      headers = signed.headers
    }
    const res = await postJson(url, headers, body, await this.allowPrivate())
    if (res.status < 200 || res.status >= 300)
      throw new Error(`the receiver at ${new URL(url).host} answered ${res.status}; only 2xx counts as delivered`)
  }
}
