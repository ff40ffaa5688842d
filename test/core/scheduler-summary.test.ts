import { describe, expect, it } from 'vitest'
import { summarize, type SchedulerReport } from '../../src-main/core/scheduler'

describe('scheduler log line', () => {
  it('stays one short line however many orders a pass touched', () => {
    const errors = Array.from({ length: 100_000 }, (_, i) => ({
      order_id: i,
      order_number: `ORD-2026-${i}`,
      error: 'no CSR yet'
    }))
    const r: SchedulerReport = {
      as_of: '2026-11-21 06:00:00',
      issued: [
        {
          order_id: 1,
          order_number: 'ORD-2026-000001',
          serial: 'ab',
          valid_from: '2026-11-21',
          valid_till: '2027-06-08',
          reason: 'due'
        }
      ],
      validation_needed: [],
      expired: Array.from({ length: 7 }, (_, i) => ({ order_id: i, order_number: `ORD-2026-00000${i}` })),
      errors
    }
    const line = summarize(r)
    expect(line.length).toBeLessThan(400)
    expect(line).toBe(
      'scheduler as of 2026-11-21 06:00:00: issued 1 (ORD-2026-000001), validation needed 0, ' +
        'expired 7 (ORD-2026-000000, ORD-2026-000001, ORD-2026-000002, ORD-2026-000003, ORD-2026-000004, …), ' +
        'errors 100000; first error: ORD-2026-0: no CSR yet'
    )
  })
})
