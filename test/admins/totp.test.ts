/**
 * TOTP against the published known answers: RFC 6238 Appendix B (HMAC-SHA-1, 8 digits, the
 * ASCII seed "12345678901234567890") and RFC 4648 §10 for base32; then the window an app's code
 * is accepted in, just inside and just outside one 30-second step either way.
 */
import { describe, expect, it } from 'vitest'
import {
  base32Decode,
  base32Encode,
  hotp,
  matchTotp,
  otpauthUri,
  totpCode,
  totpStep
} from '../../src-main/core/admins/totp'

const SEED = Buffer.from('12345678901234567890', 'ascii')

describe('RFC 6238 Appendix B, SHA-1', () => {
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130']
  ]
  for (const [seconds, want] of vectors) {
    it(`T = ${seconds} s gives ${want}`, () => {
      expect(totpCode(SEED, new Date(seconds * 1000), 8)).toBe(want)
      // The 6-digit code apps show is the same truncation modulo 10^6 (RFC 4226 §5.3).
      expect(totpCode(SEED, new Date(seconds * 1000))).toBe(want.slice(2))
    })
  }

  it('RFC 4226 Appendix D: the HOTP values of counters 0-9', () => {
    const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489']
    expect(want.map((_, i) => hotp(SEED, i))).toEqual(want)
  })
})

describe('base32 (RFC 4648 §10)', () => {
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI']
  ]
  for (const [plain, coded] of vectors) {
    it(`"${plain}" ↔ ${coded || '(empty)'}`, () => {
      expect(base32Encode(Buffer.from(plain))).toBe(coded)
      expect(base32Decode(coded)?.toString()).toBe(plain)
    })
  }

  it('reads a key as people type it, and refuses what is not base32', () => {
    expect(base32Decode('mzxw 6ytb oi==')?.toString()).toBe('foobar')
    expect(base32Decode('MZXW1')).toBeNull()
  })
})

describe('the window a code is accepted in', () => {
  const at = new Date('2026-11-21T10:00:15Z')
  const step = totpStep(at)
  const codeAt = (s: number) => hotp(SEED, s)

  it('takes the current step and one either side, and says which step matched', () => {
    expect(matchTotp(SEED, codeAt(step), at)).toBe(step)
    expect(matchTotp(SEED, codeAt(step - 1), at)).toBe(step - 1)
    expect(matchTotp(SEED, codeAt(step + 1), at)).toBe(step + 1)
  })

  it('refuses two steps away, wrong lengths and non-digits', () => {
    expect(matchTotp(SEED, codeAt(step - 2), at)).toBeNull()
    expect(matchTotp(SEED, codeAt(step + 2), at)).toBeNull()
    expect(matchTotp(SEED, codeAt(step).slice(1), at)).toBeNull()
    expect(matchTotp(SEED, `${codeAt(step)}0`, at)).toBeNull()
    expect(matchTotp(SEED, 'abcdef', at)).toBeNull()
  })

  it('allows the space apps show in the middle of a code', () => {
    const c = codeAt(step)
    expect(matchTotp(SEED, `${c.slice(0, 3)} ${c.slice(3)}`, at)).toBe(step)
  })

  it('steps at 30-second boundaries: 29 s and 30 s into the epoch are different steps', () => {
    expect(totpStep(new Date(29_999))).toBe(0)
    expect(totpStep(new Date(30_000))).toBe(1)
  })
})

it('writes an otpauth URI authenticator apps read: SHA1, 6 digits, 30 s, issuer and account', () => {
  const uri = new URL(otpauthUri('CertDesk', 'alice', SEED))
  expect(uri.protocol).toBe('otpauth:')
  expect(uri.host).toBe('totp')
  expect(decodeURIComponent(uri.pathname)).toBe('/CertDesk:alice')
  expect(Object.fromEntries(uri.searchParams)).toEqual({
    secret: base32Encode(SEED),
    issuer: 'CertDesk',
    algorithm: 'SHA1',
    digits: '6',
    period: '30'
  })
})
