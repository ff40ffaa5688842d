/**
 * The reissue dialog's two calls into the core over the bridge: the plan (what a reissue for
 * these names would do: the names within what was paid, what is validated again, the deploys,
 * what stays valid) and a reissue with the same key for other names, whose CSR the core signs
 * with the kept key of the current certificate. RSA and ECDSA keys alike; refused names and
 * another reseller's order change nothing.
 */
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { API_VERSION } from '../../src-main/http/server'
import { opensslCsr, opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let dns: DnsServer
let web: WebServer
let app: AppHandlers
let r: TestReseller
const work = mkdtempSync(join(tmpdir(), 'certdesk-plan-'))

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer(), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
  r = await s.reseller({ credit: 500 })
})
afterAll(async () => {
  await s.service.deploys.idle()
  await Promise.all([s.close(), web.close(), dns.close()])
  rmSync(work, { recursive: true, force: true })
})

const serveFiles = (validation: { instructions: object }[]): void => {
  for (const v of validation) {
    const i = v.instructions as { url?: string; fileContent?: string }
    if (i.url) web.put(new URL(i.url).hostname, new URL(i.url).pathname, `${i.fileContent}\n`)
  }
}

/** A multi-domain order issued over HTTP; with `key`, CertDesk keeps that key (as after "Generate key and CSR"). */
async function issued(names: string[], key?: string): Promise<number> {
  const created = await s.request<Body>('POST', '/orders', {
    key: r.key,
    body: { product_id: 4, domain: names[0], san_count: 1 }
  })
  const orderId = created.body.order_id as number
  if (key) await app.storePrivateKey(r.id, orderId, key)
  const conf = await app.configureOrder(r.id, {
    orderId,
    csr: key ? opensslCsrForKey(names, key) : opensslCsr(names, 'ec:P-256'),
    dcvMethod: 'http'
  })
  serveFiles(conf.validation)
  expect((await app.sslStatus(r.id, orderId)).order.status).toBe('completed')
  return orderId
}

const pem = (k: ReturnType<typeof generateKeyPairSync>['privateKey']): string =>
  k.export({ type: 'pkcs8', format: 'pem' }) as string

describe('the reissue plan and a reissue with the same key', () => {
  it('says what a reissue would do, within what was paid', async () => {
    const names = ['plan.example.test', 'www.plan.example.test', 'api.example.net']
    const orderId = await issued(names)
    const folder = join(work, 'site')
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder })
    const same = await app.reissuePlan(r.id, orderId)
    expect(same).toMatchObject({
      names,
      added: [],
      removed: [],
      included: ['plan.example.test', 'www.plan.example.test'],
      // 2 included + 1 bought; no wildcard paid for.
      allowance: { names: { used: 1, paid: 3 }, wildcards: { used: 0, paid: 0 } },
      deploys: [{ kind: 'folder', target: folder }],
      current: { revokedAt: null }
    })
    expect(same.validation.every((v) => v.reused && v.method === 'http')).toBe(true)
    expect(same.current.validTill).toBe((await app.certificate(r.id, orderId)).certificate?.validTill)

    const more = await app.reissuePlan(r.id, orderId, [...names, 'SHOP.example.net', 'blog.example.net'])
    expect(more.added).toEqual(['shop.example.net', 'blog.example.net'])
    expect(more.allowance?.names).toEqual({ used: 3, paid: 3 })
    expect(more.validation.filter((v) => !v.reused).map((v) => v.name)).toEqual([
      'shop.example.net',
      'blog.example.net'
    ])

    for (const [asked, message] of [
      [
        [...names, 'a.example.net', 'b.example.net', 'c.example.net'],
        /asks for 4 additional name\(s\) but the order covers 3/
      ],
      [[...names, '*.example.net'], /wildcard/],
      [[names[0], 'bad name.example'], /"bad name\.example" is not a domain name/],
      [[names[0], '../../etc/passwd'], /is not a domain name/],
      [[names[0], 'bücher.example'], /A-label/],
      [[names[0], `${'a'.repeat(64)}.example`], /is not a domain name/],
      [['other.example.org'], /does not name the order domain plan\.example\.test/]
    ] as const) {
      await expect(app.reissuePlan(r.id, orderId, [...asked]), String(message)).rejects.toThrow(message)
    }
    const stranger = await s.reseller({ credit: 10 })
    await expect(app.reissuePlan(stranger.id, orderId)).rejects.toMatchObject({ kind: 'not_found' })
    // Planning changes nothing.
    expect((await app.certificate(r.id, orderId)).history).toHaveLength(1)
  })

  for (const [label, key] of [
    ['ECDSA P-384', pem(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey)],
    ['RSA 3072', pem(generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey)]
  ] as const) {
    it(`reissues for other names with the same ${label} key, signing the CSR with the kept key`, async () => {
      const domain = `same-${label.replace(/\W/g, '').toLowerCase()}.example.test`
      const orderId = await issued([domain, `www.${domain}`], key)
      const before = (await app.certificate(r.id, orderId)).certificate!
      const pending = await app.reissue(r.id, { orderId, names: [domain, `mail.${domain}`] })
      // The new name waits for its validation; www is dropped; the others keep theirs.
      expect(pending.order.status).toBe('validation_pending')
      expect(pending.validation.map((v) => [v.name, v.status])).toEqual([
        [domain, 'valid'],
        [`mail.${domain}`, 'pending']
      ])
      serveFiles(pending.validation)
      const done = await app.sslStatus(r.id, orderId)
      expect(done.order.status).toBe('completed')
      const cert = new X509Certificate(done.certificate!.certificatePem)
      expect(done.certificate!.names).toEqual([domain, `mail.${domain}`])
      expect(cert.serialNumber).not.toBe(new X509Certificate(before.certificatePem).serialNumber)
      expect(cert.checkPrivateKey(createPrivateKey(key))).toBe(true)
      // The kept key still belongs to the current certificate: its PFX can be built.
      await expect(app.exportPfx(r.id, orderId, 'pw')).resolves.toHaveProperty('pfxBase64')
    })
  }

  it('refuses the same key for other names when no key of the current certificate is kept, and names beside a CSR', async () => {
    const orderId = await issued(['nokey.example.test'])
    await expect(
      app.reissue(r.id, { orderId, names: ['nokey.example.test', 'www.nokey.example.test'] })
    ).rejects.toThrow(/the private key of its certificate is not kept in CertDesk; send a CSR made from that key/)
    await expect(
      app.reissue(r.id, { orderId, names: ['nokey.example.test'], csr: opensslCsr(['nokey.example.test']) })
    ).rejects.toThrow(/send either a CSR or the names for the same key/)
    const detail = await app.certificate(r.id, orderId)
    expect(detail.history).toHaveLength(1)
    expect((await app.getOrder(r.id, orderId)).status).toBe('completed')
  })
})
