/**
 * Which orders at the external CA renew without the customer, said when the order is placed and
 * on its renewal, with the switch to a method that does, and an alert before a renewal that
 * cannot run unattended is due (not after it failed). Debian's Pebble is the CA (30-day
 * certificates), pebble-challtestsrv the customer's DNS, a node:http server their web server;
 * CertDesk answers dns-01 for a delegated zone. One name is an IDN (bücher), as its A-label.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ManualClock } from '../support/clock'
import { startDelegatedCa, type DelegatedCa } from '../support/delegated-ca'
import { opensslCsr } from '../support/csr'
import type { DnsServer, WebServer } from '../support/dcv-servers'
import type { TestReseller, TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; instructions: Record<string, string> }
type Record_ = { name: string; type: string; value: string }
type Unattended = {
  method: string
  unattended: boolean
  detail: string
  alternatives: { method: string; dcv_method: string; records: Record_[] }[]
  switch_with: string | null
}

const ZONE = 'acme.reseller.test'
const HTTP_NAME = 'xn--bcher-kva.notice.test'
const DNS_NAME = 'deleg.notice.test'
const DAY = 86_400_000

let ca: DelegatedCa
let clock: ManualClock
let s: TestServer
let customerDns: DnsServer
let web: WebServer
let reseller: TestReseller
let stranger: TestReseller

beforeAll(async () => {
  ca = await startDelegatedCa({ zone: ZONE, web: true })
  ;({ clock, s, customerDns } = ca)
  web = ca.web as WebServer
  reseller = s.reseller({ credit: 1000 })
  stranger = s.reseller({ credit: 0 })
})

afterAll(async () => {
  await ca?.close()
})

const post = (path: string, body: unknown, key = reseller.key) => s.request<Body>('POST', path, { key, body })
const get = (path: string) => s.request<Body>('GET', path, { key: reseller.key })
const stamp = (t: string): number => Date.parse(`${t.replace(' ', 'T')}Z`)
const openAlerts = () =>
  s.service.alerts
    .list({ open: true }, { limit: 100, offset: 0 })
    .items.filter((a) => a.rule === 'renewal_needs_customer')

async function configure(domain: string, method: 'dns' | 'http'): Promise<{ id: number; body: Body }> {
  const created = await post('/orders', { product_id: 2, domain })
  const id = created.body.order_id as number
  const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: method })
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  return { id, body: conf.body }
}

describe('unattended renewal at the external CA', () => {
  let httpOrder: number
  let dnsOrder: number
  let target: string

  it('says at order time that http-01 renews only with the customer, and offers delegated DNS', async () => {
    const h = await configure(HTTP_NAME, 'http')
    httpOrder = h.id
    const u = h.body.unattended_renewal as Unattended
    expect(u).toMatchObject({ method: 'http-01', unattended: false })
    expect(u.detail).toContain('every renewal')
    expect(u.switch_with).toContain('POST /ssl/change-dcv')
    target = s.service.acmeIssuer.delegation.target(reseller.id, HTTP_NAME)
    expect(u.alternatives).toEqual([
      {
        method: 'delegated-dns',
        dcv_method: 'dns',
        records: [{ name: `_acme-challenge.${HTTP_NAME}`, type: 'CNAME', value: target }]
      }
    ])
    const d = await configure(DNS_NAME, 'dns')
    dnsOrder = d.id
    expect(d.body.unattended_renewal).toMatchObject({ method: 'delegated-dns', unattended: true, alternatives: [] })
    // Issued the ordinary way: the http-01 file once, the CNAME once.
    for (const v of h.body.validation as Validation[])
      web.put(v.name, new URL(v.instructions.url).pathname, v.instructions.file_content)
    const dv = (d.body.validation as Validation[])[0]
    await customerDns.setCname(dv.instructions.record_name, dv.instructions.record_value)
    expect((await get(`/ssl/${httpOrder}`)).body.status).toBe('completed')
    expect((await get(`/ssl/${dnsOrder}`)).body.status).toBe('completed')
    // And on the order's renewal, with the switch that applies once issued.
    const r = (await get(`/orders/${httpOrder}/renewal`)).body.renewal as { unattended: Unattended }
    expect(r.unattended).toMatchObject({ method: 'http-01', unattended: false })
    expect(r.unattended.switch_with).toContain(`POST /orders/${httpOrder}/renewal`)
  })

  it('raises an alert some days before a renewal that cannot run unattended is due', async () => {
    const renewAt = stamp(s.service.acmeIssuer.windows.view(httpOrder)?.renew_at as string)
    clock.set(new Date(renewAt - 8 * DAY))
    await s.service.scheduler.run()
    expect(openAlerts()).toEqual([])
    clock.set(new Date(renewAt - 6 * DAY))
    const pass = await s.service.scheduler.run()
    expect(pass.issued).toEqual([])
    const alerts = openAlerts()
    expect(alerts.map((a) => a.orderId)).toEqual([httpOrder])
    expect(alerts[0].subject).toContain(HTTP_NAME)
    expect(alerts[0].message).toContain(`_acme-challenge.${HTTP_NAME} CNAME ${target}`)
    // Before the renewal: the order still holds its certificate and waits for nobody yet.
    expect((await get(`/ssl/${httpOrder}`)).body.status).toBe('completed')
    // Once per certificate, however many passes look.
    await s.service.scheduler.run()
    expect(
      s.service.alerts.list({}, { limit: 100, offset: 0 }).items.filter((a) => a.rule === 'renewal_needs_customer')
    ).toHaveLength(1)
  })

  it("refuses a switch that is not the caller's, or not a method the CA renews with", async () => {
    const other = await post(`/orders/${httpOrder}/renewal`, { dcv_method: 'dns' }, stranger.key)
    expect(other.status).toBe(404)
    expect(other.body.success).toBe(false)
    for (const bad of [
      { dcv_method: 'email' },
      { dcv_method: 'https' },
      { dcv_method: 'dns; drop' },
      {},
      { dcv_method: 'dns', x: 1 }
    ]) {
      const res = await post(`/orders/${httpOrder}/renewal`, bad)
      expect(res.status, JSON.stringify(bad)).toBe(400)
      expect(res.body.success).toBe(false)
    }
    const pending = (await post('/orders', { product_id: 2, domain: 'pending.notice.test' })).body.order_id as number
    expect((await post(`/orders/${pending}/renewal`, { dcv_method: 'dns' })).status).toBe(409)
    expect((await get(`/ssl/${httpOrder}`)).body.dcv_method).toBe('http')
  })

  it('switches to delegated DNS, and the renewal then runs with nobody and clears the alert', async () => {
    const res = await post(`/orders/${httpOrder}/renewal`, { dcv_method: 'dns' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const r = res.body.renewal as {
      unattended: Unattended
      delegation: { domains: { cname: Record_; in_place: boolean }[] }
    }
    expect(r.unattended).toMatchObject({ method: 'delegated-dns', unattended: true })
    expect(r.delegation.domains[0]).toMatchObject({ cname: { value: target }, in_place: false })
    await customerDns.setCname(`_acme-challenge.${HTTP_NAME}`, target)
    const renewAt = stamp(s.service.acmeIssuer.windows.view(httpOrder)?.renew_at as string)
    clock.set(new Date(renewAt + 3600_000))
    const pass = await s.service.scheduler.run()
    expect(pass.errors).toEqual([])
    expect(pass.issued.map((i) => i.order_id).sort()).toEqual([httpOrder, dnsOrder].sort())
    expect(openAlerts()).toEqual([])
  })
})
