/**
 * The sliding windows every CertDesk limit is decided by: a request fits while what the window
 * holds plus the request stays within the limit, and the wait is until enough of the oldest
 * counted events have left the window, to the second, checked just inside and just outside.
 */
import { describe, expect, it } from 'vitest'
import { DAY_MS, HOUR_MS, limitHit, rateLimited, type LimitWindow } from '../../src-main/core/rate-limits'

const windows: LimitWindow[] = [
  { limit: 3, ms: HOUR_MS, label: 'an hour' },
  { limit: 5, ms: DAY_MS, label: '24 hours' }
]
const at = (iso: string): number => new Date(iso).getTime()

describe('limitHit', () => {
  it('lets the limit in and refuses one more until the oldest leaves the window', () => {
    const three = ['2026-11-21T10:00:00Z', '2026-11-21T10:10:00Z', '2026-11-21T10:20:00Z'].map((t) => ({ at: at(t) }))
    expect(limitHit(three.slice(0, 2), windows, new Date('2026-11-21T10:30:00Z'))).toBeNull()
    const hit = limitHit(three, windows, new Date('2026-11-21T10:30:00Z'))
    expect(hit).toMatchObject({ window: windows[0], used: 3, retryAfterSeconds: 30 * 60 })
    // One second before the first is an hour old it still waits; at the hour it fits.
    expect(limitHit(three, windows, new Date('2026-11-21T10:59:59Z'))?.retryAfterSeconds).toBe(1)
    expect(limitHit(three, windows, new Date('2026-11-21T11:00:00Z'))).toBeNull()
  })

  it('answers with the window that keeps the request waiting longest', () => {
    const five = ['00:00', '01:00', '02:00', '12:00', '12:30'].map((t) => ({ at: at(`2026-11-21T${t}:00Z`) }))
    const hit = limitHit(five, windows, new Date('2026-11-21T13:00:00Z'))
    expect(hit?.window.label).toBe('24 hours')
    expect(hit?.retryAfterSeconds).toBe(11 * 3600)
  })

  it('counts units: a request of several fits only when all of it does', () => {
    const big: LimitWindow[] = [{ limit: 300, ms: HOUR_MS, label: 'an hour' }]
    const sent = [
      { at: at('2026-11-21T10:00:00Z'), units: 200 },
      { at: at('2026-11-21T10:20:00Z'), units: 90 }
    ]
    const now = new Date('2026-11-21T10:30:00Z')
    expect(limitHit(sent, big, now, 10)).toBeNull()
    // 11 more needs the 200 to leave; 100 more too; 300 more needs both gone.
    expect(limitHit(sent, big, now, 11)?.retryAfterSeconds).toBe(30 * 60)
    expect(limitHit(sent, big, now, 300)?.retryAfterSeconds).toBe(50 * 60)
    // More than the whole allowance waits for an empty window, and is never refused for good.
    expect(limitHit(sent, big, now, 400)?.retryAfterSeconds).toBe(50 * 60)
    expect(limitHit([], big, now, 400)).toBeNull()
  })

  it('words the 429 with the wait in seconds and the UTC time it ends', () => {
    const now = new Date('2026-11-21T10:30:00Z')
    const hit = limitHit([{ at: at('2026-11-21T10:00:00Z') }], [{ limit: 1, ms: HOUR_MS, label: 'an hour' }], now)!
    const err = rateLimited('could not do it: done once within an hour', hit, now)
    expect(err.kind).toBe('rate_limited')
    expect(err.retryAfterSeconds).toBe(1800)
    expect(err.message).toBe(
      'could not do it: done once within an hour; try again in 1800 seconds (after 2026-11-21 11:00:00 UTC)'
    )
  })
})
