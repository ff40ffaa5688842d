import type { Clock } from '../../src-main/core/time'

/** A clock the test moves by hand. */
export interface ManualClock {
  clock: Clock
  set(at: string | Date): void
  advanceDays(days: number): void
  now(): Date
}

export function manualClock(start: string | Date = '2026-11-21T10:00:00Z'): ManualClock {
  let t = new Date(start).getTime()
  return {
    clock: () => new Date(t),
    set: (at) => {
      t = new Date(at).getTime()
    },
    advanceDays: (days) => {
      t += days * 86_400_000
    },
    now: () => new Date(t)
  }
}
