/**
 * A delegation CNAME authorises only the reseller it was given to. Two resellers order the same
 * customer name through the ACME issuer (Debian's Pebble as the external CA) with delegated DNS
 * validation; the customer's DNS is pebble-challtestsrv, and Pebble's lookups follow the CNAME
 * into CertDesk's own responder through a stand-in recursive resolver. The first reseller's
 * customer sets the CNAME its order shows; the second reseller's order must not pass through
 * it: it gets a target of its own and waits, saying which record the customer must add.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ManualClock } from '../support/clock'
import { startDelegatedCa, type DelegatedCa } from '../support/delegated-ca'
import { opensslCsr } from '../support/csr'
import type { DnsServer } from '../support/dcv-servers'
import type { Recursor } from '../support/dns-recursor'
import type { TestReseller, TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; detail: string | null; instructions: Record<string, string> }
type Renewal = {
  delegation: {
    zone: string
    domains: { domain: string; cname: { value: string }; in_place: boolean; detail: string }[]
  } | null
}

const ZONE = 'acme.reseller.test'
const NAME = 'shop.tenant.test'

let ca: DelegatedCa
let clock: ManualClock
let s: TestServer
let customerDns: DnsServer
let recursor: Recursor
let a: TestReseller
let b: TestReseller

beforeAll(async () => {
  ca = await startDelegatedCa({ zone: ZONE })
  ;({ clock, s, customerDns, recursor } = ca)
  a = s.reseller({ credit: 1000, name: 'Reseller A' })
  b = s.reseller({ credit: 1000, name: 'Reseller B' })
})

afterAll(async () => {
  await ca?.close()
})

const as = (r: TestReseller) => ({
  post: (path: string, body: Body) => s.request<Body>('POST', path, { key: r.key, body }),
  get: (path: string) => s.request<Body>('GET', path, { key: r.key })
})

async function orderDns(r: TestReseller, names: string[]): Promise<{ id: number; validation: Validation[] }> {
  const created = await as(r).post('/orders', { product_id: 2, domain: names[0] })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  const id = created.body.order_id as number
  const conf = await as(r).post('/ssl/configure', {
    order_id: id,
    csr: opensslCsr(names, 'ec:P-256'),
    dcv_method: 'dns'
  })
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  return { id, validation: conf.body.validation as Validation[] }
}

describe('delegated DNS labels are bound to the reseller', () => {
  let aOrder: number
  let aTarget: string
  let bOrder: number
  let bTarget: string

  it('issues to the reseller whose customer set the CNAME', async () => {
    const { id, validation } = await orderDns(a, [NAME])
    aOrder = id
    aTarget = validation[0].instructions.record_value
    expect(validation[0].instructions).toMatchObject({ record_name: `_acme-challenge.${NAME}`, record_type: 'CNAME' })
    await customerDns.setCname(`_acme-challenge.${NAME}`, aTarget)
    const done = await as(a).get(`/ssl/${aOrder}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
  })

  it('gives a second reseller its own target and keeps its order waiting, saying which record the customer must add', async () => {
    const pebbleOrdersBefore = recursor.followed.length
    const { id, validation } = await orderDns(b, [NAME])
    bOrder = id
    bTarget = validation[0].instructions.record_value
    expect(validation[0].instructions.record_name).toBe(`_acme-challenge.${NAME}`)
    expect(bTarget).toMatch(new RegExp(`\\.${ZONE.replace(/\./g, '\\.')}$`))
    expect(bTarget).not.toBe(aTarget)
    // However often B's order is looked at, it does not pass through A's customer's CNAME.
    for (let i = 0; i < 2; i++) {
      const st = await as(b).get(`/ssl/${bOrder}`)
      expect(st.body.status, JSON.stringify(st.body)).toBe('validation_pending')
      const v = (st.body.validation as Validation[])[0]
      expect(v.status).toBe('pending')
      expect(v.detail).toContain(`_acme-challenge.${NAME} CNAME ${bTarget}`)
    }
    // Pebble was never asked to validate B's name: nothing was looked up through the CNAME for it.
    expect(recursor.followed.length).toBe(pebbleOrdersBefore)
    expect(s.service.ctx.db.prepare('SELECT COUNT(*) FROM certificates WHERE order_id = ?').pluck().get(bOrder)).toBe(0)
    // The renewal view tells B the same, and A that its CNAME is in place.
    const bView = (await as(b).get(`/orders/${bOrder}/renewal`)).body.renewal as Renewal
    expect(bView.delegation?.domains[0]).toMatchObject({ domain: NAME, in_place: false })
    expect(bView.delegation?.domains[0].cname.value).toBe(bTarget)
    const aView = (await as(a).get(`/orders/${aOrder}/renewal`)).body.renewal as Renewal
    expect(aView.delegation?.domains[0]).toMatchObject({ domain: NAME, in_place: true })
    expect(aView.delegation?.domains[0].cname.value).toBe(aTarget)
  })

  it("serves no value of B's under A's label", async () => {
    const aLabel = aTarget.split('.')[0]
    const bLabel = bTarget.split('.')[0]
    expect(s.service.acmeIssuer.delegation.values(aLabel)).toEqual([])
    expect(s.service.acmeIssuer.delegation.values(bLabel).length).toBeGreaterThan(0)
  })

  it("keeps A's label through A's renewal, with no customer action", async () => {
    const w = s.service.acmeIssuer.windows.view(aOrder)
    clock.set(new Date(Date.parse(`${w?.renew_at.replace(' ', 'T')}Z`) + 3600_000))
    const pass = await s.service.scheduler.run()
    expect(pass.issued.map((i) => i.order_id)).toEqual([aOrder])
    expect(pass.errors.filter((e) => e.order_id === aOrder)).toEqual([])
    const aView = (await as(a).get(`/orders/${aOrder}/renewal`)).body.renewal as Renewal
    expect(aView.delegation?.domains[0].cname.value).toBe(aTarget)
    // B is still waiting: its order is not the one the customer delegated to.
    expect((await as(b).get(`/ssl/${bOrder}`)).body.status).toBe('validation_pending')
  })

  it("issues to B once the customer points the CNAME at B's target", async () => {
    await customerDns.clear(`_acme-challenge.${NAME}`)
    await customerDns.setCname(`_acme-challenge.${NAME}`, bTarget)
    const done = await as(b).get(`/ssl/${bOrder}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    // And A now sees that its customer's CNAME points elsewhere.
    const aView = (await as(a).get(`/orders/${aOrder}/renewal`)).body.renewal as Renewal
    expect(aView.delegation?.domains[0]).toMatchObject({ in_place: false })
    expect(aView.delegation?.domains[0].detail).toContain(bTarget)
  })
})
