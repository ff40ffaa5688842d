import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertAcceptableCsr, decodeCsr } from '../../src-main/core/certificates/csr'
import { requestedNames } from '../../src-main/core/certificates/csr-names'
import { CA_WRAPPING_KEY_SECRET, LocalCa } from '../../src-main/core/certificates/local-ca'
import { type Service } from '../../src-main/core/service'
import { openService, storedBytes } from '../support/engine'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslText, opensslVerify, x509Csr } from '../support/csr'

const clock = manualClock('2026-11-21T10:00:00Z')
let dataDir: string
let service: Service
let ca: LocalCa

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-ca-'))
  service = await openService({ dataDir, clock: clock.clock })
  ca = new LocalCa(service.ctx)
})
afterAll(async () => {
  await service.ctx.secrets.delete(CA_WRAPPING_KEY_SECRET)
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('CSR decode', () => {
  it('reads every subject field, the SANs, the key and the signature of an openssl CSR', async () => {
    const pem = opensslCsr(
      ['shop.example.com', 'www.shop.example.com'],
      'rsa:2048',
      '/C=DE/ST=Berlin/L=Berlin/O=Shop GmbH/OU=Web/CN=shop.example.com/emailAddress=it@shop.example.com'
    )
    const d = await decodeCsr(pem)
    expect(d).toMatchObject({
      commonName: 'shop.example.com',
      organization: 'Shop GmbH',
      organizationalUnit: 'Web',
      locality: 'Berlin',
      state: 'Berlin',
      country: 'DE',
      email: 'it@shop.example.com',
      dnsNames: ['shop.example.com', 'www.shop.example.com'],
      keyAlgorithm: 'RSA',
      keySize: 2048,
      curve: null,
      signatureAlgorithm: 'sha256WithRSAEncryption',
      signatureValid: true
    })
    expect(d.md5).toMatch(/^[0-9A-F]{32}$/)
    expect(d.sha256).toMatch(/^[0-9A-F]{64}$/)
    expect(requestedNames(d)).toEqual(['shop.example.com', 'www.shop.example.com'])
  })

  it('reads ECDSA CSRs made in code and with openssl', async () => {
    const a = await decodeCsr(await x509Csr(['api.example.com'], 'P-384'))
    expect(a).toMatchObject({
      keyAlgorithm: 'EC',
      curve: 'P-384',
      keySize: 384,
      signatureAlgorithm: 'ecdsa-with-SHA384',
      signatureValid: true
    })
    const b = await decodeCsr(opensslCsr(['api.example.com'], 'ec:P-256'))
    expect(b).toMatchObject({ keyAlgorithm: 'EC', curve: 'P-256', signatureValid: true })
    const c = await decodeCsr(await x509Csr(['api.example.com'], 'RSA'))
    expect(c).toMatchObject({ keyAlgorithm: 'RSA', keySize: 2048, signatureValid: true })
  })

  it('refuses garbage, a certificate and a truncated PEM with a message that says which', async () => {
    await expect(decodeCsr('hello')).rejects.toThrow(/expected a PEM block/)
    const cert =
      readFileSync('/etc/ssl/certs/ca-certificates.crt', 'utf8').split('-----END CERTIFICATE-----')[0] +
      '-----END CERTIFICATE-----\n'
    await expect(decodeCsr(cert)).rejects.toThrow(/is a certificate, not a certificate signing request/)
    const pem = opensslCsr(['example.com'])
    await expect(decodeCsr(pem.slice(0, 200))).rejects.toThrow(/truncated/)
    const damaged = pem.replace(/\n([A-Za-z0-9+/]{64})\n/, '\n\n')
    await expect(decodeCsr(damaged)).rejects.toThrow(/could not decode CSR/)
  })

  it('flags a CSR whose signature does not verify and keys the BRs do not allow', async () => {
    const pem = opensslCsr(['example.com'])
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')
    der[der.length - 10] ^= 0xff // inside the signature
    const broken = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
    const d = await decodeCsr(broken)
    expect(d.signatureValid).toBe(false)
    expect(() => assertAcceptableCsr(d, 'tls')).toThrow(/signature does not verify/)
    expect(() => assertAcceptableCsr(Object.assign({}, d, { signatureValid: true, keySize: 1024 }), 'tls')).toThrow(
      /1024 bits; at least 2048/
    )
    const p521 = await decodeCsr(opensslCsr(['example.com'], 'ec:P-521'))
    expect(() => assertAcceptableCsr(p521, 'tls')).toThrow(/curve P-521 is not supported/)
    const ed = await decodeCsr(opensslCsr(['example.com'], 'ed25519'))
    expect(() => assertAcceptableCsr(ed, 'tls')).toThrow(/not supported/)
    const rsa2048 = await decodeCsr(opensslCsr(['Example Signer'], 'rsa:2048'))
    expect(() => assertAcceptableCsr(rsa2048, 'code-signing')).toThrow(/at least 3072/)
  })
})

describe('local CA', () => {
  it('issues a TLS leaf that openssl verifies with the root and the bundle', async () => {
    const d = await decodeCsr(opensslCsr(['shop.example.com', 'www.shop.example.com']))
    const from = clock.now()
    const till = new Date(from.getTime() + 200 * 86_400_000 - 1000)
    const issued = await ca.issue({
      csrDer: d.der,
      names: ['shop.example.com', 'www.shop.example.com'],
      profile: 'tls',
      subject: { CN: 'shop.example.com' },
      validFrom: from,
      validTill: till
    })
    const root = await ca.rootPem()
    const bundle = await ca.bundlePem()
    expect(opensslVerify(root, bundle, issued.certificatePem, from).ok).toBe(true)
    // just inside and just outside the window
    expect(opensslVerify(root, bundle, issued.certificatePem, new Date(till.getTime() - 1000)).ok).toBe(true)
    expect(opensslVerify(root, bundle, issued.certificatePem, new Date(till.getTime() + 2000)).out).toMatch(/expired/)
    const text = opensslText(issued.certificatePem)
    expect(text).toMatch(/DNS:shop\.example\.com, DNS:www\.shop\.example\.com/)
    expect(text).toMatch(/TLS Web Server Authentication/)
    expect(text).toMatch(/Digital Signature, Key Encipherment/)
    expect(text).toMatch(/CA:FALSE/)
    expect(text).toMatch(/Subject Key Identifier/)
    expect(text).toMatch(/Authority Key Identifier/)
    expect(issued.serial).toMatch(/^[0-7][0-9A-F]{31}$/)
    expect(issued.validTill.toISOString()).toBe(till.toISOString())
    const inter = opensslText(bundle)
    expect(inter).toMatch(/CA:TRUE, pathlen:0/)
    expect(inter).toMatch(/Certificate Sign, CRL Sign/)
  })

  it('issues code-signing leaves with the codeSigning EKU and no SAN', async () => {
    const d = await decodeCsr(opensslCsr([], 'rsa:3072', '/C=US/O=Contoso Ltd/CN=Contoso Ltd'))
    const from = clock.now()
    const issued = await ca.issue({
      csrDer: d.der,
      names: [],
      profile: 'code-signing',
      subject: { CN: 'Contoso Ltd', O: 'Contoso Ltd', C: 'US' },
      validFrom: from,
      validTill: new Date(from.getTime() + 86_400_000 * 460 - 1000)
    })
    const text = opensslText(issued.certificatePem)
    expect(text).toMatch(/Code Signing/)
    expect(text).not.toMatch(/TLS Web Server/)
    expect(text).not.toMatch(/Subject Alternative Name/)
    expect(opensslVerify(await ca.rootPem(), await ca.bundlePem(), issued.certificatePem, from, 'any').ok).toBe(true)
  })

  it('keeps the CA keys encrypted in the store, with the wrapping key in the keychain, and reloads them', async () => {
    const rows = (await service.ctx.store.all('SELECT role, key_ciphertext FROM ca_keys')) as {
      role: string
      key_ciphertext: Buffer
    }[]
    expect(rows.map((r) => r.role).sort()).toEqual(['intermediate', 'root'])
    for (const { where, bytes } of storedBytes(service))
      expect(bytes.includes(Buffer.from('PRIVATE KEY')), where).toBe(false)
    expect(await service.ctx.secrets.get(CA_WRAPPING_KEY_SECRET)).toMatch(/^[A-Za-z0-9+/]{43}=$/)
    // A second process over the same data dir signs with the same intermediate.
    const again = new LocalCa(service.ctx)
    expect(await again.bundlePem()).toBe(await ca.bundlePem())
    const d = await decodeCsr(await x509Csr(['api.example.com'], 'P-256'))
    const issued = await again.issue({
      csrDer: d.der,
      names: ['api.example.com'],
      profile: 'tls',
      subject: { CN: 'api.example.com' },
      validFrom: clock.now(),
      validTill: new Date(clock.now().getTime() + 86_400_000)
    })
    expect(opensslVerify(await ca.rootPem(), await ca.bundlePem(), issued.certificatePem, clock.now()).ok).toBe(true)
    expect(opensslText(issued.certificatePem)).toMatch(/Usage:\s*critical\s*Digital Signature\s/)
  })
})
