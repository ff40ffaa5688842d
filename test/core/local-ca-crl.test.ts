/**
 * The DER the local CA's CRL is made of (RFC 5280 §5.1), read back by openssl: no
 * revokedCertificates at all when nothing is revoked (§5.1.2.6), a reasonCode on each entry
 * except unspecified (BR §7.2.2), the cRLNumber, and a list of a hundred thousand entries built
 * without overflowing the stack.
 */
import { spawnSync } from 'node:child_process'
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { oid, seq, tlv, TAG } from '../../src-main/core/certificates/der'
import { extension } from '../../src-main/core/certificates/local-ca'
import { buildCrl, type CrlEntry } from '../../src-main/core/certificates/local-ca-crl'

const dir = mkdtempSync(join(tmpdir(), 'certdesk-crl-der-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const issuer = {
  // CN=Test Issuing CA
  subjectDer: seq(tlv(TAG.set, seq(oid('2.5.4.3'), tlv(TAG.utf8String, Buffer.from('Test Issuing CA'))))),
  aki: extension('2.5.29.35', false, seq(tlv(0x80, randomBytes(20)))),
  sign: (tbs: Buffer) => sign('sha256', tbs, privateKey)
}
const THIS = new Date('2026-11-21T10:00:00Z')
const NEXT = new Date('2026-11-28T10:00:00Z')

function text(der: Buffer, name: string): string {
  const path = join(dir, name)
  writeFileSync(path, der)
  const r = spawnSync('openssl', ['crl', '-inform', 'DER', '-in', path, '-noout', '-text'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024
  })
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
}

describe('the local CA CRL', () => {
  it('leaves revokedCertificates out when nothing is revoked, and carries its number and dates', () => {
    const out = text(buildCrl(issuer, 7, THIS, NEXT, []), 'empty.crl')
    expect(out).toContain('No Revoked Certificates.')
    expect(out).toMatch(/X509v3 CRL Number:\s+7/)
    expect(out).toContain('Last Update: Nov 21 10:00:00 2026 GMT')
    expect(out).toContain('Next Update: Nov 28 10:00:00 2026 GMT')
    expect(out).toContain('Issuer: CN = Test Issuing CA')
  })

  it('gives each entry its reason code, and none to unspecified', () => {
    const entries: CrlEntry[] = [
      { serialHex: '7F01', revokedAt: THIS, reason: 0 },
      { serialHex: '00A2', revokedAt: THIS, reason: 1 },
      { serialHex: 'FF03', revokedAt: THIS, reason: 9 }
    ]
    const out = text(buildCrl(issuer, 300, THIS, NEXT, entries), 'reasons.crl')
    const blocks = out.split('Serial Number: ').slice(1)
    expect(blocks.map((b) => b.split('\n')[0].trim())).toEqual(['7F01', 'A2', 'FF03'])
    expect(blocks[0]).not.toContain('CRL Reason Code')
    expect(blocks[1]).toMatch(/CRL Reason Code:\s+Key Compromise/)
    expect(blocks[2]).toMatch(/CRL Reason Code:\s+Privilege Withdrawn/)
    expect(out).toMatch(/X509v3 CRL Number:\s+300/)
  })

  it('builds a list of a hundred thousand entries', () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => ({
      serialHex: randomBytes(16).toString('hex'),
      revokedAt: THIS,
      reason: i % 2
    }))
    const out = text(buildCrl(issuer, 1, THIS, NEXT, entries), 'large.crl')
    expect(out.match(/Serial Number: /g)?.length).toBe(100_000)
  })
})
