/**
 * The CSR policy holds at signing too, not only when a CSR is submitted: a reissue with the
 * stored CSR (POST /ssl/reissue without `csr`) and the automatic reissue check the stored
 * request again, so a CSR kept from before the policy (here written straight into the store, as
 * an older version could have left it) is never signed with a 1024-bit key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { manualClock } from '../support/clock'
import { opensslCsr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>

const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let dns: DnsServer
let r: TestReseller

beforeAll(async () => {
  ;[s, dns] = await Promise.all([startServer({ clock: clock.clock }), startDns()])
  // dns validation: the check reads a record and connects to nothing.
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  r = await s.reseller({ credit: 1000 })
})
afterAll(async () => {
  await Promise.all([s?.close(), dns?.close()])
})

const certificates = async (orderId: number): Promise<number> =>
  (
    (await s.service.ctx.store.get('SELECT COUNT(*) AS n FROM certificates WHERE order_id = ?', orderId)) as {
      n: number
    }
  ).n

describe('a stored CSR below the policy', () => {
  it('is refused by a reissue with the stored CSR and by the automatic reissue; nothing is signed', async () => {
    const domain = 'stored.example.com'
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain, period: 24 }
    })
    const id = created.body.order_id as number
    const conf = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr: opensslCsr([domain]), dcv_method: 'dns' }
    })
    expect(conf.status).toBe(200)
    const i = (conf.body.validation as { instructions: Record<string, string> }[])[0].instructions
    await dns.setCname(i.record_name, i.record_value)
    expect((await s.request<Body>('GET', `/ssl/${id}`, { key: r.key })).body.status).toBe('completed')
    expect(await certificates(id)).toBe(1)

    await s.service.ctx.store.run(
      'UPDATE certificate_requests SET csr_pem = ? WHERE order_id = ?',
      opensslCsr([domain], 'rsa:1024'),
      id
    )
    const reason = 'could not accept CSR: its RSA key has 1024 bits; at least 2048 are required'

    const reissue = await s.request<Body>('POST', '/ssl/reissue', { key: r.key, body: { order_id: id } })
    expect(reissue.status).toBe(400)
    expect(reissue.body).toEqual({ success: false, error: reason })

    await expect(s.service.certificates.autoReissue(id)).rejects.toThrow(reason)
    const order = await s.request<Body>('GET', `/orders/${id}`, { key: r.key })
    expect((order.body.order as Body).status_note).toBe(`could not issue certificate: ${reason}`)
    expect(await certificates(id)).toBe(1)
  })
})
