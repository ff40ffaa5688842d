/**
 * The installation checker: for an order with a certificate, connect to each of its names (port
 * 443) and to the endpoints the admin added (other ports, STARTTLS mail servers, one server of
 * many), and say whether each serves the certificate issued last, with its chain, for that name.
 *
 * Runs on demand (UI, API, CLI), after each successful deploy (a trigger makes the order due),
 * and on a schedule (`installations.check_interval_hours`, daily by default; 0 stops every check
 * the schedule would make). Each probe ends within `installations.timeout_seconds` and at most
 * `installations.concurrency` run at once (bounds in setting-keys.ts). The newest verdict per
 * endpoint is kept; a change of the order's verdict is an event (and an alert, where set up).
 *
 * Where a probe may connect follows domain validation's rule (validation-target.ts): never to
 * loopback, private or other special-purpose addresses unless the lab switch allows them, so a
 * name in a certificate cannot point CertDesk at the admin's own network.
 */
import { X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import type { CoreContext } from '../context'
import { isDomainName, isWildcard } from '../dcv/domains'
import { invalid, notFound } from '../errors'
import { recordEvent } from '../events'
import type { Orders } from '../orders/orders'
import { pool } from '../pool'
import { DCV_SETTINGS, INSTALLATION_LIMITS, INSTALLATION_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { specialPurpose } from '../special-addresses'
import { addDays, DAY_MS, isoTimestamp, parseDate } from '../time'
import { resolveTarget } from '../dcv/validation-target'
import type {
  EndpointInput,
  InstallationBadge,
  InstallationEndpoint,
  InstallationReport,
  InstallationResult
} from '../../../src-shared/records'
import { probe, type ProbeResult, type StartTls } from './probe'
import { reasonName } from '../certificates/revocation-reasons'
import { judge, VERDICT_LABELS, worst, type Verdict } from './verdict'

export { VERDICT_LABELS, VERDICTS, type Verdict } from './verdict'
export type { StartTls } from './probe'

export { INSTALLATION_SETTINGS } from '../settings/setting-keys'

/** How long a schedule that is off leaves an order: no check falls due by itself. */
const OFF_DAYS = 3650

/** Endpoints one order may have beyond its names: a server farm, not a scan. */
const MAX_ENDPOINTS = 50
/** Earlier certificates compared against, to tell "the old one" from "another one". */
const HISTORY = 20

export type {
  EndpointInput,
  InstallationBadge,
  InstallationEndpoint,
  InstallationReport,
  InstallationResult
} from '../../../src-shared/records'

interface Target {
  host: string
  port: number
  address: string | null
  starttls: StartTls | null
}

interface EndpointRow {
  id: number
  order_id: number
  host: string
  port: number
  address: string | null
  starttls: StartTls | null
}

interface ResultRow {
  host: string
  port: number
  verdict: Verdict
  detail: string
  served_serial: string | null
  served_valid_till: string | null
  checked_at: string
}

const STARTTLS: readonly StartTls[] = ['smtp', 'imap', 'pop3']

export class Installations {
  /** Called with each order whose verdict changed to a problem (the alerts hang here). */
  onProblem: ((report: InstallationReport) => void) | null = null

  constructor(
    private readonly ctx: CoreContext,
    private readonly orders: Orders,
    private readonly settings: Settings
  ) {
    // A new interval applies to every order checked already, not only after its next check.
    settings.onUpdate(async (changes, before) => {
      if (!Object.hasOwn(changes, INSTALLATION_SETTINGS.intervalHours)) return
      const read = (v: string | null): number => parseSetting(v, INSTALLATION_LIMITS.intervalHours)
      await this.reschedule(
        read(before[INSTALLATION_SETTINGS.intervalHours]),
        read(changes[INSTALLATION_SETTINGS.intervalHours])
      )
    })
  }

  /** The installation settings in force: each saved value within its bounds, else the default. */
  async config(): Promise<{ intervalHours: number; concurrency: number; timeoutSeconds: number }> {
    const get = async (k: keyof typeof INSTALLATION_SETTINGS): Promise<number> =>
      parseSetting(await this.settings.get(INSTALLATION_SETTINGS[k]), INSTALLATION_LIMITS[k])
    return {
      intervalHours: await get('intervalHours'),
      concurrency: await get('concurrency'),
      timeoutSeconds: await get('timeoutSeconds')
    }
  }

  /**
   * Moves each checked order's next scheduled check to its last check plus `hours`: those still
   * on the `old` schedule, and those due later than the new interval says. A check that fell due
   * earlier (after a deploy) keeps its time.
   */
  private async reschedule(old: number, hours: number): Promise<void> {
    if (hours === old || hours === 0) return
    // Worked out here, not in SQL: the engines share no date arithmetic (core/store).
    const after = (checkedAt: string, h: number): string =>
      isoTimestamp(new Date(parseDate(checkedAt).getTime() + (h > 0 ? h * 3_600_000 : OFF_DAYS * DAY_MS)))
    const store = this.ctx.store
    const rows = await store.all<{ order_id: number; checked_at: string | null; next_check_at: string | null }>(
      `SELECT order_id, checked_at, next_check_at FROM installation_status WHERE verdict != 'unchecked'`
    )
    for (const r of rows) {
      if (r.checked_at === null || r.next_check_at === null) continue
      const to = after(r.checked_at, hours)
      if (r.next_check_at !== after(r.checked_at, old) && r.next_check_at <= to) continue
      await store.run('UPDATE installation_status SET next_check_at = ? WHERE order_id = ?', to, r.order_id)
    }
  }

  /** The reseller an order belongs to, for the admin's CLI, which names orders alone. */
  async ownerOf(orderId: number): Promise<number> {
    const row = (await this.ctx.store.get('SELECT reseller_id FROM orders WHERE id = ?', orderId)) as
      { reseller_id: number } | undefined
    if (!row) throw notFound(`order ${orderId} not found`)
    return row.reseller_id
  }

  async endpoints(resellerId: number, orderId: number): Promise<InstallationEndpoint[]> {
    await this.orders.get(resellerId, orderId)
    return await this.endpointRows(orderId)
  }

  async addEndpoint(resellerId: number, orderId: number, input: EndpointInput): Promise<InstallationEndpoint> {
    const order = await this.orders.get(resellerId, orderId)
    const host = String(input.host ?? '')
      .trim()
      .toLowerCase()
      .replace(/\.$/, '')
    if (!isDomainName(host)) {
      throw invalid(`could not add the endpoint: host ${JSON.stringify(input.host).slice(0, 80)} is not a domain name`)
    }
    const port = input.port ?? 443
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw invalid('could not add the endpoint: port must be a whole number from 1 to 65535')
    }
    const address = input.address ? String(input.address).trim() : null
    if (address !== null && isIP(address) === 0) {
      throw invalid(`could not add the endpoint: address ${JSON.stringify(address).slice(0, 80)} is not an IP address`)
    }
    const starttls = input.starttls ?? null
    if (starttls !== null && !STARTTLS.includes(starttls)) {
      throw invalid('could not add the endpoint: starttls must be smtp, imap or pop3')
    }
    const count = (await this.ctx.store.get(
      'SELECT COUNT(*) AS n FROM installation_endpoints WHERE order_id = ?',
      order.id
    )) as { n: number }
    if (count.n >= MAX_ENDPOINTS) {
      throw invalid(`could not add the endpoint: order ${order.orderNumber} already has ${MAX_ENDPOINTS}`)
    }
    await this.ctx.store.run(
      `INSERT INTO installation_endpoints (order_id, host, port, address, starttls, created_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id, host, port) DO UPDATE SET address = excluded.address, starttls = excluded.starttls`,
      order.id,
      host,
      port,
      address,
      starttls,
      isoTimestamp(this.ctx.clock())
    )
    const row = (await this.ctx.store.get(
      'SELECT * FROM installation_endpoints WHERE order_id = ? AND host = ? AND port = ?',
      order.id,
      host,
      port
    )) as EndpointRow
    return endpointOf(row)
  }

  async removeEndpoint(resellerId: number, orderId: number, endpointId: number): Promise<void> {
    await this.orders.get(resellerId, orderId)
    const info = await this.ctx.store.run(
      'DELETE FROM installation_endpoints WHERE id = ? AND order_id = ?',
      endpointId,
      orderId
    )
    if (info.changes === 0) throw notFound(`endpoint ${endpointId} not found for order ${orderId}`)
  }

  /** The newest results of an order, without connecting anywhere. */
  async report(resellerId: number, orderId: number): Promise<InstallationReport> {
    const order = await this.orders.get(resellerId, orderId)
    const status = (await this.ctx.store.get(
      'SELECT verdict, checked_at FROM installation_status WHERE order_id = ?',
      order.id
    )) as { verdict: string; checked_at: string } | undefined
    const results = (await this.ctx.store.all(
      'SELECT * FROM installation_results WHERE order_id = ? ORDER BY host, port',
      order.id
    )) as ResultRow[]
    const checked = status && status.verdict !== 'unchecked' ? (status.verdict as Verdict) : null
    return {
      orderId: order.id,
      orderNumber: order.orderNumber,
      verdict: checked,
      label: checked ? VERDICT_LABELS[checked] : 'not checked yet',
      checkedAt: checked ? (status?.checked_at ?? null) : null,
      results: results.map(resultOf),
      endpoints: await this.endpointRows(order.id)
    }
  }

  /** The badge of each order that has been checked, for a page of the orders list. */
  async badges(resellerId: number, orderIds: number[]): Promise<Record<number, InstallationBadge>> {
    const ids = orderIds.filter((id) => Number.isInteger(id) && id > 0).slice(0, 500)
    if (ids.length === 0) return {}
    const list = this.ctx.store.inList(ids)
    const rows = (await this.ctx.store.all(
      `SELECT s.order_id, s.verdict, s.checked_at FROM installation_status s JOIN orders o ON o.id = s.order_id
          WHERE o.reseller_id = ? AND s.verdict != 'unchecked' AND s.order_id ${list.sql}`,
      resellerId,
      list.arg
    )) as { order_id: number; verdict: Verdict; checked_at: string }[]
    const out: Record<number, InstallationBadge> = {}
    for (const r of rows)
      out[r.order_id] = { verdict: r.verdict, label: VERDICT_LABELS[r.verdict], checkedAt: r.checked_at }
    return out
  }

  /** Checks one order now (UI, API, CLI) and answers its report. */
  async check(resellerId: number, orderId: number): Promise<InstallationReport> {
    const order = await this.orders.get(resellerId, orderId)
    if (!(await this.latest(order.id))) {
      throw invalid(`could not check order ${order.orderNumber}: it has no certificate yet`)
    }
    await this.checkOrders([order.id])
    return await this.report(resellerId, orderId)
  }

  /**
   * Checks the orders whose check is due (scheduled, or after a deploy), at most `limit`;
   * answers how many were checked. Orders without a current certificate leave the schedule.
   */
  async checkDue(limit = 50): Promise<number> {
    if ((await this.config()).intervalHours === 0) return 0
    const due = (await this.ctx.store.all(
      `SELECT s.order_id, o.status FROM installation_status s JOIN orders o ON o.id = s.order_id
          WHERE s.next_check_at <= ? ORDER BY s.next_check_at LIMIT ?`,
      isoTimestamp(this.ctx.clock()),
      limit
    )) as { order_id: number; status: string }[]
    const gone = due.filter((d) => d.status !== 'completed').map((d) => d.order_id)
    if (gone.length > 0) {
      const delSql = 'DELETE FROM installation_status WHERE order_id = ?'
      await this.ctx.store.tx(async () => {
        for (const id of gone) await this.ctx.store.run(delSql, id)
      })
    }
    const ids = due.filter((d) => d.status === 'completed').map((d) => d.order_id)
    await this.checkOrders(ids)
    return ids.length
  }

  private async checkOrders(orderIds: number[]): Promise<void> {
    const plans: {
      orderId: number
      issued: NonNullable<Awaited<ReturnType<Installations['latest']>>>
      targets: Target[]
    }[] = []
    for (const id of orderIds) {
      const issued = await this.latest(id)
      if (issued) plans.push({ orderId: id, issued, targets: await this.targets(id, issued.names) })
    }
    const jobs = plans.flatMap((p) => p.targets.map((t) => ({ plan: p, target: t })))
    const { concurrency, timeoutSeconds } = await this.config()
    const served = await pool(jobs, concurrency, ({ target }) => this.probeTarget(target, timeoutSeconds * 1000))
    const now = this.ctx.clock()
    for (const plan of plans) {
      const findings = jobs.flatMap((j, i) =>
        j.plan === plan ? [{ target: j.target, finding: judge(j.target.host, served[i], plan.issued, now) }] : []
      )
      await this.store(plan.orderId, findings, now)
    }
  }

  private async probeTarget(t: Target, timeoutMs: number): Promise<ProbeResult> {
    const allowPrivate = await this.settings.flag(DCV_SETTINGS.allowPrivateAddresses)
    let address = t.address
    try {
      if (address) {
        const what = allowPrivate ? null : specialPurpose(address)
        if (what) {
          return {
            reachable: false,
            reason: `not checked: ${address} is ${what} (for a lab, turn on lab use in Settings, under Domain validation)`
          }
        }
      } else {
        const resolver = await this.settings.get(DCV_SETTINGS.resolver)
        address = (await resolveTarget(t.host, { resolver, allowPrivateAddresses: allowPrivate }))[0]
      }
    } catch (err) {
      return { reachable: false, reason: `not checked: ${(err as Error).message}` }
    }
    return probe({ host: t.host, address, port: t.port, starttls: t.starttls }, timeoutMs)
  }

  /** Each name of the certificate on port 443 (wildcards need an endpoint), then the added endpoints. */
  private async targets(orderId: number, names: string[]): Promise<Target[]> {
    const out = new Map<string, Target>()
    for (const n of names) {
      if (!isWildcard(n)) out.set(`${n}:443`, { host: n, port: 443, address: null, starttls: null })
    }
    for (const e of await this.endpointRows(orderId)) {
      out.set(`${e.host}:${e.port}`, { host: e.host, port: e.port, address: e.address, starttls: e.starttls })
    }
    return [...out.values()]
  }

  private async store(
    orderId: number,
    findings: { target: Target; finding: ReturnType<typeof judge> }[],
    now: Date
  ): Promise<void> {
    const db = this.ctx.store
    const at = isoTimestamp(now)
    const interval = (await this.config()).intervalHours
    const next = isoTimestamp(interval > 0 ? new Date(now.getTime() + interval * 3_600_000) : addDays(now, OFF_DAYS))
    const verdict: Verdict | null = findings.length ? worst(findings.map((f) => f.finding.verdict)) : null
    let changedTo: Verdict | null = null
    await db.tx(async () => {
      const before = (await db.get('SELECT verdict FROM installation_status WHERE order_id = ?', orderId)) as
        { verdict: string } | undefined
      await db.run('DELETE FROM installation_results WHERE order_id = ?', orderId)
      const putSql = `INSERT INTO installation_results (order_id, host, port, verdict, detail, served_serial, served_fingerprint,
           served_valid_till, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
      for (const { target, finding } of findings) {
        await db.run(
          putSql,
          orderId,
          target.host,
          target.port,
          finding.verdict,
          finding.detail,
          finding.servedSerial,
          finding.servedFingerprint,
          finding.servedValidTill ? isoTimestamp(finding.servedValidTill) : null,
          at
        )
      }
      await db.run(
        `INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET verdict = excluded.verdict, checked_at = excluded.checked_at,
           next_check_at = excluded.next_check_at`,
        orderId,
        verdict ?? 'unchecked',
        at,
        next
      )
      if (verdict && before?.verdict !== verdict) {
        changedTo = verdict
        const order = (await db.get('SELECT reseller_id, order_number FROM orders WHERE id = ?', orderId)) as {
          reseller_id: number
          order_number: string
        }
        const problems = findings.filter((f) => f.finding.verdict !== 'ok')
        await recordEvent(db, now, {
          type: verdict === 'ok' ? 'installation.passed' : 'installation.failed',
          resellerId: order.reseller_id,
          orderId,
          message:
            verdict === 'ok'
              ? `${order.order_number}: every endpoint serves the current certificate`
              : `${order.order_number}: ${problems.map((p) => `${p.target.host}:${p.target.port} ${VERDICT_LABELS[p.finding.verdict]}`).join('; ')}`,
          data: {
            verdict,
            endpoints: findings.map((f) => ({ host: f.target.host, port: f.target.port, verdict: f.finding.verdict }))
          }
        })
      }
    })
    if (changedTo && changedTo !== 'ok' && this.onProblem) {
      const order = (await db.get('SELECT reseller_id FROM orders WHERE id = ?', orderId)) as { reseller_id: number }
      this.onProblem(await this.report(order.reseller_id, orderId))
    }
  }

  private async latest(orderId: number): Promise<(Parameters<typeof judge>[2] & { names: string[] }) | null> {
    const rows = (await this.ctx.store.all(
      `SELECT certificate_pem, chain_pem, names, revoked_at, revocation_reason FROM certificates
          WHERE order_id = ? ORDER BY id DESC LIMIT ?`,
      orderId,
      HISTORY
    )) as {
      certificate_pem: string
      chain_pem: string
      names: string
      revoked_at: string | null
      revocation_reason: number | null
    }[]
    if (rows.length === 0) return null
    const certs = rows.map((r) => new X509Certificate(r.certificate_pem))
    const revoked = new Map<string, { at: string; reason: string }>()
    rows.forEach((r, i) => {
      if (r.revoked_at)
        revoked.set(certs[i].fingerprint256, {
          at: r.revoked_at,
          reason: reasonName(r.revocation_reason) ?? 'unspecified'
        })
    })
    return {
      current: certs[0],
      chain: splitPem(rows[0].chain_pem).map((p) => new X509Certificate(p)),
      earlier: certs.slice(1),
      revoked,
      names: JSON.parse(rows[0].names) as string[]
    }
  }

  private async endpointRows(orderId: number): Promise<InstallationEndpoint[]> {
    return (
      (await this.ctx.store.all(
        'SELECT * FROM installation_endpoints WHERE order_id = ? ORDER BY host, port',
        orderId
      )) as EndpointRow[]
    ).map(endpointOf)
  }
}

/**
 * A stored installation setting as a number: the default when unset or empty, and when the
 * stored text is not a value its rule would accept (a store written by hand or by an older
 * version), so a check never runs with a time-out of 0 or a million probes at once.
 */
function parseSetting(
  v: string | null | undefined,
  limits: { fallback: number; min: number; max: number; offAtZero: boolean }
): number {
  if (v === null || v === undefined || !/^\d{1,7}$/.test(v)) return limits.fallback
  const n = Number(v)
  return (limits.offAtZero && n === 0) || (n >= limits.min && n <= limits.max) ? n : limits.fallback
}

export function splitPem(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
}

const endpointOf = (r: EndpointRow): InstallationEndpoint => ({
  id: r.id,
  orderId: r.order_id,
  host: r.host,
  port: r.port,
  address: r.address,
  starttls: r.starttls
})

const resultOf = (r: ResultRow): InstallationResult => ({
  host: r.host,
  port: r.port,
  verdict: r.verdict,
  label: VERDICT_LABELS[r.verdict],
  detail: r.detail,
  servedSerial: r.served_serial,
  servedValidTill: r.served_valid_till,
  checkedAt: r.checked_at
})

/** How often the loop looks for orders due a check; each look checks at most LOOP_BATCH orders. */
export const INSTALLATION_LOOP_MS = 60 * 1000
const LOOP_BATCH = 50

/**
 * Checks due orders every minute, one batch at a time (a batch still running skips the tick).
 * Returns a stop function that resolves after the batch in flight.
 */
export function startInstallationLoop(
  installations: Installations,
  log: (line: string) => void,
  intervalMs = INSTALLATION_LOOP_MS
): () => Promise<void> {
  let running: Promise<void> | null = null
  const tick = (): void => {
    if (running) return
    running = installations
      .checkDue(LOOP_BATCH)
      .then(
        () => undefined,
        (err: unknown) => log(`could not check installations: ${err instanceof Error ? err.message : String(err)}`)
      )
      .finally(() => {
        running = null
      })
  }
  const timer = setInterval(tick, intervalMs)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}
