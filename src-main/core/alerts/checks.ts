/**
 * The checks that raise and clear alerts, each run inside the transaction of a scheduler pass
 * or a tick: renewal failures and renewals that need the customer (from the pass), validations
 * waiting too long, the daily expiry check, deploy and installation problems read from the event
 * log after a cursor, and the weekly digest. An alert is raised once per (rule, order, cause) by
 * a unique key, so passes and processes that see the same trouble raise it once.
 */
import type { CoreContext } from '../context'
import { recordEvent } from '../events'
import { addDays, DAY_MS, isoDate, isoTimestamp, parseDate } from '../time'
import { isoWeek, weekStart } from './iso-week'
import { bounded, BODY_LIMIT, oneLine } from './messages'
import {
  ALERT_RULES,
  DEFAULT_VALIDATION_WAIT_HOURS,
  EXPIRING_FRACTION,
  LONGEST_LIFETIME_DAYS,
  RULE_LABELS,
  type AlertRule,
  type RuleView
} from './rules'

/** Alerts listed by name in the weekly digest; the rest are counted. */
export const DIGEST_LINES = 200

/** What the scheduler pass hands over: orders whose renewal failed, and orders issued. */
export interface PassOutcome {
  failed: { order_id: number; error: string }[]
  issued: number[]
  /** Renewals due soon that cannot run with nobody (renewal-readiness.ts), before they are due. */
  needsCustomer?: { order_id: number; renew_at: string; reason: string }[]
}

export class AlertChecks {
  constructor(
    private readonly ctx: CoreContext,
    /** The rules as they are set now (Alerts.rules). */
    private readonly rules: () => Promise<RuleView[]>
  ) {}

  /** Raises one alert; false when it was raised before (or its rule is off). Inside a transaction. */
  private async raise(
    rule: AlertRule,
    orderId: number,
    cause: string,
    subject: string,
    message: string,
    now: Date
  ): Promise<boolean> {
    const db = this.ctx.store
    const at = isoTimestamp(now)
    const alertId = await db.value<number>(
      `INSERT OR IGNORE INTO alerts (rule, order_id, cause, subject, message, raised_at) VALUES (?, ?, ?, ?, ?, ?)
       RETURNING id`,
      rule,
      orderId,
      oneLine(cause, 200),
      oneLine(subject),
      bounded(message),
      at
    )
    if (alertId === undefined) return false
    // Admin-only (no reseller): the message may name the admin's paths and hosts.
    await recordEvent(db, now, {
      type: 'alert.raised',
      resellerId: null,
      orderId,
      message: oneLine(subject),
      data: { alert_id: alertId, rule, cause: oneLine(cause, 200) }
    })
    await db.run(
      `INSERT INTO alert_deliveries (channel_id, kind, alert_id, subject, body, status, next_attempt_at, created_at)
       SELECT id, 'alert', ?, ?, ?, 'pending', ?, ? FROM alert_channels WHERE enabled = 1`,
      alertId,
      oneLine(subject),
      bounded(message),
      at,
      at
    )
    return true
  }

  async clearOrder(orderId: number, rules: AlertRule[], now: Date, keep?: (cause: string) => boolean): Promise<void> {
    const db = this.ctx.store
    const open = (await db.all(
      `SELECT id, rule, cause, subject FROM alerts WHERE order_id = ? AND cleared_at IS NULL AND rule IN (${rules.map(() => '?').join(', ')})`,
      orderId,
      ...rules
    )) as { id: number; rule: AlertRule; cause: string; subject: string }[]
    for (const a of open) {
      if (keep?.(a.cause)) continue
      await db.run('UPDATE alerts SET cleared_at = ? WHERE id = ?', isoTimestamp(now), a.id)
      await recordEvent(db, now, {
        type: 'alert.cleared',
        resellerId: null,
        orderId,
        message: `Cleared: ${a.subject}`,
        data: { alert_id: a.id, rule: a.rule, cause: a.cause }
      })
    }
  }

  private async order(
    orderId: number
  ): Promise<{ id: number; order_number: string; domain: string; cert_valid_till: string | null } | undefined> {
    return (await this.ctx.store.get(
      'SELECT id, order_number, domain, cert_valid_till FROM orders WHERE id = ?',
      orderId
    )) as { id: number; order_number: string; domain: string; cert_valid_till: string | null } | undefined
  }

  async renewalFailures(failed: PassOutcome['failed'], now: Date): Promise<void> {
    for (const f of failed) {
      const o = await this.order(f.order_id)
      if (!o) continue
      // One alert per certificate whose renewal fails, however many passes fail the same way.
      await this.raise(
        'renewal_failed',
        o.id,
        `certificate:${o.cert_valid_till ?? 'none'}`,
        `${o.cert_valid_till ? 'Renewal' : 'Issuance'} failed: ${o.order_number}${o.domain ? ` (${o.domain})` : ''}`,
        `The certificate of order ${o.order_number}${o.domain ? ` for ${o.domain}` : ''} could not be ${o.cert_valid_till ? 'renewed' : 'issued'}: ${f.error}` +
          (o.cert_valid_till ? `\nThe current certificate ends ${o.cert_valid_till} UTC.` : ''),
        now
      )
    }
  }

  /** Before the renewal is due: one alert per certificate whose renewal cannot run with nobody. */
  async renewalsNeedingCustomer(items: NonNullable<PassOutcome['needsCustomer']>, now: Date): Promise<void> {
    for (const n of items) {
      const o = await this.order(n.order_id)
      if (!o) continue
      const label = `${o.order_number}${o.domain ? ` (${o.domain})` : ''}`
      await this.raise(
        'renewal_needs_customer',
        o.id,
        `certificate:${o.cert_valid_till ?? 'none'}`,
        `Renewal on ${n.renew_at.slice(0, 10)} needs the customer: ${label}`,
        `The certificate of order ${o.order_number}${o.domain ? ` for ${o.domain}` : ''} is renewed at the external ACME CA at ${n.renew_at} UTC, ` +
          `and that renewal cannot run without the customer: ${n.reason}.\n` +
          `Ask the customer to add the record before then; otherwise the renewal waits for them with the CA's instructions.` +
          (o.cert_valid_till ? `\nThe current certificate ends ${o.cert_valid_till} UTC.` : ''),
        now
      )
    }
  }

  /** Orders waiting on their validation longer than the rule's hours; the wait starts when a pass first sees it. */
  async validationWaits(now: Date, rule: RuleView): Promise<void> {
    const db = this.ctx.store
    const waiting =
      (await db.all(`SELECT o.id, o.order_number, o.domain, w.since FROM orders o LEFT JOIN alert_waits w ON w.order_id = o.id
          WHERE o.status = 'validation_pending'`)) as {
        id: number
        order_number: string
        domain: string
        since: string | null
      }[]
    const ids = new Set(waiting.map((o) => o.id))
    const at = isoTimestamp(now)
    const putSql = 'INSERT OR IGNORE INTO alert_waits (order_id, since) VALUES (?, ?)'
    for (const o of waiting) if (o.since === null) await db.run(putSql, o.id, at)
    for (const w of (await db.column('SELECT order_id FROM alert_waits')) as number[]) {
      if (ids.has(w)) continue
      await db.run('DELETE FROM alert_waits WHERE order_id = ?', w)
      await this.clearOrder(w, ['validation_waiting'], now)
    }
    if (!rule.enabled) return
    const hours = rule.thresholdHours ?? DEFAULT_VALIDATION_WAIT_HOURS
    const cutoff = isoTimestamp(new Date(now.getTime() - hours * 3_600_000))
    for (const o of waiting) {
      const since = o.since ?? at
      if (since > cutoff) continue
      await this.raise(
        'validation_waiting',
        o.id,
        `since:${since}`,
        `Validation waiting over ${hours} h: ${o.order_number}${o.domain ? ` (${o.domain})` : ''}`,
        `Order ${o.order_number}${o.domain ? ` for ${o.domain}` : ''} has waited for its domain validation since ${since} UTC, longer than ${hours} hours. ` +
          `Check the validation instructions on the order page or ask the customer.`,
        now
      )
    }
  }

  /**
   * Once a day: certificates with a third of their lifetime left and no renewal planned (no
   * `next_reissue_at`, no RFC 9773 renewal moment before the end). Bounded by the longest
   * lifetime, so the index on (status, cert_valid_till) reads only certificates near their end.
   */
  async expiring(now: Date): Promise<void> {
    const db = this.ctx.store
    const today = isoDate(now)
    const last = (await db.value(`SELECT value FROM alert_state WHERE key = 'expiring_day'`)) as string | undefined
    if (last === today) return
    await db.run(
      `INSERT INTO alert_state (key, value) VALUES ('expiring_day', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      today
    )
    // Alerts whose certificate was replaced, or whose renewal is now planned, are over.
    const open =
      (await db.all(`SELECT a.order_id, a.cause, o.cert_valid_till, o.next_reissue_at FROM alerts a JOIN orders o ON o.id = a.order_id
          WHERE a.rule = 'expiring' AND a.cleared_at IS NULL`)) as {
        order_id: number
        cause: string
        cert_valid_till: string | null
        next_reissue_at: string | null
      }[]
    for (const a of open)
      if (a.cause !== `valid_till:${a.cert_valid_till}` || a.next_reissue_at !== null)
        await this.clearOrder(a.order_id, ['expiring'], now)
    const horizon = isoTimestamp(addDays(now, Math.ceil(LONGEST_LIFETIME_DAYS * EXPIRING_FRACTION)))
    const rows = (await db.all(
      `SELECT o.id, o.order_number, o.domain, o.cert_valid_from, o.cert_valid_till FROM orders o
          WHERE o.status = 'completed' AND o.next_reissue_at IS NULL AND o.cert_valid_till IS NOT NULL
            AND o.cert_valid_till > ? AND o.cert_valid_till <= ?
            AND NOT EXISTS (SELECT 1 FROM ari_windows w WHERE w.order_id = o.id AND w.renew_at < o.cert_valid_till)`,
      isoTimestamp(now),
      horizon
    )) as {
      id: number
      order_number: string
      domain: string
      cert_valid_from: string | null
      cert_valid_till: string
    }[]
    for (const o of rows) {
      const till = parseDate(o.cert_valid_till).getTime()
      const from = o.cert_valid_from ? parseDate(o.cert_valid_from).getTime() : till - LONGEST_LIFETIME_DAYS * DAY_MS
      const left = till - now.getTime()
      if (left > (till - from) * EXPIRING_FRACTION) continue
      const days = Math.ceil(left / DAY_MS)
      await this.raise(
        'expiring',
        o.id,
        `valid_till:${o.cert_valid_till}`,
        `Certificate expiring in ${days} days, no renewal planned: ${o.order_number}${o.domain ? ` (${o.domain})` : ''}`,
        `The certificate of order ${o.order_number}${o.domain ? ` for ${o.domain}` : ''} ends ${o.cert_valid_till} UTC ` +
          `(${days} days, a third of its lifetime or less) and no renewal is planned: the subscription ends first, ` +
          `or automatic reissue is off for it. Renew the order or tell the customer.`,
        now
      )
    }
  }

  /** Deploy failures after their last attempt, and installation checks that found a problem. */
  async fromEvents(now: Date): Promise<void> {
    const db = this.ctx.store
    const cursor = Number((await db.value(`SELECT value FROM alert_state WHERE key = 'event_cursor'`)) ?? 0)
    const newest = Number(await db.value('SELECT IFNULL(MAX(id), 0) FROM events'))
    if (newest <= cursor) return
    const rows = (await db.all(
      `SELECT e.id, e.type, e.order_id, e.message, e.data, o.order_number, o.domain FROM events e
           LEFT JOIN orders o ON o.id = e.order_id
          WHERE e.id > ? AND e.id <= ? AND e.order_id IS NOT NULL
            AND e.type IN ('deploy.failed', 'deploy.succeeded', 'installation.failed', 'installation.passed')
          ORDER BY e.id`,
      cursor,
      newest
    )) as {
      id: number
      type: string
      order_id: number
      message: string
      data: string
      order_number: string | null
      domain: string | null
    }[]
    const rules = new Map((await this.rules()).map((r) => [r.rule, r.enabled]))
    for (const e of rows) {
      const data = JSON.parse(e.data) as { gave_up?: boolean; attempt?: number; target_id?: number; run_id?: number }
      const label = `${e.order_number ?? `order ${e.order_id}`}${e.domain ? ` (${e.domain})` : ''}`
      if (e.type === 'deploy.succeeded') {
        await this.clearOrder(
          e.order_id,
          ['deploy_failed'],
          now,
          (cause) => !cause.startsWith(`target:${data.target_id}:`)
        )
      } else if (e.type === 'deploy.failed') {
        // A retry is coming: only the last attempt (or a deploy that could not start) is an alert.
        if (data.attempt !== undefined && data.gave_up !== true) continue
        if (!rules.get('deploy_failed')) continue
        await this.raise(
          'deploy_failed',
          e.order_id,
          `target:${data.target_id ?? '-'}:run:${data.run_id ?? `event-${e.id}`}`,
          `Deploy failed: ${label}`,
          e.message,
          now
        )
      } else if (e.type === 'installation.passed') {
        await this.clearOrder(e.order_id, ['installation_problem'], now)
      } else if (rules.get('installation_problem')) {
        await this.raise(
          'installation_problem',
          e.order_id,
          `event:${e.id}`,
          `Installation problem: ${label}`,
          e.message,
          now
        )
      }
    }
    await db.run(`UPDATE alert_state SET value = ? WHERE key = 'event_cursor'`, String(newest))
  }

  /**
   * The weekly digest (ISO 8601 weeks, Monday to Sunday, UTC): in the first pass of a week, one
   * message per email channel that asked for it, about the week before. Once per week and
   * channel (a unique key), so passes and processes never send it twice.
   */
  async digests(now: Date): Promise<void> {
    const db = this.ctx.store
    const thisWeek = weekStart(now)
    const lastWeek = new Date(thisWeek.getTime() - 7 * DAY_MS)
    const week = isoWeek(lastWeek)
    const channels = (await db.all(
      `SELECT c.id, c.name FROM alert_channels c WHERE c.kind = 'smtp' AND c.enabled = 1 AND c.digest = 1 AND c.created_at < ?
            AND NOT EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.digest_week = ? AND d.channel_id = c.id)`,
      isoTimestamp(thisWeek),
      week
    )) as { id: number; name: string }[]
    if (channels.length === 0) return
    const from = isoTimestamp(lastWeek)
    const to = isoTimestamp(thisWeek)
    const raised = (await db.all(
      `SELECT a.rule, a.subject, a.raised_at, a.cleared_at FROM alerts a WHERE a.raised_at >= ? AND a.raised_at < ? ORDER BY a.id`,
      from,
      to
    )) as { rule: AlertRule; subject: string; raised_at: string; cleared_at: string | null }[]
    const open = Number(await db.value('SELECT COUNT(*) FROM alerts WHERE cleared_at IS NULL'))
    const counts = ALERT_RULES.map((r) => `  ${RULE_LABELS[r]}: ${raised.filter((a) => a.rule === r).length}`).join(
      '\n'
    )
    const lines = raised
      .slice(0, DIGEST_LINES)
      .map((a) => `  ${a.raised_at}  ${a.subject}${a.cleared_at ? `  (cleared ${a.cleared_at})` : ''}`)
    const more = raised.length > DIGEST_LINES ? `\n  … and ${raised.length - DIGEST_LINES} more` : ''
    const body = bounded(
      `CertDesk alerts of week ${week} (${isoDate(lastWeek)} to ${isoDate(new Date(thisWeek.getTime() - DAY_MS))}, UTC)\n\n` +
        `Raised: ${raised.length}\n${counts}\n\nStill open now: ${open}\n\n` +
        (raised.length ? `${lines.join('\n')}${more}\n` : 'No alerts were raised.\n'),
      BODY_LIMIT
    )
    const at = isoTimestamp(now)
    const putSql = `INSERT OR IGNORE INTO alert_deliveries (channel_id, kind, digest_week, subject, body, status, next_attempt_at, created_at)
       VALUES (?, 'digest', ?, ?, ?, 'pending', ?, ?)`
    for (const c of channels)
      await db.run(
        putSql,
        c.id,
        week,
        `CertDesk weekly digest ${week}: ${raised.length} alerts, ${open} open`,
        body,
        at,
        at
      )
  }
}
