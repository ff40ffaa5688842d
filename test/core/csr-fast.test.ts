/**
 * The strict DER reader every issuance decodes a CSR with (src-main/core/certificates/csr-der.ts): it reads
 * what @peculiar/x509 reads from the same requests, refuses anything that is not strict DER
 * PKCS #10 with a 400, and every CSR policy refusal still happens on what it returns.
 */
import { createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assertAcceptableCsr, decodeCsr, decodeCsrDer, readCsr } from '../../src-main/core/certificates/csr'
import { children, readNode, seq, tlv, bytesOf } from '../../src-main/core/certificates/der'
import { ServiceError } from '../../src-main/core/errors'
import { nodeCrypto, x509 } from '../../src-main/core/certificates/x509'
import { opensslCsr, opensslCsrForKey, x509Csr } from '../support/csr'

const derOf = (pem: string): Buffer => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')
const pemOf = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`

/** What @peculiar/x509 reads from the same request: the reference the reader is held to. */
async function reference(pem: string) {
  const csr = new x509.Pkcs10CertificateRequest(pem)
  const san = csr.extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension) as
    x509.SubjectAlternativeNameExtension | undefined
  return {
    commonName: csr.subjectName.getField('CN')[0]?.toLowerCase() ?? null,
    organization: csr.subjectName.getField('O')[0] ?? null,
    organizationalUnit: csr.subjectName.getField('OU')[0] ?? null,
    locality: csr.subjectName.getField('L')[0] ?? null,
    state: csr.subjectName.getField('ST')[0] ?? null,
    country: csr.subjectName.getField('C')[0] ?? null,
    email: csr.subjectName.getField('E')[0] ?? null,
    dnsNames: (san?.names.toJSON() ?? []).filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase()),
    signatureValid: await csr.verify(nodeCrypto),
    spki: Buffer.from(csr.publicKey.rawData)
  }
}

/** Expects a 400 whose message starts as every CSR refusal does. */
async function refused(der: Buffer, why: RegExp): Promise<void> {
  const err = await decodeCsrDer(der).then(
    () => null,
    (e: unknown) => e
  )
  expect(err).toBeInstanceOf(ServiceError)
  expect((err as ServiceError).kind).toBe('invalid')
  expect((err as Error).message).toMatch(why)
}

describe('CSR reader: the same reading as @peculiar/x509', () => {
  const cases: [string, () => Promise<string> | string][] = [
    ['openssl RSA 2048', () => opensslCsr(['shop.example.com', 'www.shop.example.com'], 'rsa:2048')],
    ['openssl P-256', () => opensslCsr(['a.example.com', 'b.example.com', 'c.example.com'], 'ec:P-256')],
    ['openssl P-384', () => opensslCsr(['p384.example.com'], 'ec:P-384')],
    [
      'openssl, every subject field and UTF-8',
      () =>
        opensslCsr(
          ['full.example.com'],
          'ec:P-256',
          '/C=DE/ST=Bayern/L=München/O=Bäckerei Müller GmbH/OU=IT/CN=full.example.com/emailAddress=it@example.com'
        )
    ],
    ['@peculiar/x509 RSA 2048', () => x509Csr(['code.example.com'], 'RSA')],
    ['@peculiar/x509 P-256', () => x509Csr(['code.example.com', 'www.code.example.com'], 'P-256')],
    ['@peculiar/x509 P-384', () => x509Csr(['p384.code.example.com'], 'P-384')]
  ]
  for (const [label, make] of cases) {
    it(`reads ${label} as the library does, and the signature verifies`, async () => {
      const pem = await make()
      const d = await decodeCsr(pem)
      const ref = await reference(pem)
      expect(ref.signatureValid).toBe(true)
      expect(d.signatureValid).toBe(true)
      expect(d.commonName).toBe(ref.commonName)
      expect(d.organization).toBe(ref.organization)
      expect(d.organizationalUnit).toBe(ref.organizationalUnit)
      expect(d.locality).toBe(ref.locality)
      expect(d.state).toBe(ref.state)
      expect(d.country).toBe(ref.country)
      expect(d.email).toBe(ref.email)
      expect(d.dnsNames).toEqual(ref.dnsNames)
      expect(d.spki.equals(ref.spki)).toBe(true)
      expect(() => assertAcceptableCsr(d, 'tls')).not.toThrow()
    })
  }

  it('names key and signature as before: RSA bits counted, curves by name', async () => {
    const rsa = await decodeCsr(opensslCsr(['r.example.com'], 'rsa:3072'))
    expect([rsa.keyAlgorithm, rsa.keySize, rsa.curve, rsa.signatureAlgorithm]).toEqual([
      'RSA',
      3072,
      null,
      'sha256WithRSAEncryption'
    ])
    const ec = await decodeCsr(opensslCsr(['e.example.com'], 'ec:P-384'))
    expect([ec.keyAlgorithm, ec.keySize, ec.curve, ec.signatureAlgorithm]).toEqual([
      'EC',
      384,
      'P-384',
      'ecdsa-with-SHA256'
    ])
  })
})

describe('CSR reader: hostile and malformed requests are a 400, never a crash', () => {
  it('refuses truncated requests, at every cut', async () => {
    const der = derOf(opensslCsr(['cut.example.com'], 'ec:P-256'))
    for (let cut = 0; cut < der.length; cut += 7) await refused(der.subarray(0, cut), /^could not decode CSR/)
  })

  it('refuses a byte after the request', async () => {
    const der = derOf(opensslCsr(['tail.example.com'], 'ec:P-256'))
    await refused(Buffer.concat([der, Buffer.from([0])]), /trailing or damaged data/)
  })

  it('refuses BER that is not DER: indefinite and non-minimal lengths', async () => {
    const der = derOf(opensslCsr(['ber.example.com'], 'ec:P-256'))
    const top = readNode(der, 0)
    const body = der.subarray(top.body)
    // The same contents under an indefinite length with end-of-contents octets.
    await refused(Buffer.concat([Buffer.from([0x30, 0x80]), body, Buffer.from([0, 0])]), /^could not decode CSR/)
    // The same contents under a four-octet length where two do.
    const len = Buffer.alloc(4)
    len.writeUInt32BE(body.length)
    await refused(Buffer.concat([Buffer.from([0x30, 0x84]), len, body]), /^could not decode CSR/)
  })

  it('refuses a length that claims more than was sent, however large', async () => {
    await refused(Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x30, 0x00]), /^could not decode CSR/)
    await refused(Buffer.from([0x30, 0x89, 1, 2, 3, 4, 5, 6, 7, 8, 9]), /^could not decode CSR/)
  })

  it('refuses a certificate sent as a request, and a version other than 0', async () => {
    const keys = await nodeCrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: 'CN=not-a-csr.example.com',
        keys,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
        notBefore: new Date('2026-01-01T00:00:00Z'),
        notAfter: new Date('2026-02-01T00:00:00Z')
      },
      nodeCrypto
    )
    await refused(Buffer.from(cert.rawData), /^could not decode CSR/)
    const der = Buffer.from(derOf(opensslCsr(['v.example.com'], 'ec:P-256')))
    const info = children(der, readNode(der, 0))[0]
    const version = children(der, info)[0]
    der[version.body] = 1
    await refused(der, /^could not decode CSR/)
  })

  it('flags a request whose signature is another request’s, and the policy refuses it', async () => {
    const a = derOf(opensslCsr(['a.example.com'], 'rsa:2048'))
    const b = derOf(opensslCsr(['a.example.com'], 'rsa:2048'))
    const [infoA, algA] = children(a, readNode(a, 0))
    const sigB = children(b, readNode(b, 0))[2]
    const swapped = seq(bytesOf(a, infoA), bytesOf(a, algA), bytesOf(b, sigB))
    const d = await decodeCsrDer(swapped)
    expect(d.signatureValid).toBe(false)
    expect(() => assertAcceptableCsr(d, 'tls')).toThrow(/signature does not verify/)
  })

  it('flags a request with one signature bit changed', async () => {
    const der = Buffer.from(derOf(opensslCsr(['bit.example.com'], 'ec:P-256')))
    der[der.length - 5] ^= 0x01
    const d = await decodeCsrDer(der)
    expect(d.signatureValid).toBe(false)
    expect(() => assertAcceptableCsr(d, 'tls')).toThrow(/signature does not verify/)
  })

  it('survives random damage: a 400 or a reading whose signature only verifies over the signed bytes', async () => {
    const der = derOf(opensslCsr(['fuzz.example.com', 'www.fuzz.example.com'], 'ec:P-256'))
    const info = children(der, readNode(der, 0))[0]
    const signed = Buffer.from(bytesOf(der, info))
    let seed = 12345
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed % n
    }
    for (let i = 0; i < 400; i++) {
      const m = Buffer.from(der)
      for (let k = 0; k <= rand(3); k++) m[rand(m.length)] = rand(256)
      try {
        const d = await decodeCsrDer(m)
        if (d.signatureValid) {
          // Only a change outside the signed CertificationRequestInfo can still verify.
          const mInfo = children(m, readNode(m, 0))[0]
          expect(Buffer.from(bytesOf(m, mInfo)).equals(signed)).toBe(true)
        }
      } catch (err) {
        expect(err).toBeInstanceOf(ServiceError)
        expect((err as Error).message).toMatch(/^could not decode CSR/)
      }
    }
  })

  it('reads a DER wrapped in a tag it does not know as damaged, not as a crash', async () => {
    await refused(tlv(0x1f, Buffer.from([1, 2, 3])), /^could not decode CSR/)
    await refused(Buffer.alloc(0), /^could not decode CSR/)
  })
})

describe('CSR policy on what the reader returns: every refusal still happens', () => {
  const accountJwk = (keyPem: string): JsonWebKey => createPublicKey(keyPem).export({ format: 'jwk' })

  it('refuses the ACME account key as the certificate key, P-256, P-384 and RSA', async () => {
    for (const kind of [
      { type: 'ec', opts: { namedCurve: 'P-256' } },
      { type: 'ec', opts: { namedCurve: 'P-384' } },
      { type: 'rsa', opts: { modulusLength: 2048 } }
    ] as const) {
      const { privateKey } = generateKeyPairSync(kind.type as 'ec', kind.opts as { namedCurve: string })
      const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
      const d = await decodeCsr(opensslCsrForKey(['acct.example.com'], keyPem))
      expect(() => assertAcceptableCsr(d, 'tls', { accountKey: accountJwk(keyPem) })).toThrow(/RFC 8555 §11\.1/)
      // Another key of the same kind is fine.
      const other = generateKeyPairSync(kind.type as 'ec', kind.opts as { namedCurve: string }).publicKey
      expect(() => assertAcceptableCsr(d, 'tls', { accountKey: other.export({ format: 'jwk' }) })).not.toThrow()
    }
  })

  it('refuses the account key whatever the account JWK carries beside the key', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    const d = await decodeCsr(opensslCsrForKey(['acct2.example.com'], keyPem))
    const jwk = { ...accountJwk(keyPem), alg: 'ES256', use: 'sig' } as JsonWebKey
    expect(() => assertAcceptableCsr(d, 'tls', { accountKey: jwk })).toThrow(/RFC 8555 §11\.1/)
  })

  it('refuses small RSA keys, curves outside the policy, Ed25519, and RSA 2048 for code signing', async () => {
    const rsa1024 = await decodeCsr(opensslCsr(['small.example.com'], 'rsa:1024'))
    expect(rsa1024.keySize).toBe(1024)
    expect(() => assertAcceptableCsr(rsa1024, 'tls')).toThrow(/1024 bits; at least 2048/)
    const p521 = await decodeCsr(opensslCsr(['p521.example.com'], 'ec:P-521'))
    expect(p521.signatureValid).toBe(true)
    expect(() => assertAcceptableCsr(p521, 'tls')).toThrow(/curve P-521 is not supported/)
    const ed = await decodeCsr(opensslCsr(['ed.example.com'], 'ed25519'))
    expect(() => assertAcceptableCsr(ed, 'tls')).toThrow(/not supported/)
    const rsa2048 = await decodeCsr(opensslCsr(['Example Signer'], 'rsa:2048'))
    expect(() => assertAcceptableCsr(rsa2048, 'code-signing')).toThrow(/at least 3072/)
  })

  it('gives finalize every common name and SAN as written, for the exact-names rule', async () => {
    const pem = opensslCsr(
      ['Names.Example.com.', 'www.names.example.com'],
      'ec:P-256',
      '/CN=Names.Example.com./CN=second.example.com'
    )
    const r = await readCsr(derOf(pem))
    expect(r.commonNames).toEqual(['names.example.com.', 'second.example.com'])
    expect(r.sanDnsNames).toEqual(['names.example.com.', 'www.names.example.com'])
    expect(r.csr.dnsNames).toEqual(['names.example.com', 'www.names.example.com'])
    expect(pemOf(r.csr.der)).toContain('BEGIN CERTIFICATE REQUEST')
  })
})
