/** ISO 8601 week dates (§5.2.3): weeks start on Monday; week 1 holds the year's first Thursday. */
import { DAY_MS } from '../time'

/** `2026-W48` of the UTC day of `d`. */
export function isoWeek(d: Date): string {
  const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()))
  const weekday = (day.getUTCDay() + 6) % 7
  // The Thursday of this week decides the year.
  const thursday = new Date(day.getTime() + (3 - weekday) * DAY_MS)
  const year = thursday.getUTCFullYear()
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS))
  return `${year}-W${String(week).padStart(2, '0')}`
}

/** Monday 00:00 UTC of the week holding `d`. */
export function weekStart(d: Date): Date {
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  const weekday = (new Date(day).getUTCDay() + 6) % 7
  return new Date(day - weekday * DAY_MS)
}
