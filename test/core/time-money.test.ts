import { describe, expect, it } from 'vitest'
import { centsToUsd, formatUsd, percentOf, usdToCents } from '../../src-main/core/billing/money'
import { addMonths, daysBetween, isoDate, isoTimestamp, isValidDate, parseDate } from '../../src-main/core/time'

describe('time', () => {
  it('formats UTC dates and timestamps the way the spec shows them', () => {
    const d = new Date('2026-01-02T03:04:05.678Z')
    expect(isoDate(d)).toBe('2026-01-02')
    expect(isoTimestamp(d)).toBe('2026-01-02 03:04:05')
  })

  it('adds calendar months, clamping to the end of shorter months', () => {
    expect(isoDate(addMonths(parseDate('2026-01-31'), 1))).toBe('2026-02-28')
    expect(isoDate(addMonths(parseDate('2028-02-29'), 12))).toBe('2029-02-28')
    expect(isoDate(addMonths(parseDate('2026-11-21'), 36))).toBe('2029-11-21')
  })

  it('refuses dates that are not calendar days', () => {
    expect(isValidDate('2026-02-29')).toBe(false)
    expect(isValidDate('2028-02-29')).toBe(true)
    expect(() => parseDate('2026-13-01')).toThrow(/could not parse date/)
    expect(() => parseDate('yesterday')).toThrow(/could not parse date/)
  })

  it('counts whole UTC days', () => {
    expect(daysBetween(new Date('2026-11-21T23:59:00Z'), new Date('2026-11-22T00:01:00Z'))).toBe(1)
    expect(daysBetween(new Date('2026-11-22T10:00:00Z'), new Date('2026-11-21T10:00:00Z'))).toBe(-1)
  })
})

describe('money', () => {
  it('keeps cents exact and refuses fractions of a cent', () => {
    expect(usdToCents(0.1 + 0.2)).toBe(30)
    expect(usdToCents(250.5)).toBe(25050)
    expect(() => usdToCents(1.234)).toThrow(/more than two decimals/)
    expect(() => usdToCents(Number.NaN)).toThrow(/finite/)
    expect(centsToUsd(5772)).toBe(57.72)
    expect(formatUsd(3120)).toBe('31.20 USD')
    expect(formatUsd(-5)).toBe('-0.05 USD')
  })

  it('rounds discounts half away from zero in cents', () => {
    expect(percentOf(1950, 10)).toBe(195)
    expect(percentOf(1005, 10)).toBe(101)
    expect(percentOf(3120, 5)).toBe(156)
  })
})
