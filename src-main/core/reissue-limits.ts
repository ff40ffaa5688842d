/**
 * How often one order may be reissued on request (POST /ssl/reissue, the desktop app's reissue).
 * The reseller API v3.0 shows no quotas ("Limits": rate limits not shown), so these are
 * CertDesk's own: every manual reissue signs a certificate and runs every deploy target of the
 * order (the admin's reload command, webhooks), so a runaway script must not be able to do that
 * without end. Automatic reissues by the scheduler are not counted: they come once per
 * certificate lifetime (spec, "Certificate lifecycle rule").
 */
import type { Db } from './db'
import { RateLimitedError } from './errors'
import { isoTimestamp, parseDate } from './time'

/**
 * Reissues per order within any 60 minutes. A person reissues after a lost or compromised key
 * or to change names: once, and a second or third time when a server still has the wrong
 * file. A refused request (a bad CSR, a 409) is not counted.
 */
export const REISSUES_PER_HOUR = 3
/** Reissues per order within any 24 hours: ten times what a person needs in a bad day. */
export const REISSUES_PER_DAY = 10

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

interface Window {
  limit: number
  ms: number
  label: string
}

const WINDOWS: Window[] = [
  { limit: REISSUES_PER_HOUR, ms: HOUR_MS, label: 'an hour' },
  { limit: REISSUES_PER_DAY, ms: DAY_MS, label: '24 hours' }
]

/**
 * Throws a 429 when `orderId` had its allowance of requested reissues in one of the windows
 * ending at `now`. Counts the certificates a reissue request produced (reason `reissue`): a
 * reissue that waits for validation blocks any further reissue until it is issued (409), so
 * every accepted request ends up as one such certificate.
 */
export function assertReissueAllowed(db: Db, orderId: number, orderNumber: string, now: Date): void {
  const since = isoTimestamp(new Date(now.getTime() - DAY_MS))
  const times = (
    db
      .prepare(
        `SELECT created_at FROM certificates WHERE order_id = ? AND reason = 'reissue' AND created_at > ? ORDER BY created_at`
      )
      .all(orderId, since) as { created_at: string }[]
  ).map((r) => parseDate(r.created_at).getTime())
  let waitMs = 0
  let hit: Window | null = null
  for (const w of WINDOWS) {
    const inWindow = times.filter((t) => t > now.getTime() - w.ms)
    if (inWindow.length < w.limit) continue
    // The request is allowed once enough of the window's reissues have aged out of it.
    const wait = inWindow[inWindow.length - w.limit] + w.ms - now.getTime()
    if (wait > waitMs) {
      waitMs = wait
      hit = w
    }
  }
  if (!hit) return
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  throw new RateLimitedError(
    `could not reissue order ${orderNumber}: it was reissued ${hit.limit} times within ${hit.label}, the most allowed; try again in ${seconds} seconds (after ${isoTimestamp(new Date(now.getTime() + seconds * 1000))} UTC)`,
    seconds
  )
}
