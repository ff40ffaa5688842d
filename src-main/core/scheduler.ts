/**
 * The reissue scheduler (reseller API v3.0, "Certificate lifecycle rule"). One
 * pass, as of the context clock: finish validations that now pass, reissue every certificate
 * whose `next_reissue_at` has come (14 days before expiry, while the subscription lasts;
 * never code signing), and mark orders `expired` once the subscription has ended and the last
 * certificate has run out. A pass is idempotent, so it runs on start (catching up after
 * sleep), on a timer, and on demand (`certdesk admin scheduler run --as-of DATE`).
 */
import type { PassOutcome } from './alerts'
import type { Certificates } from './certificates'
import type { CoreContext } from './context'
import type { DeployRun, Deploys } from './deploy/deploys'
import type { RenewalWindows } from './acme-client/ari'
import type { Events } from './events'
import { inOrder, pool } from './pool'
import { isoDate, isoTimestamp, parseDate } from './time'

export interface SchedulerReport {
  as_of: string
  issued: {
    order_id: number
    order_number: string
    serial: string
    valid_from: string
    valid_till: string
    reason: string
  }[]
  validation_needed: { order_id: number; order_number: string; reason: string }[]
  expired: { order_id: number; order_number: string }[]
  errors: { order_id: number; order_number: string; error: string }[]
  /** The deploy attempts of this pass (after its reissues, and retries that were due). */
  deploys?: {
    run_id: number
    order_id: number
    target_id: number
    kind: string
    status: string
    attempts: number
    next_attempt_at: string | null
    last_error: string | null
  }[]
  /** Orders announced as `certificate.expiring` (no reissue will follow). */
  expiring?: number[]
  /** Renewals at the external CA due within a week that need the customer (raised as an alert now). */
  renewals_need_customer?: { order_id: number; order_number: string; renew_at: string; reason: string }[]
}

/** How often `serve` runs a pass. Reissues are due by day, so hourly is plenty. */
export const SCHEDULER_INTERVAL_MS = 60 * 60 * 1000
/** How often the loop looks for deploy retries that are due (the shortest backoff is a minute). */
export const DEPLOY_RETRY_INTERVAL_MS = 60 * 1000
/**
 * Orders one pass validates at once. Each may check up to eight names at once
 * (certificates/validation.ts), so a pass opens at most 64 validation connections; a customer's
 * server that trickles or never answers holds one of the eight for the fetch deadline (dcv.ts)
 * and no other order waits for it.
 */
export const VALIDATION_CONCURRENCY = 8
/**
 * Due reissues and renewals one pass runs at once, beside its validations. A reissue may check
 * its names again (BR §4.2.1) against a slow server too, so one at a time would let that server
 * hold every later renewal; signing is quick, and a few at once keep an external CA's rate
 * limits in sight.
 */
export const REISSUE_CONCURRENCY = 4

/** What one piece of a pass's work came to: its value, or the error it threw. */
type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown }
const settle = <T>(work: () => Promise<T>): Promise<Outcome<T>> =>
  work().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error })
  )

interface OrderRef {
  id: number
  order_number: string
}

export class Scheduler {
  /** Passes in flight: more than one when a pass overruns the next timer. */
  private readonly passes = new Set<Promise<unknown>>()
  /** Orders a pass in flight is validating or reissuing; a later pass leaves them to it. */
  private readonly claimed = new Set<number>()
  /** A look at the CA's renewal windows in flight; a later pass does not start another. */
  private windowsLook: Promise<unknown> | null = null

  constructor(
    private readonly ctx: CoreContext,
    private readonly certificates: Certificates,
    private readonly after?: {
      deploys: Deploys
      events: Events
      /** RFC 9773 renewal windows of certificates from an external ACME CA (acme-issuer.ts). */
      renewals?: {
        windows: RenewalWindows
        refreshWindows(now: Date): Promise<{ order_id: number; error: string }[]>
        /** Renewals due within a week that cannot run with nobody (renewal-readiness.ts). */
        checkReadiness?(now: Date): Promise<{ order_id: number; renew_at: string; reason: string }[]>
      }
      /** Alert rules checked after each pass; `tick` between passes (alerts/). */
      alerts?: { afterPass(outcome: PassOutcome): Promise<void>; tick(): Promise<void> }
      /** The local CA's CRL, signed again once a day (BR §4.9.7, local-ca-crl.ts). */
      crl?: { refreshIfDue(): Promise<unknown> }
    }
  ) {}

  /**
   * One pass. A call while an earlier pass still runs (one held up by slow validations) starts
   * its own pass at once, which leaves the orders the earlier one is working on to it: its due
   * reissues never wait for the earlier pass, and no order is checked or reissued twice.
   */
  run(): Promise<SchedulerReport> {
    const pass = this.pass()
    const settled = pass.catch(() => undefined)
    this.passes.add(settled)
    void settled.finally(() => this.passes.delete(settled))
    return pass
  }

  /** Resolves once no pass is running, so the store can be closed under it safely. */
  async idle(): Promise<void> {
    while (this.passes.size > 0) await Promise.allSettled([...this.passes])
    await this.after?.deploys.idle()
  }

  /** Deploy retries come due minutes apart, between the hourly passes. */
  async retryDeploys(): Promise<void> {
    await this.after?.deploys.runDue()
    // Deploy and installation alerts and their delivery retries are due minutes apart too.
    await this.after?.alerts?.tick()
  }

  private async pass(): Promise<SchedulerReport> {
    const now = this.ctx.clock()
    const today = isoDate(now)
    const report: SchedulerReport = {
      as_of: isoTimestamp(now),
      issued: [],
      validation_needed: [],
      expired: [],
      errors: []
    }
    const db = this.ctx.store
    const record = (
      o: { id: number; order_number: string },
      c: { serial: string; validFrom: string; validTill: string; reason: string }
    ): void => {
      report.issued.push({
        order_id: o.id,
        order_number: o.order_number,
        serial: c.serial,
        valid_from: c.validFrom,
        valid_till: c.validTill,
        reason: c.reason
      })
    }
    // Issuances and renewals that failed in this pass, for the renewal_failed alert (not a failed look at ARI).
    const failed: PassOutcome['failed'] = []
    const fail = (o: { id: number; order_number: string }, err: unknown): void => {
      failed.push({ order_id: o.id, error: err instanceof Error ? err.message : String(err) })
      report.errors.push({
        order_id: o.id,
        order_number: o.order_number,
        error: err instanceof Error ? err.message : String(err)
      })
    }

    // 0. A clock stepped back behind the newest certificate would issue with the validity cap
    // and reuse period of a date already past (BR §6.3.2, §4.2.1): issue nothing until it is right.
    const behind = await clockBehind(db, now)

    // Orders another pass in flight is working on are left to it.
    const free = (o: OrderRef): boolean => !this.claimed.has(o.id)
    const recordReissue = (o: OrderRef, r: Outcome<Awaited<ReturnType<Certificates['autoReissue']>>>): void => {
      if (!r.ok) return fail(o, r.error)
      if (r.value.issued) record(o, r.value.issued)
      if (r.value.validationNeeded)
        report.validation_needed.push({
          order_id: o.id,
          order_number: o.order_number,
          reason: r.value.validationNeeded
        })
    }

    // 1. Validations that have passed since the last look (a file put up, a record added).
    const waiting = (
      (await db.all(
        `SELECT id, order_number FROM orders WHERE status IN ('validation_pending', 'processing') AND purchase_end_date > ? ORDER BY id`,
        today
      )) as OrderRef[]
    ).filter(free)

    // 2. Automatic reissues that are due (auto_reissue is 0 for code signing, spec). An order
    // whose certificate has a renewal window from its CA is renewed at the moment chosen in it
    // (2b): one schedule per order, never this day-granular one beside it.
    const due = (
      (await db.all(
        `SELECT id, order_number FROM orders WHERE status = 'completed' AND auto_reissue = 1
           AND next_reissue_at IS NOT NULL AND next_reissue_at <= ? AND purchase_end_date > ?
           AND NOT EXISTS (SELECT 1 FROM ari_windows w WHERE w.order_id = orders.id) ORDER BY id`,
        today,
        today
      )) as OrderRef[]
    ).filter(free)
    if (behind) for (const o of [...waiting, ...due]) fail(o, new Error(behind))

    // Validations and reissues run side by side, each a few orders at a time: a customer's
    // server that trickles or never answers costs its own order the fetch deadline (dcv.ts),
    // and no other order's validation, reissue or renewal waits for it.
    const [validated, reissued, renewed] = await Promise.all([
      this.work(behind ? [] : waiting, VALIDATION_CONCURRENCY, (o) => this.certificates.advance(o.id)),
      this.work(behind ? [] : due, REISSUE_CONCURRENCY, (o) => this.certificates.autoReissue(o.id)),
      this.renewals(now, today, due, free, behind)
    ])
    validated.forEach((r, i) => {
      if (!r.ok) fail(waiting[i], r.error)
      else if (r.value) record(waiting[i], r.value)
    })
    reissued.forEach((r, i) => recordReissue(due[i], r))
    if (renewed) {
      // A look at the CA that failed is the admin's to know: a renewal the CA asked for may wait on it.
      for (const f of renewed.lookErrors)
        report.errors.push({
          order_id: f.order_id,
          order_number: String((await db.value('SELECT order_number FROM orders WHERE id = ?', f.order_id)) ?? '-'),
          error: f.error
        })
      renewed.results.forEach((r, i) => recordReissue(renewed.orders[i], r))
    }

    // 2c. Renewals due within a week that cannot run with nobody: said now, before they are due.
    let needsCustomer: { order_id: number; renew_at: string; reason: string }[] = []
    const coming = this.after?.renewals
    if (coming?.checkReadiness && !behind) {
      try {
        needsCustomer = await coming.checkReadiness(now)
        report.renewals_need_customer = await inOrder(needsCustomer, async (n) => ({
          ...n,
          order_number: String(
            (await db.value<string>('SELECT order_number FROM orders WHERE id = ?', n.order_id)) ?? '-'
          )
        }))
      } catch (err) {
        report.errors.push({
          order_id: 0,
          order_number: '-',
          error: `could not look at coming renewals: ${String(err)}`
        })
      }
    }

    // 3. A subscription whose end has passed and whose last certificate has expired.
    const ended = (await db.all(
      `SELECT o.id, o.order_number FROM orders o
          WHERE o.status IN ('completed', 'validation_pending', 'processing') AND o.purchase_end_date <= ?
            AND EXISTS (SELECT 1 FROM certificates c WHERE c.order_id = o.id)
            AND (SELECT MAX(c.valid_till) FROM certificates c WHERE c.order_id = o.id) < ?
          ORDER BY o.id`,
      today,
      isoTimestamp(now)
    )) as OrderRef[]
    const expireSql = `UPDATE orders SET status = 'expired', next_reissue_at = NULL, status_note = ?, updated_at = ? WHERE id = ?`
    for (const o of ended.filter(free)) {
      await db.tx(
        () => db.run(expireSql, `subscription ended and the last certificate expired`, isoTimestamp(now), o.id),
        { budgetMs: BACKGROUND_WRITE_BUDGET_MS }
      )
      report.expired.push({ order_id: o.id, order_number: o.order_number })
    }

    // 3b. The local CA's CRL: a new one at least daily, long before its nextUpdate (BR §4.9.7).
    if (this.after?.crl) {
      try {
        await this.after.crl.refreshIfDue()
      } catch (err) {
        report.errors.push({ order_id: 0, order_number: '-', error: `could not sign the CRL: ${String(err)}` })
      }
    }

    // 4. Deploy retries that are due, then wait for the deploys this pass started.
    if (this.after) {
      await this.after.deploys.runDue()
      await this.after.deploys.idle()
      report.deploys = (await this.after.deploys.takeAttempted()).map(deployJson)
      report.expiring = await this.after.events.noticeExpiring()
    }

    // 5. Alerts: renewals that failed or need a validation, and the rules' own checks.
    if (this.after?.alerts) {
      for (const v of report.validation_needed)
        failed.push({ order_id: v.order_id, error: `validation needed: ${v.reason}` })
      try {
        await this.after.alerts.afterPass({ failed, issued: report.issued.map((i) => i.order_id), needsCustomer })
      } catch (err) {
        report.errors.push({ order_id: 0, order_number: '-', error: `could not check alerts: ${String(err)}` })
      }
    }
    return report
  }

  /**
   * 2b. RFC 9773: windows whose Retry-After has passed are asked again (§4.3), then orders whose
   * chosen moment inside the CA's window has come are renewed; a window the CA moved into the
   * past (a mass revocation) makes that moment now. Both are indexed lookups: an idle pass over a
   * large store reads no order row. A look at the CA still in flight from an earlier pass is
   * neither started again nor waited for: this pass renews from the windows as they stand. A
   * clock behind the newest certificate (`behind`) renews nothing, as it issues nothing above.
   */
  private async renewals(
    now: Date,
    today: string,
    due: OrderRef[],
    free: (o: OrderRef) => boolean,
    behind: string | null
  ): Promise<{
    lookErrors: { order_id: number; error: string }[]
    orders: OrderRef[]
    results: Outcome<Awaited<ReturnType<Certificates['autoReissue']>>>[]
  } | null> {
    const renewals = this.after?.renewals
    if (!renewals) return null
    let lookErrors: { order_id: number; error: string }[] = []
    if (!this.windowsLook) {
      const look = renewals.refreshWindows(now)
      this.windowsLook = look
      try {
        lookErrors = await look
      } catch (err) {
        lookErrors = [{ order_id: 0, error: `could not read renewal windows: ${String(err)}` }]
      } finally {
        this.windowsLook = null
      }
    }
    const done = new Set(due.map((o) => o.id))
    let orders: OrderRef[]
    try {
      orders = (await renewals.windows.dueRenewals(now, today)).filter((o) => !done.has(o.id) && free(o))
    } catch (err) {
      // The pass's other work goes on (and keeps its claims until it ends); this one is reported.
      return {
        lookErrors: [...lookErrors, { order_id: 0, error: `could not read renewal windows: ${String(err)}` }],
        orders: [],
        results: []
      }
    }
    if (behind) return { lookErrors, orders, results: orders.map(() => ({ ok: false, error: new Error(behind) })) }
    const results = await this.work(orders, REISSUE_CONCURRENCY, (o) => this.certificates.autoReissue(o.id))
    return { lookErrors, orders, results }
  }

  /**
   * Runs `task` over `orders`, `limit` at a time, each order claimed from the call (before its
   * first await, so a pass starting later sees the claim) until this batch ends: another part of
   * the pass that hangs (a look at a slow CA) keeps no order from the next pass.
   */
  private async work<T>(orders: OrderRef[], limit: number, task: (o: OrderRef) => Promise<T>): Promise<Outcome<T>[]> {
    for (const o of orders) this.claimed.add(o.id)
    try {
      return await pool(orders, limit, (o) => settle(() => task(o)))
    } finally {
      for (const o of orders) this.claimed.delete(o.id)
    }
  }
}

/**
 * How long a pass's own writes wait for another process's lock (SQLite) or retry conflicts
 * (PostgreSQL): nobody waits for a pass's answer, and one given up waits for the next timer.
 */
const BACKGROUND_WRITE_BUDGET_MS = 60_000

/** How far the clock may be behind the newest certificate (a corrected drift, not a stepped clock). */
const CLOCK_TOLERANCE_MS = 60 * 60 * 1000

/** Why nothing may be issued now (the clock is behind the newest certificate), or null. */
async function clockBehind(db: CoreContext['store'], now: Date): Promise<string | null> {
  const newest = ((await db.get('SELECT MAX(created_at) AS at FROM certificates')) as { at: string | null }).at
  if (!newest || parseDate(newest).getTime() <= now.getTime() + CLOCK_TOLERANCE_MS) return null
  return `could not issue certificates: the clock (${isoTimestamp(now)}) is behind the newest certificate (issued ${newest}); set the system clock right`
}

const deployJson = (r: DeployRun): NonNullable<SchedulerReport['deploys']>[number] => ({
  run_id: r.id,
  order_id: r.orderId,
  target_id: r.targetId,
  kind: r.kind,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.nextAttemptAt,
  last_error: r.lastError
})

/**
 * Runs a pass now (catching up after the machine slept or the app was closed) and then every
 * `intervalMs`; `log` gets one line per pass that did something. The returned stop function
 * resolves when a pass in flight has finished.
 */
/**
 * One log line per pass: counts, and the first few order numbers of each kind, so a pass over a
 * large store never writes a line the size of the store (`scheduler run` prints the full report).
 */
export function summarize(r: SchedulerReport): string {
  const some = (items: { order_number: string }[]): string =>
    items.length === 0
      ? ''
      : ` (${items
          .slice(0, 5)
          .map((i) => i.order_number)
          .join(', ')}${items.length > 5 ? ', …' : ''})`
  const firstError = r.errors[0] ? `; first error: ${r.errors[0].order_number}: ${r.errors[0].error}` : ''
  return (
    `scheduler as of ${r.as_of}: issued ${r.issued.length}${some(r.issued)}, ` +
    `validation needed ${r.validation_needed.length}${some(r.validation_needed)}, ` +
    `expired ${r.expired.length}${some(r.expired)}, errors ${r.errors.length}${firstError}`
  )
}

export function startSchedulerLoop(
  scheduler: Scheduler,
  log: (line: string) => void,
  intervalMs = SCHEDULER_INTERVAL_MS
): () => Promise<void> {
  const pass = (): void => {
    scheduler.run().then(
      (r) => {
        if (r.issued.length || r.expired.length || r.validation_needed.length || r.errors.length) log(summarize(r))
      },
      (err: unknown) => log(`could not run the scheduler: ${err instanceof Error ? err.message : String(err)}`)
    )
  }
  const retry = (): void =>
    void scheduler
      .retryDeploys()
      .catch((err: unknown) => log(`could not retry deploys: ${err instanceof Error ? err.message : String(err)}`))
  pass()
  // At once too: a deploy folder a crash left between its files is finished before anything else.
  retry()
  const timer = setInterval(pass, intervalMs)
  timer.unref()
  const retries = setInterval(retry, DEPLOY_RETRY_INTERVAL_MS)
  retries.unref()
  return () => {
    clearInterval(timer)
    clearInterval(retries)
    return scheduler.idle()
  }
}
