/**
 * Renewal by ACME Renewal Information (RFC 9773) and dns-persist-01
 * (draft-ietf-acme-dns-persist; Baseline Requirements §3.2.2.4.22), with CertDesk's own embedded
 * ACME server as the upstream CA and pebble-challtestsrv serving the `_validation-persist`
 * records. The ACME issuer gets its EAB from an ACME subscription order, like any customer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as acme from 'acme-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { ACME_ISSUER_SETTINGS } from '../../src-main/core/acme-client/acme-issuer'
import { resellerAccountKey } from '../../src-main/core/acme-client/acme-issuer-accounts'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { persistRecordValue } from '../../src-main/core/dcv/dns-persist'
import { freePort, setTxt, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { certdesk } from '../support/cli'
import { manualClock, type ManualClock } from '../support/clock'
import { newKeyPem, opensslCsrForKey } from '../support/csr'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; detail: string | null; instructions: Record<string, string> }
type AcmeSetup = { account: { eab_kid: string; eab_hmac_key: string; server_url: string } }

let clock: ManualClock
let s: TestServer
let server: RunningAcmeServer
let dns: ChallTestSrv
let work: string
let rootPath: string
let reseller: TestReseller

beforeAll(async () => {
  // Near the real time: the ACME listener's certificate is issued on this clock and checked by
  // Node's TLS on the real one.
  clock = manualClock(new Date())
  s = await startServer({ clock: clock.clock })
  dns = await startChallTestSrv()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.dns)
  server = await startAcmeServer(s.service, { port: 0 })
  work = mkdtempSync(join(tmpdir(), 'certdesk-ari-'))
  rootPath = join(work, 'root.pem')
  writeFileSync(rootPath, server.rootPem)
  acme.axios.defaults.httpsAgent = new Agent({ ca: server.rootPem })
  reseller = await s.reseller({ credit: 2000 })
})

afterAll(async () => {
  await server?.close()
  await dns?.stop()
  await s?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const post = async (path: string, body: Body) => await s.request<Body>('POST', path, { key: reseller.key, body })
const get = async (path: string) => await s.request<Body>('GET', path, { key: reseller.key })

async function subscribe(domain: string, productId = 12): Promise<AcmeSetup> {
  const created = await post('/orders', { product_id: productId, domain })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  const res = await get(`/orders/${created.body.order_id as number}/acme`)
  expect(res.status).toBe(200)
  return res.body.acme as AcmeSetup
}

async function client(setup: AcmeSetup): Promise<acme.Client> {
  const c = new acme.Client({
    directoryUrl: setup.account.server_url,
    accountKey: await acme.crypto.createPrivateEcdsaKey('P-256'),
    externalAccountBinding: { kid: setup.account.eab_kid, hmacKey: setup.account.eab_hmac_key },
    backoffAttempts: 20,
    backoffMin: 50,
    backoffMax: 300
  })
  await c.createAccount({ termsOfServiceAgreed: true })
  return c
}

/** Orders `name` and answers its dns-persist-01 challenge; the challenge as the CA left it. */
async function persistChallenge(c: acme.Client, name: string): Promise<Record<string, unknown>> {
  const order = await c.createOrder({ identifiers: [{ type: 'dns', value: name }] })
  const [authz] = await c.getAuthorizations(order)
  const ch = authz.challenges.find((x) => x.type === ('dns-persist-01' as never)) as unknown as Record<string, unknown>
  expect(ch, 'the server offers dns-persist-01').toBeDefined()
  expect(ch['issuer-domain-names']).toEqual(['localhost'])
  await c.completeChallenge(ch as never)
  await c.waitForValidStatus({ url: ch.url } as never).catch(() => undefined)
  const [after] = await c.getAuthorizations(order)
  return after.challenges.find((x) => x.url === ch.url) as unknown as Record<string, unknown>
}

const inDays = (d: number): Date => new Date(clock.now().getTime() + d * 86_400_000)

describe('dns-persist-01 on the embedded ACME server', () => {
  it('shows each subscription the exact record to publish, checks it, and warns before persistUntil', async () => {
    const created = await post('/orders', { product_id: 12, domain: 'persist-page.test' })
    const orderId = created.body.order_id as number
    const setup = (await get(`/orders/${orderId}/acme`)).body.acme as AcmeSetup
    const c = await client(setup)
    const page = async () =>
      ((await get(`/orders/${orderId}/acme`)).body.acme as { dns_persist: Record<string, unknown>[] }).dns_persist
    const before = await page()
    expect(before.map((r) => [r.record_name, r.record_value, r.in_place])).toEqual([
      ['_validation-persist.persist-page.test', `localhost; accounturi=${c.getAccountUrl()}`, false],
      ['_validation-persist.www.persist-page.test', `localhost; accounturi=${c.getAccountUrl()}`, false]
    ])
    await setTxt(
      dns,
      '_validation-persist.persist-page.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: c.getAccountUrl(), persistUntil: inDays(10) })
    )
    const after = await page()
    expect(after[0]).toMatchObject({ in_place: true, warning: expect.stringContaining('persistUntil ends on') })
    expect(after[1]).toMatchObject({ in_place: false, warning: null })
  })

  it('validates a name whose record names this CA and this account', async () => {
    const c = await client(await subscribe('persist-ok.test'))
    await setTxt(
      dns,
      '_validation-persist.persist-ok.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: c.getAccountUrl(), persistUntil: inDays(60) })
    )
    const ch = await persistChallenge(c, 'persist-ok.test')
    expect(ch.status, JSON.stringify(ch.error)).toBe('valid')
  })

  it('refuses a record naming another account', async () => {
    const c = await client(await subscribe('persist-acct.test'))
    const other = c.getAccountUrl().replace(/\/acct\/(\d+)$/, (_m, id: string) => `/acct/${Number(id) + 1000}`)
    await setTxt(
      dns,
      '_validation-persist.persist-acct.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: other })
    )
    const ch = await persistChallenge(c, 'persist-acct.test')
    expect(ch.status).toBe('invalid')
    expect((ch.error as { type: string }).type).toBe('urn:ietf:params:acme:error:unauthorized')
    expect((ch.error as { detail: string }).detail).toContain('not this account')
  })

  it('refuses a record whose persistUntil has passed', async () => {
    const c = await client(await subscribe('persist-old.test'))
    await setTxt(
      dns,
      '_validation-persist.persist-old.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: c.getAccountUrl(), persistUntil: inDays(-1) })
    )
    const ch = await persistChallenge(c, 'persist-old.test')
    expect(ch.status).toBe('invalid')
    expect((ch.error as { detail: string }).detail).toContain('persistUntil passed')
  })

  it('refuses a wildcard name unless the record says policy=wildcard', async () => {
    const c = await client(await subscribe('*.persist-wild.test', 13))
    await setTxt(
      dns,
      '_validation-persist.persist-wild.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: c.getAccountUrl() })
    )
    const refused = await persistChallenge(c, '*.persist-wild.test')
    expect(refused.status).toBe('invalid')
    expect((refused.error as { detail: string }).detail).toContain('policy=wildcard')
    await fetch(`${dns.management}/clear-txt`, {
      method: 'POST',
      body: JSON.stringify({ host: '_validation-persist.persist-wild.test.' })
    })
    await setTxt(
      dns,
      '_validation-persist.persist-wild.test',
      persistRecordValue({ issuerDomain: 'localhost', accountUri: c.getAccountUrl(), wildcard: true })
    )
    const ok = await persistChallenge(c, '*.persist-wild.test')
    expect(ok.status, JSON.stringify(ok.error)).toBe('valid')
  })
})

describe('the ACME issuer with the embedded server as its CA', () => {
  let orderId: number
  let folder: string
  let firstCertId: string

  it('shows the dns-persist-01 record to publish, checks it read-only, and issues once it is published', async () => {
    const setup = await subscribe('shop.ari.test')
    await s.service.acmeIssuer.configure(
      server.directoryUrl,
      setup.account.eab_kid,
      setup.account.eab_hmac_key,
      rootPath
    )
    const created = await post('/orders', { product_id: 2, domain: 'shop.ari.test' })
    orderId = created.body.order_id as number
    // The app keeps the key, so the folder target below may write it beside each renewal.
    const key = newKeyPem()
    await s.service.keyVault.store(reseller.id, orderId, key)
    const conf = await post('/ssl/configure', {
      order_id: orderId,
      csr: opensslCsrForKey(['shop.ari.test', 'www.shop.ari.test'], key),
      dcv_method: 'dns'
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    const accountUrl = (await s.service.acmeIssuer.accounts.url(reseller.id)) as string
    const v = conf.body.validation as Validation[]
    for (const x of v) {
      expect(x.instructions.record_name).toBe(`_validation-persist.${x.name}`)
      expect(x.instructions.record_type).toBe('TXT')
      expect(x.instructions.record_value).toBe(`localhost; accounturi=${accountUrl}`)
    }
    // Nothing published: the look is read-only, the CA is not asked and the challenge not spent.
    const early = await get(`/ssl/${orderId}`)
    expect(early.body.status).toBe('validation_pending')
    expect((early.body.validation as Validation[])[0].detail).toContain('the ACME CA was not asked')
    for (const x of v) await setTxt(dns, x.instructions.record_name, x.instructions.record_value)
    const done = await get(`/ssl/${orderId}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    // The CA's window, where it came from, and the moment chosen inside it (RFC 9773 §4.2).
    const w = await s.service.acmeIssuer.windows.view(orderId)
    expect(w?.source).toBe('ari')
    expect(w?.source_detail).toContain('RFC 9773')
    expect(w && w.renew_at >= w.window_start && w.renew_at <= w.window_end).toBe(true)
    firstCertId = w?.cert_id as string
    // The same through the API, with the record to keep and its read-only check.
    const api = await get(`/orders/${orderId}/renewal`)
    expect(api.status, JSON.stringify(api.body)).toBe(200)
    const renewal = api.body.renewal as { window: Body; dns_persist: Body[]; delegation: unknown }
    expect(renewal.window).toMatchObject({ source: 'ari', cert_id: firstCertId, renew_at: w?.renew_at })
    expect(renewal.delegation).toBeNull()
    expect(renewal.dns_persist.map((r) => [r.record_name, r.record_value, r.in_place])).toEqual([
      ['_validation-persist.shop.ari.test', `localhost; accounturi=${accountUrl}`, true],
      ['_validation-persist.www.shop.ari.test', `localhost; accounturi=${accountUrl}`, true]
    ])
    const stranger = await s.reseller({ credit: 0 })
    const hidden = await s.request<Body>('GET', `/orders/${orderId}/renewal`, { key: stranger.key })
    expect(hidden.status).toBe(404)
    expect(hidden.body.success).toBe(false)
    folder = mkdtempSync(join(work, 'deploy-'))
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
  })

  it('renews with replaces and deploys in one pass once the CA moves the window into the past', async () => {
    // An idle pass changes nothing: the window is weeks away.
    const idle = await s.service.scheduler.run()
    expect(idle.issued).toEqual([])
    const moved = certdesk(['admin', 'acme-server', 'renewal-window-past', firstCertId, '--data-dir', s.dataDir])
    expect(moved.code, moved.stderr).toBe(0)
    // Before Retry-After (6 hours) has passed CertDesk does not ask again (§4.3).
    clock.set(new Date(clock.now().getTime() + 3600_000))
    expect((await s.service.scheduler.run()).issued).toEqual([])
    clock.set(new Date(clock.now().getTime() + 6 * 3600_000))
    const pass = await s.service.scheduler.run()
    const why = JSON.stringify({ pass, window: await s.service.acmeIssuer.windows.view(orderId), moved: moved.json })
    expect(pass.errors, why).toEqual([])
    expect(
      pass.issued.map((i) => i.order_id),
      why
    ).toEqual([orderId])
    const caOrder = (await s.service.ctx.store.get('SELECT replaces FROM acme_orders ORDER BY id DESC LIMIT 1')) as {
      replaces: string | null
    }
    expect(caOrder.replaces).toBe(firstCertId)
    expect(pass.deploys?.map((d) => [d.order_id, d.status])).toEqual([[orderId, 'succeeded']])
    const deployed = readFileSync(join(folder, 'fullchain.pem'), 'utf8')
    const newest = (await s.service.ctx.store.get(
      'SELECT certificate_pem FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1',
      orderId
    )) as { certificate_pem: string }
    expect(deployed.startsWith(newest.certificate_pem.trim())).toBe(true)
    const w = await s.service.acmeIssuer.windows.view(orderId)
    expect(w?.cert_id).not.toBe(firstCertId)
    // Idempotent: the next pass renews nothing.
    expect((await s.service.scheduler.run()).issued).toEqual([])
  })

  it('renews without replaces when the CA refuses it', async () => {
    const current = (await s.service.acmeIssuer.windows.view(orderId))?.cert_id as string
    // Another client of the same account (certbot on the server, say) already replaced it:
    // the CA answers `alreadyReplaced` (RFC 9773 §5).
    const other = new acme.Client({
      directoryUrl: server.directoryUrl,
      accountKey: (await s.service.ctx.secrets.get(resellerAccountKey(reseller.id))) as string,
      accountUrl: (await s.service.acmeIssuer.accounts.url(reseller.id)) as string,
      backoffMin: 50,
      backoffMax: 300
    })
    const order = await other.createOrder({
      identifiers: [{ type: 'dns', value: 'shop.ari.test' }],
      replaces: current
    } as never)
    for (const authz of await other.getAuthorizations(order)) {
      const ch = authz.challenges.find((x) => x.type === ('dns-persist-01' as never))
      await other.completeChallenge(ch as never)
      await other.waitForValidStatus(ch as never)
    }
    const [, csr] = await acme.crypto.createCsr({ commonName: 'shop.ari.test' })
    await other.finalizeOrder(order, csr)

    certdesk(['admin', 'acme-server', 'renewal-window-past', current, '--data-dir', s.dataDir])
    clock.set(new Date(clock.now().getTime() + 7 * 3600_000))
    const pass = await s.service.scheduler.run()
    expect(pass.errors).toEqual([])
    expect(pass.issued.map((i) => i.order_id)).toEqual([orderId])
    const caOrder = (await s.service.ctx.store.get('SELECT replaces FROM acme_orders ORDER BY id DESC LIMIT 1')) as {
      replaces: string | null
    }
    expect(caOrder.replaces).toBeNull()
    expect((await s.service.acmeIssuer.windows.view(orderId))?.last_error).toContain('the CA refused replaces')
  })

  it('reports a look at the CA that failed, keeps the window, and asks again later', async () => {
    const before = await s.service.acmeIssuer.windows.view(orderId)
    const directory = (await s.service.settings.get(ACME_ISSUER_SETTINGS.directoryUrl)) as string
    // The CA is gone (a closed port) when the window's Retry-After comes due.
    await s.service.settings.set(
      ACME_ISSUER_SETTINGS.directoryUrl,
      `https://localhost:${await freePort()}/acme/directory`
    )
    try {
      clock.set(new Date(clock.now().getTime() + 7 * 3600_000))
      const pass = await s.service.scheduler.run()
      expect(pass.errors).toEqual([
        {
          order_id: orderId,
          order_number: expect.stringMatching(/^ORD-\d{4}-\d+$/),
          error: expect.stringContaining('could not read the directory')
        }
      ])
      expect(pass.issued).toEqual([])
      const after = await s.service.acmeIssuer.windows.view(orderId)
      expect(after).toMatchObject({ cert_id: before?.cert_id, window_start: before?.window_start })
      expect(after?.last_error).toContain('could not read the directory')
      expect(Date.parse(after?.next_check_at as string)).toBeGreaterThan(clock.now().getTime())
    } finally {
      await s.service.settings.set(ACME_ISSUER_SETTINGS.directoryUrl, directory)
    }
  })
})
