/**
 * The local CA writes each leaf's DER itself and signs it once with node:crypto. These tests hold
 * that leaf to what @peculiar/x509's generator made from the same inputs (same subject, same
 * extension bytes, same serial and validity), and to what openssl reads and verifies.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeCsr } from '../../src-main/core/certificates/csr'
import { CA_WRAPPING_KEY_SECRET, LocalCa } from '../../src-main/core/certificates/local-ca'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { nodeCrypto, x509, type CryptoKeyPair, type EcdsaParams } from '../../src-main/core/certificates/x509'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslText, opensslVerify, x509Csr } from '../support/csr'

const clock = manualClock('2026-11-21T10:00:00Z')
let dataDir: string
let service: Service
let ca: LocalCa

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-ca-der-'))
  service = await openService({ dataDir, clock: clock.clock })
  ca = new LocalCa(service.ctx)
})
afterAll(async () => {
  await service.ctx.secrets.delete(CA_WRAPPING_KEY_SECRET)
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})

type Profile = 'tls' | 'code-signing'
type Subject = { CN: string; O?: string; OU?: string; L?: string; ST?: string; C?: string }

/** The leaf as @peculiar/x509's generator built it from the same inputs (signed by a throwaway key). */
async function reference(
  leaf: x509.X509Certificate,
  intermediate: x509.X509Certificate,
  names: string[],
  profile: Profile,
  subject: Subject
): Promise<x509.X509Certificate> {
  const rsa = (leaf.publicKey.algorithm as { name: string }).name.startsWith('RSA')
  const usages =
    profile === 'tls' && rsa
      ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
      : x509.KeyUsageFlags.digitalSignature
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(usages, true),
    new x509.ExtendedKeyUsageExtension([
      profile === 'tls' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.codeSigning
    ]),
    await x509.SubjectKeyIdentifierExtension.create(leaf.publicKey, false, nodeCrypto),
    await x509.AuthorityKeyIdentifierExtension.create(intermediate, false, nodeCrypto)
  ]
  if (names.length > 0)
    extensions.push(new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))))
  const json: x509.JsonName = []
  for (const k of ['C', 'ST', 'L', 'O', 'OU', 'CN'] as const) if (subject[k]) json.push({ [k]: [subject[k] as string] })
  const throwaway = (await nodeCrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify'
  ])) as CryptoKeyPair
  return x509.X509CertificateGenerator.create(
    {
      serialNumber: leaf.serialNumber,
      subject: json,
      issuer: intermediate.subjectName,
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter,
      publicKey: leaf.publicKey,
      signingKey: throwaway.privateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
      extensions
    },
    nodeCrypto
  )
}

const hex = (b: ArrayBuffer): string => Buffer.from(b).toString('hex')

async function issueAndCompare(csrPem: string, names: string[], profile: Profile, subject: Subject): Promise<string> {
  const d = await decodeCsr(csrPem)
  const from = clock.now()
  const till = new Date(from.getTime() + 199 * 86_400_000 - 1)
  const issued = await ca.issue({ csrDer: d.der, names, profile, subject, validFrom: from, validTill: till })
  const leaf = new x509.X509Certificate(issued.certificatePem)
  const intermediate = new x509.X509Certificate(await ca.bundlePem())
  const ref = await reference(leaf, intermediate, names, profile, subject)
  expect(leaf.extensions.map((e) => hex(e.rawData))).toEqual(ref.extensions.map((e) => hex(e.rawData)))
  expect(hex(leaf.subjectName.toArrayBuffer())).toBe(hex(ref.subjectName.toArrayBuffer()))
  expect(hex(leaf.issuerName.toArrayBuffer())).toBe(hex(intermediate.subjectName.toArrayBuffer()))
  expect(hex(leaf.publicKey.rawData)).toBe(d.spki.toString('hex'))
  expect(leaf.serialNumber.toUpperCase()).toBe(issued.serial)
  expect(issued.validFrom.toISOString()).toBe(leaf.notBefore.toISOString())
  expect(issued.validTill.toISOString()).toBe(leaf.notAfter.toISOString())
  expect(issued.validTill.toISOString()).toBe(new Date(Math.floor(till.getTime() / 1000) * 1000).toISOString())
  // What the ACME server stores without parsing the PEM back.
  expect(issued.certificateDer.equals(Buffer.from(leaf.rawData))).toBe(true)
  expect(issued.authorityKeyId.toString('hex')).toBe(
    leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId?.toLowerCase()
  )
  expect(await leaf.verify({ publicKey: intermediate, signatureOnly: true }, nodeCrypto)).toBe(true)
  expect(
    opensslVerify(
      await ca.rootPem(),
      await ca.bundlePem(),
      issued.certificatePem,
      from,
      profile === 'tls' ? 'sslserver' : 'any'
    ).ok
  ).toBe(true)
  return opensslText(issued.certificatePem)
}

describe('local CA leaf DER', () => {
  it('issues a P-256 TLS leaf with the same subject and extension bytes as the generator, and openssl verifies it', async () => {
    const text = await issueAndCompare(
      await x509Csr(['api.example.com', 'www.api.example.com']),
      ['api.example.com', 'www.api.example.com'],
      'tls',
      {
        CN: 'api.example.com'
      }
    )
    expect(text).toMatch(/Version: 3 \(0x2\)/)
    expect(text).toMatch(/Signature Algorithm: ecdsa-with-SHA256/)
    expect(text).toMatch(/Subject: CN\s?=\s?api\.example\.com/)
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/)
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\s/)
    expect(text).toMatch(/DNS:api\.example\.com, DNS:www\.api\.example\.com/)
  })

  it('issues an RSA 2048 TLS leaf with keyEncipherment, a wildcard and a UTF-8 organisation', async () => {
    const text = await issueAndCompare(
      opensslCsr(['*.shop.example.com', 'shop.example.com'], 'rsa:2048'),
      ['*.shop.example.com', 'shop.example.com'],
      'tls',
      { CN: '*.shop.example.com', O: 'Müller & Söhne GmbH', L: 'Köln', C: 'DE' }
    )
    expect(text).toMatch(/Digital Signature, Key Encipherment/)
    expect(text).toMatch(/Public-Key: \(2048 bit\)/)
    expect(text).toMatch(/DNS:\*\.shop\.example\.com, DNS:shop\.example\.com/)
  })

  it('issues a code-signing leaf with every subject field and no SAN', async () => {
    const text = await issueAndCompare(
      opensslCsr([], 'rsa:3072', '/C=US/O=Contoso Ltd/CN=Contoso Ltd'),
      [],
      'code-signing',
      { CN: 'Contoso Ltd', O: 'Contoso Ltd', OU: 'Build', L: 'Redmond', ST: 'Washington', C: 'US' }
    )
    expect(text).toMatch(/Code Signing/)
    expect(text).not.toMatch(/Subject Alternative Name/)
  })

  it('writes validity after 2049 as GeneralizedTime, as RFC 5280 §4.1.2.5 requires', async () => {
    // The intermediate ends before 2050, so this needs a CA created in the far future.
    const future = manualClock('2045-06-01T00:00:00Z')
    const dir = mkdtempSync(join(tmpdir(), 'certdesk-ca-der-future-'))
    const s = await openService({ dataDir: dir, clock: future.clock })
    try {
      const farCa = new LocalCa(s.ctx)
      const d = await decodeCsr(await x509Csr(['late.example.com']))
      const from = future.now()
      const issued = await farCa.issue({
        csrDer: d.der,
        names: ['late.example.com'],
        profile: 'tls',
        subject: { CN: 'late.example.com' },
        validFrom: from,
        validTill: new Date(Date.UTC(2050, 0, 2, 3, 4, 5))
      })
      const leaf = new x509.X509Certificate(issued.certificatePem)
      expect(leaf.notAfter.toISOString()).toBe('2050-01-02T03:04:05.000Z')
      expect(opensslText(issued.certificatePem)).toMatch(/Not After : Jan {2}2 03:04:05 2050 GMT/)
      expect(opensslVerify(await farCa.rootPem(), await farCa.bundlePem(), issued.certificatePem, from).ok).toBe(true)
    } finally {
      await s.ctx.secrets.delete(CA_WRAPPING_KEY_SECRET)
      await s.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses a request body that is not a PKCS #10 request instead of signing garbage', async () => {
    const from = clock.now()
    await expect(
      ca.issue({
        csrDer: Buffer.from('30820102', 'hex'),
        names: ['x.example.com'],
        profile: 'tls',
        subject: { CN: 'x.example.com' },
        validFrom: from,
        validTill: new Date(from.getTime() + 86_400_000)
      })
    ).rejects.toThrow(/could not issue certificate: the CSR is not a DER-encoded PKCS #10 request/)
  })
})
