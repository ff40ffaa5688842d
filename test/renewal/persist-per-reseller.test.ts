/**
 * A dns-persist-01 record (draft-ietf-acme-dns-persist; Baseline Requirements §3.2.2.4.22)
 * authorises only the reseller it was published for. Each reseller gets certificates from the
 * external CA through an ACME account of its own, so the record's `accounturi` names one
 * reseller, and the CA (not only CertDesk) refuses another reseller's order with it. The CA is
 * CertDesk's own embedded ACME server (Debian's Pebble has no dns-persist-01), reached through an
 * ACME subscription like any customer's; pebble-challtestsrv is the customer's DNS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as acme from 'acme-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { setTxt, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { manualClock } from '../support/clock'
import { opensslCsr } from '../support/csr'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; detail: string | null; instructions: Record<string, string> }
type PersistView = { record_name: string; record_value: string; account_url: string; in_place: boolean; detail: string }

const NAME = 'persist.tenant.test'

let s: TestServer
let server: RunningAcmeServer
let dns: ChallTestSrv
let work: string
let a: TestReseller
let b: TestReseller

beforeAll(async () => {
  s = await startServer({ clock: manualClock(new Date()).clock })
  dns = await startChallTestSrv()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.dns)
  server = await startAcmeServer(s.service, { port: 0 })
  work = mkdtempSync(join(tmpdir(), 'certdesk-persist-tenant-'))
  writeFileSync(join(work, 'root.pem'), server.rootPem)
  acme.axios.defaults.httpsAgent = new Agent({ ca: server.rootPem })
  // The upstream CA's subscription, bought by the admin's own reseller account.
  const upstream = await s.reseller({ credit: 500, name: 'Upstream buyer' })
  const sub = await s.request<Body>('POST', '/orders', { key: upstream.key, body: { product_id: 12, domain: NAME } })
  const setup = (await s.request<Body>('GET', `/orders/${sub.body.order_id as number}/acme`, { key: upstream.key }))
    .body.acme as { account: { eab_kid: string; eab_hmac_key: string } }
  await s.service.acmeIssuer.configure(
    server.directoryUrl,
    setup.account.eab_kid,
    setup.account.eab_hmac_key,
    join(work, 'root.pem')
  )
  a = await s.reseller({ credit: 1000, name: 'Reseller A' })
  b = await s.reseller({ credit: 1000, name: 'Reseller B' })
})

afterAll(async () => {
  await server?.close()
  await dns?.stop()
  await s?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const as = (r: TestReseller) => ({
  post: (path: string, body: Body) => s.request<Body>('POST', path, { key: r.key, body }),
  get: (path: string) => s.request<Body>('GET', path, { key: r.key })
})

async function orderDns(r: TestReseller): Promise<{ id: number; validation: Validation[] }> {
  const created = await as(r).post('/orders', { product_id: 2, domain: NAME })
  const id = created.body.order_id as number
  const conf = await as(r).post('/ssl/configure', {
    order_id: id,
    csr: opensslCsr([NAME], 'ec:P-256'),
    dcv_method: 'dns'
  })
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  return { id, validation: conf.body.validation as Validation[] }
}

const accountOf = (recordValue: string): string => /accounturi=(\S+)/.exec(recordValue)?.[1] as string

describe('dns-persist-01 at the external CA is bound to the reseller', () => {
  let aRecord: string
  let bOrder: number
  let bRecord: string

  it('issues to the reseller whose customer published the record', async () => {
    const { id, validation } = await orderDns(a)
    expect(validation[0].instructions).toMatchObject({ record_name: `_validation-persist.${NAME}`, record_type: 'TXT' })
    aRecord = validation[0].instructions.record_value
    await setTxt(dns, `_validation-persist.${NAME}`, aRecord)
    const done = await as(a).get(`/ssl/${id}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
  })

  it('names another ACME account for a second reseller and keeps its order waiting, saying which record to add', async () => {
    const { id, validation } = await orderDns(b)
    bOrder = id
    bRecord = validation[0].instructions.record_value
    expect(validation[0].instructions.record_name).toBe(`_validation-persist.${NAME}`)
    expect(accountOf(bRecord)).toMatch(/^https:\/\//)
    expect(accountOf(bRecord)).not.toBe(accountOf(aRecord))
    for (let i = 0; i < 2; i++) {
      const st = await as(b).get(`/ssl/${bOrder}`)
      expect(st.body.status, JSON.stringify(st.body)).toBe('validation_pending')
      const v = (st.body.validation as Validation[])[0]
      expect(v.status).toBe('pending')
      expect(v.detail).toContain(`_validation-persist.${NAME} TXT "${bRecord}"`)
    }
    expect(await s.service.ctx.store.value('SELECT COUNT(*) FROM certificates WHERE order_id = ?', bOrder)).toBe(0)
    const view = ((await as(b).get(`/orders/${bOrder}/renewal`)).body.renewal as { dns_persist: PersistView[] })
      .dns_persist
    expect(view.map((r) => [r.record_value, r.account_url, r.in_place])).toEqual([[bRecord, accountOf(bRecord), false]])
  })

  it('is refused by the CA itself: the two resellers are two accounts there', async () => {
    // What an outsider sees: the CA's own records of which account ordered what.
    const accounts = await s.service.ctx.store.column(
      `SELECT DISTINCT a.id FROM acme_orders o JOIN acme_accounts a ON a.id = o.account_id
          WHERE o.identifiers LIKE ?`,
      `%${NAME}%`
    )
    expect(accounts.length).toBe(2)
    // B's account asking the CA directly with A's record in place: the CA refuses it.
    const c = new acme.Client({
      directoryUrl: server.directoryUrl,
      accountKey: (await s.service.ctx.secrets.get(`issuer.acme/account-key/reseller-${b.id}`)) as string,
      accountUrl: accountOf(bRecord),
      backoffMin: 50,
      backoffMax: 300
    })
    const order = await c.createOrder({ identifiers: [{ type: 'dns', value: NAME }] })
    const [authz] = await c.getAuthorizations(order)
    const ch = authz.challenges.find((x) => x.type === ('dns-persist-01' as never)) as never
    await c.completeChallenge(ch)
    await c.waitForValidStatus(ch).catch(() => undefined)
    const [after] = await c.getAuthorizations(order)
    expect(after.status).toBe('invalid')
  })

  it("issues to B once the customer adds B's record beside A's", async () => {
    await setTxt(dns, `_validation-persist.${NAME}`, bRecord)
    const done = await as(b).get(`/ssl/${bOrder}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
  })
})
