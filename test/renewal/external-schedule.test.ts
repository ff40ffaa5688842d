/**
 * One renewal schedule per order at the external CA, from the certificate it actually issued.
 * Debian's Pebble issues 30-day certificates and has no renewalInfo, so an order's schedule is 14
 * days before its certificate ends (RFC 9773's fallback); the local CA's 200-day schedule must
 * never show or run for it, and no renewal ever asks for CertDesk's own validation records. The
 * customer's DNS is pebble-challtestsrv, their web server a node:http server on loopback, and
 * Pebble follows delegation CNAMEs into CertDesk's responder through a stand-in recursor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ManualClock } from '../support/clock'
import { startDelegatedCa, type DelegatedCa } from '../support/delegated-ca'
import { opensslCsr } from '../support/csr'
import type { DnsServer, WebServer } from '../support/dcv-servers'
import type { TestReseller, TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; detail: string | null; instructions: Record<string, string> }

const ZONE = 'acme.reseller.test'
const DAY = 86_400_000

let ca: DelegatedCa
let clock: ManualClock
let s: TestServer
let customerDns: DnsServer
let web: WebServer
let reseller: TestReseller

beforeAll(async () => {
  ca = await startDelegatedCa({ zone: ZONE, web: true })
  ;({ clock, s, customerDns } = ca)
  web = ca.web as WebServer
  reseller = s.reseller({ credit: 1000 })
})

afterAll(async () => {
  await ca?.close()
})

const post = (path: string, body: Body) => s.request<Body>('POST', path, { key: reseller.key, body })
const get = (path: string) => s.request<Body>('GET', path, { key: reseller.key })
const stamp = (t: string): number => Date.parse(`${t.replace(' ', 'T')}Z`)

async function configure(domain: string, method: 'dns' | 'http'): Promise<{ id: number; v: Validation[] }> {
  const created = await post('/orders', { product_id: 2, domain })
  // Before its certificate, an order at the external CA has no schedule to show: the CA sets
  // the lifetime (not the local 200-day one).
  expect(created.body.next_reissue_at).toBeNull()
  const id = created.body.order_id as number
  const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: method })
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  return { id, v: conf.body.validation as Validation[] }
}

const publishHttp = (v: Validation[]): void => {
  for (const x of v) web.put(x.name, new URL(x.instructions.url).pathname, x.instructions.file_content)
}

describe("an external CA's order follows its certificate's schedule", () => {
  let dnsOrder: number
  let httpOrder: number

  it('shows next_reissue_at inside the certificate the CA issued, not the local 200-day schedule', async () => {
    const d = await configure('sched-dns.test', 'dns')
    dnsOrder = d.id
    await customerDns.setCname(d.v[0].instructions.record_name, d.v[0].instructions.record_value)
    expect((await get(`/ssl/${dnsOrder}`)).body.status).toBe('completed')
    const h = await configure('sched-http.test', 'http')
    httpOrder = h.id
    publishHttp(h.v)
    expect((await get(`/ssl/${httpOrder}`)).body.status).toBe('completed')
    for (const id of [dnsOrder, httpOrder]) {
      const cert = (await get(`/certificate/${id}`)).body.certificate as Body
      const w = s.service.acmeIssuer.windows.view(id)
      expect(cert.next_reissue_at, JSON.stringify({ cert, w })).toBe(w?.renew_at.slice(0, 10))
      // 14 days before the 30-day certificate ends, well before it expires.
      expect(Date.parse(cert.valid_till as string) - Date.parse(cert.next_reissue_at as string)).toBe(14 * DAY)
      expect(((await get(`/orders/${id}`)).body.order as Body).next_reissue_at).toBe(cert.next_reissue_at)
    }
  })

  it("renews at the chosen moment: delegated DNS with no one, http-01 waiting for the CA's own file", async () => {
    const w = s.service.acmeIssuer.windows.view(dnsOrder)
    clock.set(new Date(stamp(w?.renew_at as string) + 3600_000))
    const pass = await s.service.scheduler.run()
    expect(pass.issued.map((i) => i.order_id)).toEqual([dnsOrder])
    expect(pass.errors).toEqual([])
    expect(pass.validation_needed.map((v) => v.order_id)).toEqual([httpOrder])
    const st = await get(`/ssl/${httpOrder}`)
    expect(st.body.status).toBe('validation_pending')
    expect(st.body.status_note).toContain('needs the customer')
    expect(st.body.status_note).toContain('switch the order to dns')
    const v = st.body.validation as Validation[]
    // The CA's http-01 challenge (RFC 8555 §8.3), never CertDesk's pki-validation file.
    expect(v[0].instructions.url).toMatch(
      /^http:\/\/sched-http\.test\/\.well-known\/acme-challenge\/[A-Za-z0-9_-]{43}$/
    )
    expect(JSON.stringify(st.body)).not.toContain('pki-validation')
  })

  it('issues the waiting renewal once the customer puts the file up', async () => {
    publishHttp((await get(`/ssl/${httpOrder}`)).body.validation as Validation[])
    const done = await get(`/ssl/${httpOrder}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    expect(done.body.reissue_count).toBe(1)
    expect(done.body.status_note).toBeNull()
  })

  it('never runs the local reissue path when the day the local schedule would have named comes', async () => {
    // About 186 days after issue: the day a 200-day local certificate would be reissued, when the
    // validation CertDesk itself recorded is past its reuse period (BR §4.2.1).
    clock.set(new Date(clock.now().getTime() + 186 * DAY))
    const pass = await s.service.scheduler.run()
    const why = JSON.stringify(pass)
    expect(
      pass.issued.map((i) => i.order_id),
      why
    ).toContain(dnsOrder)
    expect(
      pass.validation_needed.filter((v) => v.order_id === dnsOrder),
      why
    ).toEqual([])
    expect(
      pass.errors.filter((e) => e.order_id === dnsOrder),
      why
    ).toEqual([])
    const st = await get(`/ssl/${dnsOrder}`)
    expect(st.body.status).toBe('completed')
    expect(st.body.status_note).toBeNull()
  })

  it('renews nothing at a chosen moment while the clock is behind the newest certificate', async () => {
    const newest = s.service.ctx.db.prepare('SELECT MAX(created_at) FROM certificates').pluck().get() as string
    // The clock stepped back two hours (BR §6.3.2: the validity cap depends on the issue date).
    clock.set(new Date(stamp(newest) - 2 * 3600_000))
    s.service.ctx.db
      .prepare('UPDATE ari_windows SET renew_at = ? WHERE order_id = ?')
      .run(new Date(clock.now().getTime() - 3600_000).toISOString().slice(0, 19).replace('T', ' '), dnsOrder)
    const pass = await s.service.scheduler.run()
    expect(pass.issued).toEqual([])
    expect(pass.errors.find((e) => e.order_id === dnsOrder)?.error).toContain('is behind the newest certificate')
  })
})
