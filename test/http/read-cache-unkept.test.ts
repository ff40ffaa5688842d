import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliTopUp } from '../support/cli'
import { TEST_ENGINE, writeByHand } from '../support/engine'
import { startServer, type TestReseller, type TestServer } from '../support/server'

// Kept answers are checked against numbers that triggers move inside every writer's own
// transaction (migrations 0003 and 0009). Another process's write moves exactly the numbers of
// what it touched; a process that dropped those triggers writes without moving any, so while
// one is missing nothing may be answered from a copy. This file owns its store: it drops
// triggers, which no other test's server may see.
type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

async function read(r: TestReseller, path: string): Promise<{ body: Body; cached: boolean }> {
  const before = s.app.readCache.hits
  const res = await fetch(s.url + path, { headers: { 'x-api-key': r.key } })
  const text = await res.text()
  expect(res.status, `GET ${path}: ${text}`).toBe(200)
  return { body: JSON.parse(text) as Body, cached: s.app.readCache.hits === before + 1 }
}

/** Plain SQL from another process, knowing nothing of CertDesk (test/support/engine.ts). */
const byHand = (sql: string): void => writeByHand(s.dataDir, sql)
/** DROP TRIGGER as each engine writes it (PostgreSQL names the table). */
const dropTrigger = (name: string, table: string): string =>
  TEST_ENGINE === 'postgres' ? `DROP TRIGGER ${name} ON ${table}` : `DROP TRIGGER ${name}`

const placeOrder = async (r: TestReseller, domain: string): Promise<number> => {
  const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.order_id as number
}

const READS = ['/orders?limit=50', '/invoices', '/credits', '/balance', '/account', '/stats', '/products']

describe('a write from the admin CLI drops what it touched and nothing else', () => {
  it("moves the reseller it credited, and leaves another reseller's answers kept", async () => {
    const a = await s.reseller({ credit: 100 })
    const b = await s.reseller({ credit: 100 })
    await placeOrder(a, 'a.example.com')
    await placeOrder(b, 'b.example.com')
    for (const r of [a, b])
      for (const path of READS) {
        await read(r, path)
        expect((await read(r, path)).cached, `second GET ${path}`).toBe(true)
      }
    const balance = (await read(b, '/balance')).body.balance as number

    const topUp = cliTopUp(s.dataDir, b.id, 7)
    expect(topUp.code, topUp.stderr).toBe(0)

    // A's answers did not change, so they are still the kept ones.
    for (const path of READS) expect((await read(a, path)).cached, `A: GET ${path}`).toBe(true)
    // B's did: each is read anew and shows the top-up.
    const fresh = await read(b, '/balance')
    expect(fresh.cached).toBe(false)
    expect(fresh.body.balance).toBe(balance + 7)
    expect(((await read(b, '/credits')).body.transactions as Body[])[0]).toMatchObject({ amount: 7 })
    expect(((await read(b, '/stats')).body.stats as Body).credit_balance).toBe(balance + 7)
    // The catalogue is shared by both and was not touched.
    expect((await read(b, '/products')).cached).toBe(true)
  })
})

describe('a write that cannot be traced to what it changed', () => {
  it('is never hidden: with a version trigger dropped, every read is answered anew until it is back', async () => {
    const a = await s.reseller({ credit: 100 })
    const id = await placeOrder(a, 'untraced.example.com')
    for (const path of READS) await read(a, path)
    expect((await read(a, '/orders?limit=50')).cached).toBe(true)

    // Another process drops the triggers that would report its writes, then writes.
    byHand(
      `${dropTrigger('cache_gen_orders_update', 'orders')}; ${dropTrigger('order_versions_orders_update', 'orders')}`
    )
    await read(a, '/orders?limit=50')
    byHand(`UPDATE orders SET status = 'completed' WHERE id = ${id}`)
    const page = await read(a, '/orders?limit=50')
    expect(page.cached).toBe(false)
    expect((page.body.orders as Body[])[0]).toMatchObject({ id, status: 'completed' })

    byHand(`UPDATE orders SET status = 'processing' WHERE id = ${id}`)
    expect(((await read(a, '/orders?limit=50')).body.orders as Body[])[0]).toMatchObject({ status: 'processing' })
    expect(((await read(a, `/orders?limit=50`)).body.orders as Body[])[0]).toMatchObject({ status: 'processing' })
    // A price written by hand with the catalogue's version triggers gone shows at once too.
    byHand(
      `${dropTrigger('catalogue_version_prices_update', 'product_prices')}; ${dropTrigger('cache_gen_prices_update', 'product_prices')}; ` +
        'UPDATE product_prices SET price_cents = 1234 WHERE product_id = 2 AND group_id = 1 AND years = 1'
    )
    const products = await read(a, '/products')
    expect(products.cached).toBe(false)
    const pricing = (products.body.products as Body[]).find((p) => p.id === 2)?.pricing as Record<string, number>
    expect(pricing['1']).toBe(12.34)
    const order = await s.request<Body>('POST', '/orders', {
      key: a.key,
      body: { product_id: 2, domain: 'priced-by-hand.example.com' }
    })
    expect(order.body).toMatchObject({ base_price: 12.34 })
    for (const path of READS) expect((await read(a, path)).cached, `GET ${path} twice`).toBe(false)
  })
})
