/**
 * Subscription rules at known dates (manual clock): which names an ACME order may carry, the
 * certificate lifetime of the CA/B Forum roadmap cut at the subscription end, the yearly
 * renewal date, and expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { manualClock } from '../support/clock'
import { startServer, type TestServer } from '../support/server'

const clock = manualClock('2027-03-01T12:00:00Z')
let s: TestServer
beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
})
afterAll(async () => await s.close())

describe('ACME subscription rules', () => {
  it('follows the validity roadmap, cuts at the subscription end, renews yearly and expires', async () => {
    const r = await s.reseller({ credit: 500 })
    const res = await s.request<Record<string, unknown>>('POST', '/orders', {
      key: r.key,
      body: { product_id: 12, domain: 'rules.example.com', period: 24 }
    })
    expect(res.status).toBe(200)
    const sub = await s.service.acme.byId((res.body.acme as { subscription_id: number }).subscription_id)
    expect(sub.beginDate).toBe('2027-03-01')
    expect(sub.endDate).toBe('2029-03-01')
    expect(s.service.acme.nextRenewal(sub)).toBe('2028-03-01')

    // BR §6.3.2 (SC-081): 200 days before 2027-03-15, 100 from then; inclusive, so minus a second.
    const day = 86_400_000
    const w1 = s.service.acme.certificateWindow(sub, clock.now())
    expect((w1.notAfter.getTime() - w1.notBefore.getTime() + 1000) / day).toBe(200)
    clock.set('2027-03-15T00:00:00Z')
    const w2 = s.service.acme.certificateWindow(sub, clock.now())
    expect((w2.notAfter.getTime() - w2.notBefore.getTime() + 1000) / day).toBe(100)
    // Near the end, the certificate stops with the subscription.
    clock.set('2029-02-01T00:00:00Z')
    const w3 = s.service.acme.certificateWindow(sub, clock.now())
    expect(w3.notAfter.toISOString()).toBe('2029-02-28T23:59:59.000Z')
    expect(s.service.acme.nextRenewal(sub)).toBe('2029-03-01')

    expect(s.service.acme.checkOrder(sub, ['RULES.example.com.', 'www.rules.example.com'])).toEqual([
      'rules.example.com',
      'www.rules.example.com'
    ])
    expect(() => s.service.acme.checkOrder(sub, ['*.rules.example.com'])).toThrow(
      '*.rules.example.com is not covered by this subscription (it covers rules.example.com, www.rules.example.com)'
    )

    clock.set('2029-03-01T00:00:00Z')
    const ended = await s.service.acme.byId(sub.id)
    expect(ended.status).toBe('expired')
    expect(() => s.service.acme.checkOrder(ended, ['rules.example.com'])).toThrow(/is expired \(it ended 2029-03-01\)/)
    const shown = await s.request<{ acme: { status: string } }>('GET', `/orders/${res.body.order_id}/acme`, {
      key: r.key
    })
    expect(shown.body.acme.status).toBe('expired')
  })
})
