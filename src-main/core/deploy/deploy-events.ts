/**
 * What the event log says about deploys, for whom. A deploy target is the admin's
 * configuration (a folder path on their server, a command, a webhook URL that may carry a token
 * in its query); a reseller reads GET /events and learns what happened to the order (which
 * target kind, which certificate, which attempt, why in general terms), never where or how.
 * The stored message keeps the admin's full detail; `resellerDeployEvent` rebuilds the
 * reseller's view from an allow-list of the event's data, so rows written before this rule
 * show no configuration either.
 */
import type { CertEvent } from '../events'

/**
 * Minutes to wait after the 1st, 2nd, … failed attempt: quick at first (a reload racing a
 * restart), then spread over half a day (a receiver down for maintenance). Six attempts in all,
 * the last about 14.5 hours after the first, well inside the 14 days a reissue leaves before
 * the old certificate expires (spec, "Certificate lifecycle rule").
 */
export const RETRY_MINUTES = [1, 5, 30, 120, 720] as const
export const MAX_ATTEMPTS = RETRY_MINUTES.length + 1

/** The data keys of a deploy event a reseller may read: the outcome, no configuration. */
const RESELLER_DATA_KEYS = [
  'run_id',
  'target_id',
  'kind',
  'serial',
  'trigger',
  'attempt',
  'next_attempt_at',
  'gave_up',
  'reason'
] as const

const isDeployEvent = (type: CertEvent['type']): boolean => type === 'deploy.succeeded' || type === 'deploy.failed'

/** A deploy target as a reseller may see it named: its kind and number, not its path or URL. */
const publicTargetName = (kind: string, id: unknown): string =>
  `${['folder', 'command', 'webhook'].includes(kind) ? kind : 'deploy'} target ${typeof id === 'number' ? id : '?'}`

/** The message of a deploy event, built only from the data a reseller may read. */
export function publicDeployMessage(
  type: 'deploy.succeeded' | 'deploy.failed',
  data: Record<string, unknown>,
  orderNumber: string | null
): string {
  const serial = typeof data.serial === 'string' ? data.serial : null
  const cert = serial ? `certificate ${serial}` : 'the certificate'
  if (data.run_id === undefined) {
    // The deploys of a stored certificate could not be set up at all (no run exists).
    return `Could not start the deploys of ${orderNumber ? `order ${orderNumber}` : 'this order'}`
  }
  const target = publicTargetName(String(data.kind ?? ''), data.target_id)
  if (type === 'deploy.succeeded') return `${cert.charAt(0).toUpperCase()}${cert.slice(1)} deployed to ${target}`
  const attempt = typeof data.attempt === 'number' ? `attempt ${data.attempt} of ${MAX_ATTEMPTS}` : 'an attempt'
  const reason = typeof data.reason === 'string' && data.reason ? `: ${data.reason}` : ''
  const next = typeof data.next_attempt_at === 'string' ? `next attempt at ${data.next_attempt_at}` : 'no more attempts'
  return `Deploy of ${cert} to ${target} failed (${attempt})${reason}; ${next}`
}

/** The event as GET /events shows it to a reseller; events other than deploys are unchanged. */
export function resellerDeployEvent(e: CertEvent): CertEvent {
  if (!isDeployEvent(e.type)) return e
  const data: Record<string, unknown> = {}
  for (const k of RESELLER_DATA_KEYS) if (k in e.data) data[k] = e.data[k]
  return {
    ...e,
    message: publicDeployMessage(e.type as 'deploy.succeeded' | 'deploy.failed', data, e.orderNumber),
    data
  }
}
