import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certdesk } from '../support/cli'
import { writeByHand } from '../support/engine'
import { startServer, type TestServer } from '../support/server'

// The catalogue is served from memory (migration 0003). A price changed by any writer, another
// process included, must show on the very next request.
type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

const priceOf = async (key: string, id: number): Promise<number> => {
  const res = await s.request<{ products: Body[] }>('GET', '/products', { key })
  return (res.body.products.find((p) => p.id === id)?.pricing as Record<string, number>)['1']
}

describe('catalogue served from memory', () => {
  it('shows a price changed by another connection at once, in the list, the detail and the order', async () => {
    const r = await s.reseller({ credit: 1000 })
    const before = await priceOf(r.key, 2)
    expect(before).toBeGreaterThan(0)
    // Another process writes the store, the way an admin tool would.
    writeByHand(
      s.dataDir,
      'UPDATE product_prices SET price_cents = 4321 WHERE product_id = 2 AND group_id = 1 AND years = 1'
    )
    expect(await priceOf(r.key, 2)).toBe(43.21)
    const detail = await s.request<{ product: Body }>('GET', '/products/2', { key: r.key })
    expect((detail.body.product.pricing as Record<string, number>)['1']).toBe(43.21)
    const order = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'cache.example.com' }
    })
    expect(order.body).toMatchObject({ base_price: 43.21, total: 43.21 })
  })

  it('follows a group change made with the admin CLI', async () => {
    const r = await s.reseller({ credit: 100 })
    const standard = await s.request<Body>('GET', '/products', { key: r.key })
    expect(standard.body.group_id).toBe(1)
    const out = certdesk([
      'admin',
      '--data-dir',
      s.dataDir,
      'reseller',
      'set-group',
      '--reseller',
      String(r.id),
      '--group',
      '2'
    ])
    expect(out.code).toBe(0)
    const gold = await s.request<{ products: Body[]; group_id: number }>('GET', '/products', { key: r.key })
    expect(gold.body.group_id).toBe(2)
    expect(gold.body.products).not.toEqual(standard.body.products)
  })
})
