/**
 * "Reissue with a new key" in the desktop app: the key generated for the new CSR goes to the
 * core with the request and is kept in the same transaction as the certificate issued for it,
 * so the very first deploy of that certificate finds its key (privkey.pem, the PFX, the reload
 * command), and the kept key of the current certificate stays until the new one exists.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { API_VERSION } from '../../src-main/http/server'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let dns: DnsServer
let web: WebServer
let app: AppHandlers
let r: TestReseller
const work = mkdtempSync(join(tmpdir(), 'certdesk-rekey-'))

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer(), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
  r = await s.reseller({ credit: 100 })
})
afterAll(async () => {
  await s.service.deploys.idle()
  await Promise.all([s.close(), web.close(), dns.close()])
  rmSync(work, { recursive: true, force: true })
})

/** A key pair made the way the app makes one (ECDSA P-256, PKCS#8) and a CSR from it. */
function keyAndCsr(names: string[]): { key: string; csr: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  const file = join(work, `key-${Math.random().toString(36).slice(2)}.pem`)
  writeFileSync(file, key, { mode: 0o600 })
  const csr = execFileSync('openssl', [
    'req',
    '-new',
    '-key',
    file,
    '-subj',
    `/CN=${names[0]}`,
    '-addext',
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`
  ]).toString()
  rmSync(file)
  return { key, csr }
}

/** Publishes the http validation files, from an API answer or a bridge view alike. */
const serveFiles = (validation: { instructions: object }[]): void => {
  for (const v of validation) {
    const i = v.instructions as { url?: string; file_content?: string; fileContent?: string }
    if (!i.url) continue
    const url = new URL(i.url)
    web.put(url.hostname, url.pathname, `${i.file_content ?? i.fileContent}\n`)
  }
}

const pairs = (certificatePem: string, keyPem: string): boolean =>
  new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(keyPem))

describe('reissue with a new key generated in the app', () => {
  it('deploys the new certificate with its new key on the very first attempt', async () => {
    const domain = 'rekey.example.test'
    const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
    const orderId = created.body.order_id as number
    const first = keyAndCsr([domain])
    await app.storePrivateKey(r.id, orderId, first.key)
    const conf = await app.configureOrder(r.id, { orderId, csr: first.csr, dcvMethod: 'http' })
    serveFiles(conf.validation)
    expect((await app.sslStatus(r.id, orderId)).order.status).toBe('completed')

    const nginx = join(work, 'nginx')
    const iis = join(work, 'iis')
    const d = s.service.deploys
    await d.addTarget(orderId, { kind: 'folder', path: nginx, layout: 'nginx' })
    const pfxPassword = (await d.addTarget(orderId, { kind: 'folder', path: iis, layout: 'iis' })).secret
      ?.value as string
    await d.addTarget(orderId, {
      kind: 'command',
      command: 'test -s "$CERTDESK_KEY_FILE" && echo reloaded with "$CERTDESK_KEY_FILE"',
      timeoutSeconds: 20
    })

    const second = keyAndCsr([domain])
    const ssl = await app.reissue(r.id, { orderId, csr: second.csr, privateKeyPem: second.key })
    expect(ssl.order.status).toBe('completed')
    const cert = ssl.certificate!
    expect(pairs(cert.certificatePem, second.key)).toBe(true)
    await d.idle()

    // Every target succeeded on attempt 1; no "does not hold the private key", no retry.
    const runs = (await d.runs(orderId, { limit: 20, offset: 0 })).items
    expect(runs.map((x) => [x.kind, x.status, x.attempts, x.lastError]).sort()).toEqual(
      [
        ['command', 'succeeded', 1, null],
        ['folder', 'succeeded', 1, null],
        ['folder', 'succeeded', 1, null]
      ].sort()
    )
    expect(readFileSync(join(nginx, 'cert.pem'), 'utf8')).toBe(cert.certificatePem)
    expect(readFileSync(join(nginx, 'privkey.pem'), 'utf8').trim()).toBe(second.key.trim())
    expect(pairs(readFileSync(join(nginx, 'cert.pem'), 'utf8'), readFileSync(join(nginx, 'privkey.pem'), 'utf8'))).toBe(
      true
    )
    const pfx = spawnSync(
      'openssl',
      ['pkcs12', '-in', join(iis, 'certificate.pfx'), '-passin', `pass:${pfxPassword}`, '-nodes'],
      {
        encoding: 'utf8',
        timeout: 30_000
      }
    )
    expect(pfx.status, pfx.stderr).toBe(0)
    expect(pfx.stdout).toContain(cert.certificatePem.split('\n')[1])
    const exported = await app.exportPrivateKey(r.id, orderId)
    expect(exported).toEqual({ pkcs8Pem: expect.stringContaining('BEGIN PRIVATE KEY'), matchesCertificate: true })
    expect(pairs(cert.certificatePem, exported.pkcs8Pem)).toBe(true)
  })

  it('keeps the current key until a reissue that needs validation is issued, then deploys with the new one', async () => {
    const domain = 'grow.example.test'
    const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
    const orderId = created.body.order_id as number
    const first = keyAndCsr([domain])
    await app.storePrivateKey(r.id, orderId, first.key)
    const conf = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: orderId, csr: first.csr, dcv_method: 'http' }
    })
    serveFiles(conf.body.validation as { instructions: object }[])
    expect((await app.sslStatus(r.id, orderId)).order.status).toBe('completed')
    const folder = join(work, 'grow')
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'haproxy' })
    const certificates = async () => (await s.service.certificates.history(r.id, orderId)).length

    // Refusals change nothing: a key that is not the CSR's, a key without a CSR, no key at all.
    const next = keyAndCsr([domain, `www.${domain}`])
    const stranger = keyAndCsr([domain])
    const before = await certificates()
    for (const [input, message] of [
      [{ csr: next.csr, privateKeyPem: stranger.key }, /not the key the CSR was made from/],
      [{ privateKeyPem: next.key }, /send the CSR made from that key/],
      [{ csr: next.csr, privateKeyPem: 'hello' }, /not an unencrypted PKCS#8 PEM/],
      [{ csr: next.csr, privateKeyPem: next.key.replace('PRIVATE KEY', 'RSA PRIVATE KEY') }, /PKCS#8/]
    ] as const) {
      await expect(app.reissue(r.id, { orderId, ...input })).rejects.toThrow(message)
    }
    const other = await s.reseller({ credit: 10 })
    await expect(app.reissue(other.id, { orderId, csr: next.csr, privateKeyPem: next.key })).rejects.toThrow(
      /not found/
    )
    // The reseller API takes no private key at all.
    const viaApi = await s.request<Body>('POST', '/ssl/reissue', {
      key: r.key,
      body: { order_id: orderId, csr: next.csr, private_key: next.key }
    })
    expect(viaApi.status).toBe(400)
    expect(viaApi.body.error).toMatch(/unknown field "private_key"/)
    expect(await certificates()).toBe(before)
    expect((await app.exportPrivateKey(r.id, orderId)).pkcs8Pem.trim()).toBe(first.key.trim())

    // The www name needs validating: until then the current certificate keeps its key.
    const pending = await app.reissue(r.id, { orderId, csr: next.csr, privateKeyPem: next.key })
    expect(pending.order.status).toBe('validation_pending')
    const meanwhile = await app.exportPrivateKey(r.id, orderId)
    expect(meanwhile.pkcs8Pem.trim()).toBe(first.key.trim())
    expect(meanwhile.matchesCertificate).toBe(true)

    serveFiles(pending.validation)
    const done = await app.sslStatus(r.id, orderId)
    expect(done.order.status).toBe('completed')
    await s.service.deploys.idle()
    const combined = readFileSync(join(folder, 'haproxy.pem'), 'utf8')
    expect(combined).toContain(done.certificate!.certificatePem.trim())
    expect(combined).toContain(next.key.trim())
    expect(existsSync(join(folder, 'privkey.pem'))).toBe(true)
    expect(pairs(done.certificate!.certificatePem, readFileSync(join(folder, 'privkey.pem'), 'utf8'))).toBe(true)
    expect((await app.exportPrivateKey(r.id, orderId)).matchesCertificate).toBe(true)
  })
})
