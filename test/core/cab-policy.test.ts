import { describe, expect, it } from 'vitest'
import { constructedEmailAllowed, dcvReuseDays, maxValidityDays } from '../../src-main/core/certificates/cab-policy'
import { validityWindow } from '../../src-main/core/certificates/lifecycle'

const at = (s: string) => new Date(s)

describe('CA/Browser Forum dates (ballot SC-081)', () => {
  it('caps TLS validity at 398, 200, 100 and 47 days, switching at 00:00 UTC on the ballot dates', () => {
    expect(maxValidityDays(at('2026-03-14T23:59:59Z'))).toBe(398)
    expect(maxValidityDays(at('2026-03-15T00:00:00Z'))).toBe(200)
    expect(maxValidityDays(at('2027-03-14T23:59:59Z'))).toBe(200)
    expect(maxValidityDays(at('2027-03-15T00:00:00Z'))).toBe(100)
    expect(maxValidityDays(at('2029-03-14T23:59:59Z'))).toBe(100)
    expect(maxValidityDays(at('2029-03-15T00:00:00Z'))).toBe(47)
  })

  it('reuses domain validation for 398, 200, 100 and then 10 days', () => {
    expect(dcvReuseDays(at('2026-03-14T12:00:00Z'))).toBe(398)
    expect(dcvReuseDays(at('2026-03-15T12:00:00Z'))).toBe(200)
    expect(dcvReuseDays(at('2027-03-15T12:00:00Z'))).toBe(100)
    expect(dcvReuseDays(at('2029-03-15T12:00:00Z'))).toBe(10)
  })

  it('allows constructed-email validation only before 2028-03-15', () => {
    expect(constructedEmailAllowed(at('2028-03-14T23:59:59Z'))).toBe(true)
    expect(constructedEmailAllowed(at('2028-03-15T00:00:00Z'))).toBe(false)
  })
})

describe('validity windows', () => {
  const tls = { type: 'ssl' as const }

  it('ends a 200-day certificate one second before valid_from + 200 days, and plans the reissue 14 days earlier', () => {
    const w = validityWindow(tls, at('2026-11-21T10:00:00Z'), at('2029-11-21T00:00:00Z'), true)
    expect(w.validTill.toISOString()).toBe('2027-06-09T09:59:59.000Z')
    expect(w.nextReissueAt?.toISOString()).toBe('2027-05-26T09:59:59.000Z')
  })

  it('never outlives the subscription, and plans no reissue for the last certificate', () => {
    const w = validityWindow(tls, at('2027-10-01T00:00:00Z'), at('2027-11-21T00:00:00Z'), true)
    expect(w.validTill.toISOString()).toBe('2027-11-20T23:59:59.000Z')
    expect(w.nextReissueAt).toBeNull()
  })

  it('applies the cap of the issue date, not of the order date', () => {
    const w = validityWindow(tls, at('2029-03-15T00:00:00Z'), at('2030-01-01T00:00:00Z'), true)
    expect(w.validTill.toISOString()).toBe('2029-04-30T23:59:59.000Z')
  })

  it('gives code signing 460 days and no automatic reissue', () => {
    const w = validityWindow({ type: 'code-signing' }, at('2026-11-21T00:00:00Z'), at('2029-11-21T00:00:00Z'), false)
    expect(w.validTill.toISOString()).toBe('2028-02-23T23:59:59.000Z')
    expect(w.nextReissueAt).toBeNull()
  })
})
