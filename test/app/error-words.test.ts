/**
 * One refusal, two audiences: configuring an order on invoice before it is paid is refused by
 * the core once; the reseller API names the route a script calls next (POST /credits), the
 * desktop bridge names the button a person presses instead, and both keep the rest of the
 * sentence. Real HTTP on loopback over a real store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { inScreenWords } from '../../src-main/app/error-words'
import { opensslCsr } from '../support/csr'
import { startServer, type TestServer } from '../support/server'

let s: TestServer
beforeAll(async () => {
  s = await startServer()
})
afterAll(() => s.close())

describe('an unpaid order configured too early', () => {
  it('tells a script the route and a person the button', async () => {
    const r = await s.reseller({ credit: 0 })
    const order = (
      await s.service.orders.create(
        await s.service.resellers.get(r.id),
        { productId: 2, domain: 'early.example.test' },
        'invoice'
      )
    ).order
    const csr = opensslCsr(['early.example.test'])
    const api = await s.request<{ success: boolean; error: string }>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: order.id, csr, dcv_method: 'http' }
    })
    expect(api.status).toBe(409)
    expect(api.body.error).toMatch(/pay it first \(POST \/credits\)$/)

    const handlers = createHandlers(s.service, {
      transport: 'browser',
      listenerUrl: () => 'http://127.0.0.1:1',
      apiVersion: '3.0'
    })
    const app = await callHandler(handlers, 'configureOrder', [r.id, { orderId: order.id, csr, dcvMethod: 'http' }])
    expect(app.status).toBe(409)
    expect(app.body).toEqual({
      success: false,
      error: api.body.error.replace(' (POST /credits)', ' with "Pay from credit" on the order page')
    })
    expect((await s.service.orders.get(r.id, order.id)).status).toBe('pending')
  })

  it('drops a route it has no words for, and leaves other text alone', () => {
    expect(inScreenWords('could not do it: try again later (GET /orders/42/acme)')).toBe(
      'could not do it: try again later'
    )
    expect(inScreenWords('order ORD-2026-000042 has no CSR yet; POST /ssl/configure first')).toBe(
      'order ORD-2026-000042 has no CSR yet; submit a CSR on the order page first'
    )
    const plain = 'could not save the HTTP validation port: it must be a port number (1 to 65535)'
    expect(inScreenWords(plain)).toBe(plain)
  })
})
