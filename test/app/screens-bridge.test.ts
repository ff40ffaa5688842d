/**
 * The bridge methods behind the event log, the ACME subscription page, the invoice page and the
 * validation cancel, called the way both transports call them (`callHandler`): each keeps to the
 * acting reseller's own records, refuses bad filters with a 400 and changes nothing then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { API_VERSION } from '../../src-main/http/server'
import type { AppMethod } from '../../src-preload/contract'
import { opensslCsr } from '../support/csr'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let app: AppHandlers
let a: TestReseller
let b: TestReseller

beforeAll(async () => {
  s = await startServer()
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
  a = await s.reseller({ credit: 500, name: 'Reseller A' })
  b = await s.reseller({ credit: 500, name: 'Reseller B' })
})
afterAll(async () => {
  await s.close()
})

const call = (method: AppMethod, ...args: unknown[]) => callHandler(app, method, args)

async function order(r: TestReseller, domain: string, productId = 2): Promise<number> {
  const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: productId, domain } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.order_id as number
}

async function configure(r: TestReseller, orderId: number, domain: string): Promise<void> {
  const res = await s.request<Body>('POST', '/ssl/configure', {
    key: r.key,
    body: { order_id: orderId, csr: opensslCsr([domain]), dcv_method: 'http' }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

describe('cancelValidation', () => {
  it('returns a waiting order to pending without its CSR, and it can take another CSR or be cancelled', async () => {
    const id = await order(a, 'cancel-me.example.test')
    await configure(a, id, 'cancel-me.example.test')
    const r = await call('cancelValidation', a.id, id)
    expect(r.status).toBe(200)
    const ssl = (r.body as { result: { order: Body; validation: unknown[]; names: unknown[] } }).result
    expect(ssl.order.status).toBe('pending')
    expect(ssl.order.statusNote).toMatch(/^validation cancelled on \d{4}-\d{2}-\d{2}: waiting for a CSR$/)
    expect(ssl.validation).toEqual([])
    expect(ssl.names).toEqual([])
    // The old validation file validates nothing any more; a new CSR starts a new validation.
    await configure(a, id, 'cancel-me.example.test')
    expect((await call('cancelValidation', a.id, id)).status).toBe(200)
    // Pending again, so the API cancels it with its refund.
    const cancelled = await s.request<Body>('PUT', `/orders/${id}`, { key: a.key, body: { action: 'cancel' } })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
  })

  it("refuses an order that is not waiting for validation, and another reseller's order, changing nothing", async () => {
    const id = await order(a, 'not-waiting.example.test')
    const pending = await call('cancelValidation', a.id, id)
    expect(pending.status).toBe(409)
    expect(pending.body).toEqual({
      success: false,
      error: expect.stringMatching(
        /^could not cancel the validation of order ORD-\d{4}-\d{6}: it is pending, not validation_pending$/
      )
    })
    await configure(a, id, 'not-waiting.example.test')
    const other = await call('cancelValidation', b.id, id)
    expect(other.status).toBe(404)
    const status = await s.request<Body>('GET', `/ssl/${id}`, { key: a.key })
    expect(JSON.stringify(status.body)).toContain('validation_pending')
  })
})

describe('listEvents', () => {
  it("lists the reseller's own events, newest first, and an order's own", async () => {
    const first = await order(a, 'events-one.example.test')
    const second = await order(a, 'events-two.example.test')
    const all = (await app.listEvents(a.id, {}, { limit: 100, offset: 0 })).items
    expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort((x, y) => y - x))
    expect(all.some((e) => e.orderId === second)).toBe(true)
    const own = await app.listEvents(a.id, { orderId: first }, { limit: 100, offset: 0 })
    expect(own.items.length).toBeGreaterThan(0)
    expect(own.items.every((e) => e.orderId === first)).toBe(true)
    const created = await app.listEvents(a.id, { type: 'order.created' }, { limit: 100, offset: 0 })
    expect(created.items.every((e) => e.type === 'order.created')).toBe(true)
    expect((await app.listEvents(b.id, {}, { limit: 100, offset: 0 })).items.some((e) => e.orderId === first)).toBe(
      false
    )
  })

  it('refuses hostile filters with a 400 or a 404 in the envelope', async () => {
    const theirs = await order(b, 'events-theirs.example.test')
    expect(await call('listEvents', a.id, { orderId: theirs }, {})).toMatchObject({ status: 404 })
    for (const filter of [
      { type: 'order.created; DROP TABLE events' },
      { type: '../../etc/passwd' },
      { since: '2026-02-30' },
      { since: "2026-01-01' OR 1=1 --" },
      { since: '1e9' },
      { orderId: -1 },
      { orderId: 1.5 },
      { orderId: '1' }
    ]) {
      const r = await call('listEvents', a.id, filter, {})
      expect(r.status, JSON.stringify(filter)).toBe(400)
      expect(r.body).toMatchObject({ success: false, error: expect.any(String) })
    }
  })
})

describe('acmeSubscription and getInvoice', () => {
  it('answer null for an order that is no subscription, and 404 for another reseller', async () => {
    const plain = await order(a, 'plain.example.test')
    expect(await app.acmeSubscription(a.id, plain)).toBeNull()
    const sub = await order(a, 'sub.example.test', 12)
    const page = await app.acmeSubscription(a.id, sub)
    expect(page?.subscription.orderId).toBe(sub)
    expect(page?.certificates).toEqual([])
    expect(JSON.stringify(page)).not.toMatch(/eab_hmac_key|eabHmacKey/)
    expect((await call('acmeSubscription', b.id, sub)).status).toBe(404)
  })

  it('reads an invoice of the reseller only', async () => {
    const id = await order(a, 'invoice-page.example.test')
    const inv = (await app.listInvoices(a.id, {}, { limit: 100, offset: 0 })).items.find((i) => i.orderId === id)
    expect(inv).toBeDefined()
    expect((await app.getInvoice(a.id, inv!.id)).invoiceNumber).toBe(inv!.invoiceNumber)
    expect((await call('getInvoice', b.id, inv!.id)).status).toBe(404)
    expect((await call('getInvoice', a.id, 'abc')).status).toBe(400)
  })
})
