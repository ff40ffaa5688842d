/**
 * The client side of RFC 9773 §4.2–4.3 with fixed UTC dates: the moment chosen inside the
 * window, a window in the past, Retry-After, and the dns-persist-01 record parser's edges.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  chooseRenewAt,
  DEFAULT_RETRY_AFTER_S,
  DUE_CHECKS_SQL,
  DUE_RENEWALS_SQL,
  retryAfterSeconds
} from '../../src-main/core/acme-client/ari'
import { openDatabase } from '../../src-main/core/store/db'
import { judgePersistRecords, parsePersistRecord, persistRecordValue } from '../../src-main/core/dcv/dns-persist'

const at = (s: string): Date => new Date(s)

describe('the renewal moment (RFC 9773 §4.2)', () => {
  const start = at('2027-01-10T00:00:00Z')
  const end = at('2027-01-12T00:00:00Z')
  const now = at('2027-01-01T00:00:00Z')

  it('is drawn uniformly inside the window, never outside it', () => {
    expect(chooseRenewAt(start, end, now, () => 0)).toEqual(start)
    expect(chooseRenewAt(start, end, now, (n) => n - 1)).toEqual(at('2027-01-11T23:59:59Z'))
    expect(chooseRenewAt(start, end, now, (n) => Math.floor(n / 2))).toEqual(at('2027-01-11T00:00:00Z'))
    for (let i = 0; i < 200; i++) {
      const t = chooseRenewAt(start, end, now).getTime()
      expect(t).toBeGreaterThanOrEqual(start.getTime())
      expect(t).toBeLessThan(end.getTime())
    }
  })

  it('is now when the window has moved into the past, or when the draw is already past', () => {
    expect(chooseRenewAt(at('2026-12-01T00:00:00Z'), at('2026-12-02T00:00:00Z'), now)).toEqual(now)
    expect(chooseRenewAt(at('2026-12-31T00:00:00Z'), at('2027-01-02T00:00:00Z'), now, () => 0)).toEqual(now)
  })
})

describe('Retry-After (RFC 9773 §4.3)', () => {
  const now = at('2027-01-01T00:00:00Z')
  it('takes seconds or an HTTP date, clamps both, and falls back to six hours', () => {
    expect(retryAfterSeconds('3600', now)).toBe(3600)
    expect(retryAfterSeconds('Fri, 01 Jan 2027 02:00:00 GMT', now)).toBe(7200)
    expect(retryAfterSeconds('1', now)).toBe(60)
    expect(retryAfterSeconds('99999999', now)).toBe(86400)
    expect(retryAfterSeconds(undefined, now)).toBe(DEFAULT_RETRY_AFTER_S)
    expect(retryAfterSeconds('soon; rm -rf /', now)).toBe(DEFAULT_RETRY_AFTER_S)
  })
})

describe('dns-persist-01 records', () => {
  const want = {
    issuerDomains: ['ca.test'],
    accountUri: 'https://ca.test/acct/1',
    wildcard: false,
    now: at('2027-01-01T00:00:00Z')
  }

  it('builds the exact record and reads it back', () => {
    const v = persistRecordValue({
      issuerDomain: 'CA.test',
      accountUri: want.accountUri,
      wildcard: true,
      persistUntil: at('2027-06-01T00:00:00Z')
    })
    expect(v).toBe('ca.test; accounturi=https://ca.test/acct/1; policy=wildcard; persistUntil=1811808000')
    expect(parsePersistRecord(v)).toMatchObject({ issuerDomain: 'ca.test', wildcard: true, malformed: null })
    expect(judgePersistRecords([v], { ...want, wildcard: true }).ok).toBe(true)
  })

  it('refuses duplicated parameters, a bad persistUntil and another issuer, whatever else is there', () => {
    const dup = 'ca.test; accounturi=https://evil.test/acct/9; accounturi=https://ca.test/acct/1'
    expect(judgePersistRecords([dup], want)).toMatchObject({ ok: false, reason: expect.stringContaining('twice') })
    const bad = 'ca.test; accounturi=https://ca.test/acct/1; persistUntil=tomorrow'
    expect(judgePersistRecords([bad], want)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('persistUntil')
    })
    expect(judgePersistRecords(['other.test; accounturi=https://ca.test/acct/1'], want).ok).toBe(false)
    // One good record among bad ones is enough (draft §4: any matching record).
    expect(judgePersistRecords([bad, 'ca.test; accounturi=https://ca.test/acct/1'], want).ok).toBe(true)
  })
})

describe("the scheduler's renewal lookups", () => {
  it('start from the ari_windows indexes, never from the orders table', () => {
    const dir = mkdtempSync(join(tmpdir(), 'certdesk-ari-plan-'))
    const db = openDatabase(join(dir, 'store'))
    try {
      const plan = (sql: string, ...args: string[]): string[] =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail)
      const renewals = plan(DUE_RENEWALS_SQL, '2027-01-01 00:00:00', '2027-01-01')
      expect(renewals[0]).toMatch(/^SEARCH a USING COVERING INDEX ari_windows_renew_at/)
      expect(renewals.join(' | ')).not.toMatch(/SCAN o|SEARCH o USING INDEX/)
      expect(plan(DUE_CHECKS_SQL, '2027-01-01 00:00:00')[0]).toMatch(/USING INDEX ari_windows_next_check/)
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
