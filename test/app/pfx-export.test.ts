/**
 * The desktop user's PFX and encrypted-key exports are built in the main process: the PFX opens
 * with OpenSSL, carries friendlyName and localKeyID on both the key and the certificate (RFC 7292
 * §4.2 with the PKCS#9 attributes; Windows pairs key and certificate by localKeyID), and holds the
 * key of the current certificate only.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { API_VERSION } from '../../src-main/http/server'
import { opensslCsr } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { instructions: { url: string; file_content: string } }
let s: TestServer
let dns: DnsServer
let web: WebServer
let app: AppHandlers
let dir: string

beforeAll(async () => {
  s = await startServer()
  dns = await startDns()
  web = await startWeb()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
  dir = mkdtempSync(join(tmpdir(), 'certdesk-pfx-'))
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await web.close()
  await dns.close()
  await s.close()
})

const openssl = (args: string[]): string =>
  execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

async function issueWith(key: string, orderId: number, csr: string, path: string): Promise<void> {
  const res = await s.request<Body>('POST', path, { key, body: { order_id: orderId, csr, dcv_method: 'http' } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  for (const v of res.body.validation as Validation[]) {
    const url = new URL(v.instructions.url)
    web.put(url.hostname, url.pathname, `${v.instructions.file_content}\n`)
  }
  const status = await s.request<Body>('GET', `/ssl/${orderId}`, { key })
  expect((status.body.order as Body)?.status ?? status.body.status).toBe('completed')
}

/** An issued order whose key CertDesk keeps, as after "Generate key and CSR" in the app. */
async function issuedOrder(
  domain: string
): Promise<{ reseller: { id: number; key: string }; orderId: number; keyPem: string }> {
  const r = await s.reseller({ credit: 100 })
  const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
  const orderId = created.body.order_id as number
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  await app.storePrivateKey(r.id, orderId, keyPem)
  const keyPath = join(dir, `${domain}.key`)
  writeFileSync(keyPath, keyPem, { mode: 0o600 })
  const csr = openssl([
    'req',
    '-new',
    '-key',
    keyPath,
    '-subj',
    `/CN=${domain}`,
    '-addext',
    `subjectAltName=DNS:${domain},DNS:www.${domain}`
  ])
  await issueWith(r.key, orderId, csr, '/ssl/configure')
  return { reseller: r, orderId, keyPem }
}

describe('exporting a PFX over the bridge', () => {
  it('opens with openssl, carries friendlyName and localKeyID on the key and the certificate, and holds the certificate key', async () => {
    const { reseller, orderId, keyPem } = await issuedOrder('pfx.example.test')
    const password = `p "w' $(id) ; ü`
    const { pfxBase64 } = await app.exportPfx(reseller.id, orderId, password)
    const pfxPath = join(dir, 'pfx.p12')
    writeFileSync(pfxPath, Buffer.from(pfxBase64, 'base64'))

    const info = openssl(['pkcs12', '-info', '-in', pfxPath, '-passin', `pass:${password}`, '-nodes'])
    const bags = info.split(/^(?=Bag Attributes)/m).filter((b) => b.startsWith('Bag Attributes'))
    const keyBag = bags.find((b) => b.includes('BEGIN PRIVATE KEY'))
    const leafBag = bags.find((b) => b.includes('BEGIN CERTIFICATE') && /subject=.*CN ?= ?pfx\.example\.test/.test(b))
    expect(keyBag).toBeDefined()
    expect(leafBag).toBeDefined()
    for (const bag of [keyBag!, leafBag!]) {
      expect(bag).toContain('friendlyName: pfx.example.test')
      expect(bag).toMatch(/localKeyID: [0-9A-F ]{59}/)
    }
    expect(keyBag!.match(/localKeyID: (.*)/)![1]).toBe(leafBag!.match(/localKeyID: (.*)/)![1])
    // The chain travels too, and the key is the certificate's key.
    expect(info.match(/BEGIN CERTIFICATE/g)!.length).toBeGreaterThanOrEqual(2)
    const leafPath = join(dir, 'leaf.pem')
    writeFileSync(leafPath, leafBag!.slice(leafBag!.indexOf('-----BEGIN CERTIFICATE-----')))
    const pfxKeyPath = join(dir, 'pfx-key.pem')
    writeFileSync(pfxKeyPath, keyBag!.slice(keyBag!.indexOf('-----BEGIN PRIVATE KEY-----')), { mode: 0o600 })
    const certPub = openssl(['x509', '-in', leafPath, '-noout', '-pubkey'])
    expect(openssl(['pkey', '-in', pfxKeyPath, '-pubout'])).toBe(certPub)
    expect(openssl(['pkey', '-in', join(dir, 'pfx.example.test.key'), '-pubout'])).toBe(certPub)
    expect(keyPem).toContain('BEGIN PRIVATE KEY')
    // A wrong password does not open it.
    expect(() => openssl(['pkcs12', '-info', '-in', pfxPath, '-passin', 'pass:wrong', '-nodes'])).toThrow()
  })

  it('offers AES-256 by default and the 3DES/SHA-1 profile of older Windows on request, which openssl -legacy reads', async () => {
    const { reseller, orderId } = await issuedOrder('legacy.example.test')
    const password = `old "win' ; ü`
    const write = async (encryption?: 'aes-256' | 'legacy-3des'): Promise<string> => {
      const { pfxBase64 } = await app.exportPfx(reseller.id, orderId, password, encryption)
      const path = join(dir, `${encryption ?? 'default'}.p12`)
      writeFileSync(path, Buffer.from(pfxBase64, 'base64'))
      return path
    }
    // `-info` tells how each part is encrypted and how the file is authenticated.
    const infoOf = (path: string, legacy: boolean): string => {
      const r = spawnSync(
        'openssl',
        ['pkcs12', ...(legacy ? ['-legacy'] : []), '-info', '-in', path, '-passin', `pass:${password}`, '-noout'],
        { encoding: 'utf8' }
      )
      return `${r.stdout}${r.stderr}`
    }

    const modern = infoOf(await write(), false)
    expect(modern).toMatch(/MAC: sha256/)
    expect(modern).toMatch(/PBES2, PBKDF2, AES-256-CBC/)
    expect(modern).not.toMatch(/3-KeyTripleDES|RC2/)

    const legacyPath = await write('legacy-3des')
    const legacy = infoOf(legacyPath, true)
    expect(legacy).toMatch(/MAC: sha1, Iteration 2048/)
    expect(legacy).toMatch(/Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048/)
    expect(legacy).toMatch(/PKCS7 Encrypted data: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048/)
    expect(legacy).not.toMatch(/AES|PBES2/)
    // Its key and certificate are the order's, paired by localKeyID as Windows expects.
    const opened = openssl(['pkcs12', '-legacy', '-in', legacyPath, '-passin', `pass:${password}`, '-nodes'])
    const certPath = join(dir, 'legacy.crt')
    writeFileSync(certPath, (await app.certificate(reseller.id, orderId)).certificate!.certificatePem)
    const keyPath = join(dir, 'legacy-key.pem')
    writeFileSync(keyPath, opened.slice(opened.indexOf('-----BEGIN PRIVATE KEY-----')), { mode: 0o600 })
    expect(openssl(['pkey', '-in', keyPath, '-pubout'])).toBe(openssl(['x509', '-in', certPath, '-noout', '-pubkey']))
    expect(opened).toContain('friendlyName: legacy.example.test')
    expect(opened.match(/localKeyID: (.*)/g)?.length).toBe(2)
    expect(new Set(opened.match(/localKeyID: (.*)/g)).size).toBe(1)
    expect(opened.match(/BEGIN CERTIFICATE/g)!.length).toBeGreaterThanOrEqual(2)
    // A wrong password opens neither.
    expect(() => openssl(['pkcs12', '-legacy', '-in', legacyPath, '-passin', 'pass:wrong', '-nodes'])).toThrow()
    await expect(app.exportPfx(reseller.id, orderId, password, 'rc2' as never)).rejects.toThrow(
      /encryption must be aes-256 or legacy-3des/
    )
  })

  it('exports the key encrypted, and openssl opens it with the password only', async () => {
    const { reseller, orderId } = await issuedOrder('enc.example.test')
    const { pem } = await app.exportEncryptedKey(reseller.id, orderId, 's3cret pass')
    expect(pem).toMatch(/^-----BEGIN ENCRYPTED PRIVATE KEY-----\n/)
    expect(pem).not.toContain('BEGIN PRIVATE KEY')
    const path = join(dir, 'enc.key')
    writeFileSync(path, pem, { mode: 0o600 })
    const cert = (await app.certificate(reseller.id, orderId)).certificate!
    const certPath = join(dir, 'enc.crt')
    writeFileSync(certPath, cert.certificatePem)
    expect(openssl(['pkey', '-in', path, '-passin', 'pass:s3cret pass', '-pubout'])).toBe(
      openssl(['x509', '-in', certPath, '-noout', '-pubkey'])
    )
    expect(() => openssl(['pkey', '-in', path, '-passin', 'pass:wrong', '-pubout'])).toThrow()
  })

  it('refuses an empty password, another reseller, an order without a certificate and a key of an earlier certificate', async () => {
    const { reseller, orderId } = await issuedOrder('refuse.example.test')
    await expect(app.exportPfx(reseller.id, orderId, '')).rejects.toThrow(
      'could not export the PFX: it needs a password'
    )
    await expect(app.exportEncryptedKey(reseller.id, orderId, '')).rejects.toThrow('it needs a password')
    await expect(app.exportPfx(reseller.id, orderId, 'x'.repeat(1025))).rejects.toThrow('longer than 1024')
    const other = await s.reseller({ credit: 100 })
    await expect(app.exportPfx(other.id, orderId, 'pw')).rejects.toMatchObject({ kind: 'not_found' })

    const waiting = await s.request<Body>('POST', '/orders', {
      key: reseller.key,
      body: { product_id: 2, domain: 'wait.example.test' }
    })
    const waitingId = waiting.body.order_id as number
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    await app.storePrivateKey(reseller.id, waitingId, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
    await expect(app.exportPfx(reseller.id, waitingId, 'pw')).rejects.toThrow(
      'could not build the PFX: the order has no certificate yet'
    )

    // The customer reissues with a CSR of their own key: the kept key no longer fits.
    await issueWith(
      reseller.key,
      orderId,
      opensslCsr(['refuse.example.test', 'www.refuse.example.test'], 'ec:P-256'),
      '/ssl/reissue'
    )
    await expect(app.exportPfx(reseller.id, orderId, 'pw')).rejects.toThrow(
      'the kept private key belongs to an earlier certificate of this order'
    )
  })
})
