/**
 * Time in the core. Everything is UTC; the core never reads the wall clock itself but takes a
 * `Clock`, so tests and `scheduler run --as-of` can drive it (docs/decisions.md).
 */
export type Clock = () => Date

/** The one place that reads the real clock. */
export const systemClock: Clock = () => new Date()

/** A clock stopped at one instant, for `--as-of` runs and tests. */
export function fixedClock(at: Date | string): Clock {
  const instant = typeof at === 'string' ? parseDate(at) : at
  return () => new Date(instant.getTime())
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

/** `YYYY-MM-DD` of the UTC day containing `d`. */
export function isoDate(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the spec's timestamp format. */
export function isoTimestamp(d: Date): string {
  return `${isoDate(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

/** Parses `YYYY-MM-DD` (UTC midnight) or a full ISO timestamp; throws on anything else. */
export function parseDate(s: string): Date {
  const m = DATE_RE.exec(s)
  if (m) {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
    if (isoDate(d) !== s) throw new RangeError(`could not parse date: ${s} is not a calendar day`)
    return d
  }
  const t = Date.parse(s.includes('T') || s.endsWith('Z') ? s : `${s.replace(' ', 'T')}Z`)
  if (Number.isNaN(t)) throw new RangeError(`could not parse date: ${s}`)
  return new Date(t)
}

export function isValidDate(s: string): boolean {
  const m = DATE_RE.exec(s)
  if (!m) return false
  return isoDate(new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))) === s
}

export const DAY_MS = 86_400_000

export function addDays(d: Date, days: number): Date {
  return new Date(d.getTime() + days * DAY_MS)
}

/**
 * Calendar months, clamped to the last day of the target month (2026-01-31 + 1 month is
 * 2026-02-28), the way a subscription end date is read by people.
 */
export function addMonths(d: Date, months: number): Date {
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth() + months
  const target = new Date(Date.UTC(y, m, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay))
  return target
}

/** Whole days from `from` to `to` (negative when `to` is earlier), by UTC calendar day. */
export function daysBetween(from: Date, to: Date): number {
  return Math.floor((startOfDay(to).getTime() - startOfDay(from).getTime()) / DAY_MS)
}

export function startOfDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()))
}
