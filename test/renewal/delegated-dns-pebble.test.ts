/**
 * Delegated DNS validation and the 14-day rule with Debian's Pebble as the external CA (it has
 * no renewalInfo). The customer sets `_acme-challenge.<name> CNAME <label>.<zone>` once in their
 * DNS (pebble-challtestsrv); Pebble's lookups reach CertDesk's responder through a stand-in
 * recursive resolver (test/support/dns-recursor.ts). Every dns-01 value, at issuance and at the
 * renewal, lives only in CertDesk: nothing is written to the customer's DNS after the CNAME.
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

const ZONE = 'acme.reseller.test'
/** A 47-day-era lifetime: the 14-day rule must be measured from the certificate itself. */
const PEBBLE_DAYS = 30

let ca: DelegatedCa
let clock: ManualClock
let s: TestServer
let customerDns: DnsServer
let recursor: Recursor
let reseller: TestReseller
const txtWrites: string[] = []

beforeAll(async () => {
  ca = await startDelegatedCa({ zone: ZONE, validityDays: PEBBLE_DAYS })
  ;({ clock, s, customerDns, recursor } = ca)
  // Any TXT written to the customer's DNS would show here; the test writes only CNAMEs.
  const setTxt = customerDns.setTxt.bind(customerDns)
  customerDns.setTxt = (host, value) => {
    txtWrites.push(host)
    return setTxt(host, value)
  }
  reseller = s.reseller({ credit: 1000 })
})

afterAll(async () => {
  await ca?.close()
})

const post = (path: string, body: Body) => s.request<Body>('POST', path, { key: reseller.key, body })
const get = (path: string) => s.request<Body>('GET', path, { key: reseller.key })

describe('delegated dns-01 with Pebble', () => {
  let orderId: number
  const names = ['shop.deleg.test', 'www.shop.deleg.test']

  it('shows each name its CNAME, says whether it is in place, and issues once it is', async () => {
    const created = await post('/orders', { product_id: 2, domain: names[0] })
    orderId = created.body.order_id as number
    const conf = await post('/ssl/configure', {
      order_id: orderId,
      csr: opensslCsr(names, 'ec:P-256'),
      dcv_method: 'dns'
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    const v = conf.body.validation as Validation[]
    const status = await s.service.acmeIssuer.delegation.status(reseller.id, names)
    for (const [i, x] of v.entries()) {
      expect(x.instructions.record_name).toBe(`_acme-challenge.${x.name}`)
      expect(x.instructions.record_type).toBe('CNAME')
      expect(x.instructions.record_value).toMatch(new RegExp(`^d[0-9a-f]{24}\\.${ZONE.replace(/\./g, '\\.')}$`))
      expect(status[i]).toMatchObject({ domain: x.name, in_place: false })
    }
    // Without the CNAME CertDesk does not ask Pebble (the challenge is not spent).
    const early = await get(`/ssl/${orderId}`)
    expect(early.body.status).toBe('validation_pending')
    expect((early.body.validation as Validation[])[0].detail).toContain('no CNAME')
    // The customer's one-time step.
    for (const x of v) await customerDns.setCname(x.instructions.record_name, x.instructions.record_value)
    expect((await s.service.acmeIssuer.delegation.status(reseller.id, names)).every((d) => d.in_place)).toBe(true)
    const done = await get(`/ssl/${orderId}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    expect(recursor.followed.map((n) => n.toLowerCase())).toEqual(
      expect.arrayContaining(names.map((n) => `_acme-challenge.${n}`))
    )
    // Values leave the zone once the certificate is issued.
    expect(s.service.acmeIssuer.delegation.values(v[0].instructions.record_value.split('.')[0])).toEqual([])
  })

  it('keeps the 14-day rule from the certificate itself, then renews with no customer action', async () => {
    const w = s.service.acmeIssuer.windows.view(orderId)
    expect(w?.source).toBe('default')
    expect(w?.source_detail).toContain('offers no renewal information')
    const cert = s.service.ctx.db
      .prepare('SELECT valid_till FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1')
      .get(orderId) as { valid_till: string }
    const lead = new Date(new Date(`${cert.valid_till.replace(' ', 'T')}Z`).getTime() - 14 * 86_400_000)
    expect(w?.renew_at).toBe(lead.toISOString().slice(0, 19).replace('T', ' '))
    expect(w?.next_check_at).toBeNull()

    clock.set(new Date(lead.getTime() - 86_400_000))
    expect((await s.service.scheduler.run()).issued).toEqual([])
    clock.set(new Date(lead.getTime() + 3600_000))
    const followedBefore = recursor.followed.length
    const pass = await s.service.scheduler.run()
    expect(pass.errors).toEqual([])
    expect(pass.issued.map((i) => i.order_id)).toEqual([orderId])
    expect(recursor.followed.length).toBeGreaterThan(followedBefore)
    expect(txtWrites).toEqual([])
    // The window now belongs to the new certificate. (Pebble dates certificates by the real
    // clock, not the test's, so a further pass here would not be meaningful.)
    const after = s.service.acmeIssuer.windows.view(orderId)
    expect(after?.cert_id).not.toBe(w?.cert_id)
    expect(after?.source).toBe('default')
  })
})
