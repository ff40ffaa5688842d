/**
 * ACME Renewal Information as a client (RFC 9773), for certificates the ACME issuer got from an
 * external CA. After each issuance CertDesk asks the CA's `renewalInfo` resource for the
 * certificate's suggested window (§4.2), picks a moment at random inside it (so a CA's whole
 * book is not renewed in the same minute), asks again when Retry-After says (§4.3), and renews
 * at once when the CA moves the window into the past (a mass revocation). A CA whose directory
 * has no `renewalInfo` keeps the reseller API's rule: 14 days before the certificate ends.
 */
import { randomInt } from 'node:crypto'
import type { Agent } from 'node:https'
import { request } from 'node:https'
import { ariCertId } from '../acme-server/signer'
import type { CoreContext } from '../context'
import { addDays, isoDate, isoTimestamp, parseDate } from '../time'
import { x509 } from '../certificates/x509'

/** The reseller API's reissue lead (spec "Certificate lifecycle rule"), for CAs without ARI. */
export const DEFAULT_LEAD_DAYS = 14
/** §4.3: without a usable Retry-After, ask again after six hours. */
export const DEFAULT_RETRY_AFTER_S = 6 * 3600
/** A Retry-After outside these bounds is clamped: not a poll per minute, and at least daily. */
const MIN_RETRY_AFTER_S = 60
const MAX_RETRY_AFTER_S = 24 * 3600
/** A renewalInfo answer is a small JSON object; anything larger is refused. */
const MAX_BODY_BYTES = 16 * 1024
const TIMEOUT_MS = 10_000

export interface RenewalInfo {
  start: Date
  end: Date
  explanationUrl: string | null
  retryAfterS: number
}

export interface AriRow {
  order_id: number
  cert_id: string
  directory_url: string
  source: 'ari' | 'default'
  window_start: string
  window_end: string
  explanation_url: string | null
  renew_at: string
  next_check_at: string | null
  checked_at: string
  last_error: string | null
  /** When the look at whether the renewal can run without the customer was made (once per certificate). */
  readiness_checked_at: string | null
}

/** What the order page and the API show: the window, where it came from, the chosen moment. */
export interface RenewalWindowView {
  source: 'ari' | 'default'
  /** Human wording of the source. */
  source_detail: string
  cert_id: string
  window_start: string
  window_end: string
  renew_at: string
  explanation_url: string | null
  checked_at: string
  next_check_at: string | null
  last_error: string | null
}

/** §4.1: the CertID the renewalInfo URL ends with, from the leaf certificate. */
export function certIdOfPem(leafPem: string): string {
  return ariCertId(new x509.X509Certificate(leafPem))
}

/**
 * §4.2: a uniformly random moment inside the window; at once when the window has already
 * ended or when the random moment is past. `random(n)` returns an integer in [0, n).
 */
export function chooseRenewAt(
  start: Date,
  end: Date,
  now: Date,
  random: (n: number) => number = (n) => (n <= 1 ? 0 : randomInt(Math.min(n, 2 ** 47)))
): Date {
  if (end.getTime() <= now.getTime()) return now
  const span = Math.max(0, end.getTime() - start.getTime())
  const at = new Date(start.getTime() + (span > 0 ? random(Math.floor(span / 1000)) * 1000 : 0))
  return at.getTime() < now.getTime() ? now : at
}

/** §4.3: Retry-After in seconds or as an HTTP date; clamped; the default when absent or bad. */
export function retryAfterSeconds(header: string | undefined, now: Date): number {
  let s = DEFAULT_RETRY_AFTER_S
  if (header && /^\d+$/.test(header.trim())) s = Number(header.trim())
  else if (header && !Number.isNaN(Date.parse(header))) s = Math.round((Date.parse(header) - now.getTime()) / 1000)
  return Math.min(MAX_RETRY_AFTER_S, Math.max(MIN_RETRY_AFTER_S, s))
}

/** How long a failed look waits before its one retry. */
const RETRY_PAUSE_MS = 500

/**
 * Runs a look at the CA and, when it fails, once more after a short pause: a connection dropped
 * on a busy machine or by the CA's load balancer is not a reason to wait for the next look.
 */
export async function onceMore<T>(look: () => Promise<T>): Promise<T> {
  try {
    return await look()
  } catch {
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS))
    return look()
  }
}

/** §4.2: GET <renewalInfo>/<CertID>, unauthenticated. */
export function fetchRenewalInfo(
  base: string,
  certId: string,
  agent: Agent | undefined,
  now: Date
): Promise<RenewalInfo> {
  const url = `${base.replace(/\/+$/, '')}/${certId}`
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, timeout: TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        body += d
        if (body.length > MAX_BODY_BYTES) req.destroy(new Error('the answer is too long'))
      })
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`))
        try {
          const j = JSON.parse(body) as { suggestedWindow?: { start?: string; end?: string }; explanationURL?: string }
          const start = new Date(String(j.suggestedWindow?.start))
          const end = new Date(String(j.suggestedWindow?.end))
          // §4.2: a window whose end is not after its start is invalid and must be ignored.
          if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || end.getTime() <= start.getTime())
            return reject(new Error('the suggested window is not a valid start and end'))
          const raw = res.headers['retry-after']
          resolve({
            start,
            end,
            explanationUrl: typeof j.explanationURL === 'string' ? j.explanationURL : null,
            retryAfterS: retryAfterSeconds(Array.isArray(raw) ? raw[0] : raw, now)
          })
        } catch {
          reject(new Error('the answer is not JSON'))
        }
      })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end()
  })
}

/**
 * The scheduler's lookup of renewals due. CROSS JOIN keeps SQLite starting from the renew_at
 * index: started from orders, it would walk every completed order of a large store on each
 * idle pass. The join condition is in WHERE, where PostgreSQL (which has no CROSS JOIN … ON)
 * reads the same inner join and plans it itself.
 */
export const DUE_RENEWALS_SQL = `SELECT o.id, o.order_number FROM ari_windows a CROSS JOIN orders o
  WHERE o.id = a.order_id AND a.renew_at <= ? AND o.status = 'completed' AND o.auto_reissue = 1
    AND o.purchase_end_date > ?
  ORDER BY o.id`
/** Windows whose Retry-After has passed (the partial index holds only those with a next look). */
export const DUE_CHECKS_SQL =
  'SELECT * FROM ari_windows WHERE next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY order_id'

export class RenewalWindows {
  constructor(private readonly ctx: CoreContext) {}

  async get(orderId: number): Promise<AriRow | null> {
    return (
      ((await this.ctx.store.get('SELECT * FROM ari_windows WHERE order_id = ?', orderId)) as AriRow | undefined) ??
      null
    )
  }

  /** Stores the window of a new certificate: the CA's, or the 14-day rule when it has none. */
  async store(
    orderId: number,
    certId: string,
    directoryUrl: string,
    info: RenewalInfo | null,
    notAfter: Date,
    error: string | null
  ): Promise<AriRow> {
    const now = this.ctx.clock()
    const lead = addDays(notAfter, -DEFAULT_LEAD_DAYS)
    const start = info?.start ?? lead
    const end = info?.end ?? lead
    const renewAt = info ? chooseRenewAt(info.start, info.end, now) : lead
    // A CA with ARI is asked again after Retry-After; one without it, or unreachable, after the default.
    const nextCheck = info
      ? new Date(now.getTime() + info.retryAfterS * 1000)
      : error && error.startsWith('could not')
        ? new Date(now.getTime() + DEFAULT_RETRY_AFTER_S * 1000)
        : null
    await this.ctx.store.run(
      `INSERT INTO ari_windows (order_id, cert_id, directory_url, source, window_start, window_end, explanation_url, renew_at, next_check_at, checked_at, last_error)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET cert_id = excluded.cert_id, directory_url = excluded.directory_url, source = excluded.source,
           window_start = excluded.window_start, window_end = excluded.window_end, explanation_url = excluded.explanation_url,
           renew_at = excluded.renew_at, next_check_at = excluded.next_check_at, checked_at = excluded.checked_at, last_error = excluded.last_error,
           readiness_checked_at = NULL`,
      orderId,
      certId,
      directoryUrl,
      info ? 'ari' : 'default',
      isoTimestamp(start),
      isoTimestamp(end),
      info?.explanationUrl ?? null,
      isoTimestamp(renewAt),
      nextCheck ? isoTimestamp(nextCheck) : null,
      isoTimestamp(now),
      error
    )
    return (await this.get(orderId)) as AriRow
  }

  /**
   * The certificate of the order no longer comes from an external CA (the local CA issued it, or
   * the CA could not name it for RFC 9773): its schedule is the reseller API's rule again.
   */
  async forget(orderId: number): Promise<void> {
    await this.ctx.store.run('DELETE FROM ari_windows WHERE order_id = ?', orderId)
  }

  /**
   * A later look at the same certificate. The chosen moment stays while the window stays (a
   * new draw at every look would drift towards the window's start); a moved window gets a new
   * draw, and a window in the past means now. The order's `next_reissue_at` follows the moment
   * (one schedule per order), unless no renewal is planned for it.
   */
  async update(row: AriRow, info: RenewalInfo): Promise<void> {
    const now = this.ctx.clock()
    const same = isoTimestamp(info.start) === row.window_start && isoTimestamp(info.end) === row.window_end
    const renewAt = same && row.source === 'ari' ? parseDate(row.renew_at) : chooseRenewAt(info.start, info.end, now)
    const db = this.ctx.store
    await db.tx(async () => {
      const changed = (
        await db.run(
          `UPDATE ari_windows SET source = 'ari', window_start = ?, window_end = ?, explanation_url = ?, renew_at = ?,
             next_check_at = ?, checked_at = ?, last_error = NULL WHERE order_id = ? AND cert_id = ?`,
          isoTimestamp(info.start),
          isoTimestamp(info.end),
          info.explanationUrl,
          isoTimestamp(renewAt),
          isoTimestamp(new Date(now.getTime() + info.retryAfterS * 1000)),
          isoTimestamp(now),
          row.order_id,
          row.cert_id
        )
      ).changes
      if (changed > 0)
        await db.run(
          'UPDATE orders SET next_reissue_at = ? WHERE id = ? AND next_reissue_at IS NOT NULL AND next_reissue_at <> ?',
          isoDate(renewAt),
          row.order_id,
          isoDate(renewAt)
        )
    })
  }

  /** A failed look: keep the window, ask again after the default wait (§4.3). */
  async failed(row: AriRow, error: string): Promise<void> {
    const now = this.ctx.clock()
    await this.ctx.store.run(
      'UPDATE ari_windows SET next_check_at = ?, last_error = ? WHERE order_id = ? AND cert_id = ?',
      isoTimestamp(new Date(now.getTime() + DEFAULT_RETRY_AFTER_S * 1000)),
      error,
      row.order_id,
      row.cert_id
    )
  }

  /** Windows whose Retry-After has passed (an indexed range: cheap when none is due). */
  async dueChecks(now: Date): Promise<AriRow[]> {
    return (await this.ctx.store.all(DUE_CHECKS_SQL, isoTimestamp(now))) as AriRow[]
  }

  /** Orders whose chosen moment has come, still active and renewed automatically. */
  async dueRenewals(now: Date, today: string): Promise<{ id: number; order_number: string }[]> {
    return (await this.ctx.store.all(DUE_RENEWALS_SQL, isoTimestamp(now), today)) as {
      id: number
      order_number: string
    }[]
  }

  async view(orderId: number): Promise<RenewalWindowView | null> {
    const r = await this.get(orderId)
    if (!r) return null
    return {
      source: r.source,
      source_detail:
        r.source === 'ari'
          ? `the CA's suggested window (ACME Renewal Information, RFC 9773) from ${r.directory_url}`
          : `${DEFAULT_LEAD_DAYS} days before the certificate ends: the CA at ${r.directory_url} offers no renewal information`,
      cert_id: r.cert_id,
      window_start: r.window_start,
      window_end: r.window_end,
      renew_at: r.renew_at,
      explanation_url: r.explanation_url,
      checked_at: r.checked_at,
      next_check_at: r.next_check_at,
      last_error: r.last_error
    }
  }
}

/** GET the CA's directory (RFC 8555 §7.1.1), a small JSON object, to find `renewalInfo` (RFC 9773 §3). */
export function fetchDirectory(url: string, agent: Agent | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, timeout: 10_000, headers: { accept: 'application/json' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        body += d
        if (body.length > 64 * 1024) req.destroy(new Error('the directory is too long'))
      })
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`))
        try {
          resolve(JSON.parse(body))
        } catch {
          reject(new Error(`${url} is not JSON`))
        }
      })
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')))
    req.on('error', reject)
    req.end()
  })
}
