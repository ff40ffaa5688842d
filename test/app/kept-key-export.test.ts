/**
 * The desktop user's key export says whether the kept key belongs to the order's current
 * certificate, so a PFX is never built from a key and a certificate that do not match.
 */
import { execFileSync } from 'node:child_process'
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

beforeAll(async () => {
  s = await startServer()
  dns = await startDns()
  web = await startWeb()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
})
afterAll(async () => {
  await web.close()
  await dns.close()
  await s.close()
})

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

describe('exporting a kept private key', () => {
  it('says whether the key matches the current certificate, before and after a reissue from another CSR', async () => {
    const r = await s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'pair.example.test' }
    })
    const orderId = created.body.order_id as number
    // The app generated this key and its CSR, and keeps the key.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    await app.storePrivateKey(r.id, orderId, pem)
    expect(await app.exportPrivateKey(r.id, orderId)).toEqual({ pkcs8Pem: pem, matchesCertificate: null })

    const dir = mkdtempSync(join(tmpdir(), 'certdesk-pair-'))
    writeFileSync(join(dir, 'key.pem'), pem, { mode: 0o600 })
    const csr = execFileSync('openssl', [
      'req',
      '-new',
      '-key',
      join(dir, 'key.pem'),
      '-subj',
      '/CN=pair.example.test',
      '-addext',
      'subjectAltName=DNS:pair.example.test,DNS:www.pair.example.test'
    ]).toString()
    rmSync(dir, { recursive: true, force: true })
    await issueWith(r.key, orderId, csr, '/ssl/configure')
    expect((await app.exportPrivateKey(r.id, orderId)).matchesCertificate).toBe(true)

    // The customer reissues with a CSR of their own key: the kept key no longer fits.
    await issueWith(
      r.key,
      orderId,
      opensslCsr(['pair.example.test', 'www.pair.example.test'], 'ec:P-256'),
      '/ssl/reissue'
    )
    const after = await app.exportPrivateKey(r.id, orderId)
    expect(after.pkcs8Pem).toBe(pem)
    expect(after.matchesCertificate).toBe(false)
  })
})
