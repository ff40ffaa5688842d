/**
 * Sliding-window limits for requests that make CertDesk act on something outside it (sign and
 * deploy a certificate, mail an approver). The reseller API v3.0 shows no quotas ("Limits":
 * rate limits not shown), so each limit is CertDesk's own and answers as RFC 6585 §4 asks:
 * 429 with `Retry-After` (RFC 9110 §10.2.3) saying when the request would go through.
 *
 * Each caller keeps its own record of what it did (a certificate row, a send row) and hands the
 * times here; this file only decides, so every limit counts and words its wait the same way.
 */
import { RateLimitedError } from './errors'
import { isoTimestamp } from './time'

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS

/** At most `limit` units within any `ms` ending now; `label` reads "within <label>". */
export interface LimitWindow {
  limit: number
  ms: number
  label: string
}

/** Something counted earlier: when (ms since the epoch), and how many units (1 when not said). */
export interface Counted {
  at: number
  units?: number
}

/** The window a request does not fit in, and how long until it does. */
export interface LimitHit {
  window: LimitWindow
  /** Units already counted in that window. */
  used: number
  retryAfterSeconds: number
}

/**
 * Whether a request of `units` fits every window ending at `now`; null when it does, else the
 * window that keeps it waiting longest. It fits once enough of the oldest counted events have
 * aged out of the window; a request larger than the whole allowance fits an empty window only,
 * so it is delayed, never refused for good.
 */
export function limitHit(
  counted: readonly Counted[],
  windows: readonly LimitWindow[],
  now: Date,
  units = 1
): LimitHit | null {
  const t = now.getTime()
  let hit: LimitHit | null = null
  let longest = 0
  for (const w of windows) {
    const inWindow = counted.filter((c) => c.at > t - w.ms).sort((a, b) => a.at - b.at)
    let used = inWindow.reduce((sum, c) => sum + (c.units ?? 1), 0)
    const total = used
    if (used === 0 || used + units <= w.limit) continue
    let wait = 0
    for (const c of inWindow) {
      used -= c.units ?? 1
      wait = c.at + w.ms - t
      if (used === 0 || used + units <= w.limit) break
    }
    if (wait > longest || hit === null) {
      longest = wait
      hit = { window: w, used: total, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) }
    }
  }
  return hit
}

/** The end of a refusal: "try again in N seconds (after <UTC time>)". */
export function retryText(now: Date, seconds: number): string {
  return `try again in ${seconds} seconds (after ${isoTimestamp(new Date(now.getTime() + seconds * 1000))} UTC)`
}

/** The 429 for `hit`: `reason` says what was counted, the wait is added the same way everywhere. */
export function rateLimited(reason: string, hit: LimitHit, now: Date): RateLimitedError {
  return new RateLimitedError(`${reason}; ${retryText(now, hit.retryAfterSeconds)}`, hit.retryAfterSeconds)
}
