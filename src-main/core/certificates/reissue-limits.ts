/**
 * How often one order may be reissued on request (POST /ssl/reissue, the desktop app's
 * reissue), one of CertDesk's own limits (rate-limits.ts): every manual reissue signs a
 * certificate and runs every deploy target of the order (the admin's reload command, webhooks),
 * so a runaway script must not be able to do that without end. Automatic reissues by the
 * scheduler are not counted: they come once per certificate lifetime (spec, "Certificate
 * lifecycle rule").
 */
import { DAY_MS, HOUR_MS, limitHit, rateLimited, type LimitWindow } from '../rate-limits'
import { isoTimestamp, parseDate } from '../time'
import type { Store } from '../store'

/**
 * Reissues per order within any 60 minutes. A person reissues after a lost or compromised key
 * or to change names: once, and a second or third time when a server still has the wrong
 * file. A refused request (a bad CSR, a 409) is not counted.
 */
export const REISSUES_PER_HOUR = 3
/** Reissues per order within any 24 hours: ten times what a person needs in a bad day. */
export const REISSUES_PER_DAY = 10

const WINDOWS: LimitWindow[] = [
  { limit: REISSUES_PER_HOUR, ms: HOUR_MS, label: 'an hour' },
  { limit: REISSUES_PER_DAY, ms: DAY_MS, label: '24 hours' }
]

/**
 * Throws a 429 when `orderId` had its allowance of requested reissues in one of the windows
 * ending at `now`. Counts the certificates a reissue request produced (reason `reissue`): a
 * reissue that waits for validation blocks any further reissue until it is issued (409), so
 * every accepted request ends up as one such certificate.
 */
export async function assertReissueAllowed(db: Store, orderId: number, orderNumber: string, now: Date): Promise<void> {
  const since = isoTimestamp(new Date(now.getTime() - DAY_MS))
  const times = (
    (await db.all(
      `SELECT created_at FROM certificates WHERE order_id = ? AND reason = 'reissue' AND created_at > ?`,
      orderId,
      since
    )) as { created_at: string }[]
  ).map((r) => ({ at: parseDate(r.created_at).getTime() }))
  const hit = limitHit(times, WINDOWS, now)
  if (!hit) return
  throw rateLimited(
    `could not reissue order ${orderNumber}: it was reissued ${hit.window.limit} times within ${hit.window.label}, the most allowed`,
    hit,
    now
  )
}
