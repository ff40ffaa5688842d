import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certdesk, cliTopUp } from '../support/cli'
import { TEST_ENGINE, writeByHand } from '../support/engine'
import { startServer, type TestReseller, type TestServer } from '../support/server'

// A cached answer is dropped by exactly the writes that can change it (migration 0009): a
// reseller's own rows move its lists, balance and account; the catalogue moves products and
// prices. Another reseller's order changes neither. Whoever writes (this server, the admin CLI
// in another process, a repair by hand), the next read shows the write.
type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

/** GET `path` as `r`, and whether the read cache answered it (its hit counter moved by one). */
async function read(r: TestReseller, path: string): Promise<{ body: Body; cached: boolean; text: string }> {
  const before = s.app.readCache.hits
  const res = await fetch(s.url + path, { headers: { 'x-api-key': r.key } })
  const text = await res.text()
  expect(res.status, `GET ${path}: ${text}`).toBe(200)
  return { body: JSON.parse(text) as Body, cached: s.app.readCache.hits === before + 1, text }
}

const order = async (r: TestReseller, domain: string): Promise<number> => {
  const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
  expect(res.status).toBe(200)
  return res.body.order_id as number
}

const READS = [
  '/orders?limit=50',
  '/orders?limit=50&offset=50',
  '/invoices',
  '/credits',
  '/balance',
  '/account',
  '/stats',
  '/products'
]

/** Plain SQL from another process, knowing nothing of CertDesk (test/support/engine.ts). */
const byHand = (sql: string): void => writeByHand(s.dataDir, sql)

describe('a write leaves the answers it cannot change cached', () => {
  it("keeps reseller B's lists, balance, account and statistics, and the catalogue, while A places orders", async () => {
    const a = await s.reseller({ credit: 500 })
    const b = await s.reseller({ credit: 500 })
    await order(b, 'b-first.example.com')
    const kept: Record<string, string> = {}
    for (const path of READS) {
      await read(b, path)
      const again = await read(b, path)
      expect(again.cached, `B's second GET ${path}`).toBe(true)
      kept[path] = again.text
    }

    await order(a, 'a-first.example.com')
    await order(a, 'a-second.example.com')

    for (const path of READS) {
      const after = await read(b, path)
      expect(after.cached, `B's GET ${path} after A's orders`).toBe(true)
      expect(after.text).toBe(kept[path])
    }
    // A's own list is built anew and shows both orders.
    const own = await read(a, '/orders?limit=50')
    expect(own.cached).toBe(false)
    expect((own.body.pagination as Body).total).toBe(2)
  })

  it('shares one catalogue answer between the resellers of a group', async () => {
    const a = await s.reseller({ credit: 10 })
    const b = await s.reseller({ credit: 10 })
    const first = await read(a, '/products?brand=Sectigo')
    const second = await read(b, '/products?brand=Sectigo')
    expect(first.cached).toBe(false)
    expect(second.cached).toBe(true)
    expect(second.text).toBe(first.text)
    // Another group's answer is its own.
    const gold = await s.reseller({ credit: 10, groupId: 2 })
    expect((await read(gold, '/products?brand=Sectigo')).cached).toBe(false)
  })
})

describe('no cached answer survives a write that changes it', () => {
  it("shows the caller's own order, cancel and refund in every list, balance, account and statistics", async () => {
    const a = await s.reseller({ credit: 500 })
    const id = await order(a, 'first.example.com')
    const before: Record<string, Body> = {}
    for (const path of READS) {
      await read(a, path)
      const again = await read(a, path)
      expect(again.cached, `second GET ${path}`).toBe(true)
      before[path] = again.body
    }

    const second = await order(a, 'second.example.com')
    // Rebuilt, or moved forward by the write itself (read-cache-moved.test.ts): either way it shows it.
    const orders = await read(a, '/orders?limit=50')
    expect((orders.body.orders as Body[]).map((o) => o.id)).toEqual([second, id])
    expect(((await read(a, '/invoices')).body.pagination as Body).total).toBe(2)
    const credits = (await read(a, '/credits')).body
    expect((credits.pagination as Body).total).toBe(((before['/credits'].pagination as Body).total as number) + 1)
    const paid = (before['/balance'].balance as number) - (credits.balance as number)
    expect(paid).toBeGreaterThan(0)
    expect((await read(a, '/balance')).body.balance).toBe(credits.balance)
    expect(((await read(a, '/account')).body.reseller as Body).credit_balance).toBe(credits.balance)
    const stats = (await read(a, '/stats')).body.stats as Body
    expect(stats).toMatchObject({ total_orders: 2, credit_balance: credits.balance })

    expect((await s.request('PUT', `/orders/${second}`, { key: a.key, body: { action: 'cancel' } })).status).toBe(200)
    const cancelled = (await read(a, '/orders?limit=50')).body.orders as Body[]
    expect(cancelled[0]).toMatchObject({
      id: second,
      status: 'cancelled',
      payment_status: 'refunded',
      invoice_status: 'cancelled'
    })
    expect(((await read(a, '/invoices')).body.invoices as Body[])[0]).toMatchObject({ status: 'cancelled' })
    expect((await read(a, '/balance')).body.balance).toBe(before['/balance'].balance)
    expect(((await read(a, '/stats')).body.charts as Body).status_distribution).toMatchObject({ cancelled: 1 })
  })

  it('shows what the admin CLI changed in another process: credit, group, prices', async () => {
    const a = await s.reseller({ credit: 500 })
    await order(a, 'cli.example.com')
    for (const path of ['/balance', '/credits', '/account', '/stats', '/products']) {
      await read(a, path)
      expect((await read(a, path)).cached).toBe(true)
    }
    const balance = (await read(a, '/balance')).body.balance as number

    const topUp = cliTopUp(s.dataDir, a.id, 25)
    expect(topUp.code, topUp.stderr).toBe(0)
    expect((await read(a, '/balance')).body.balance).toBe(balance + 25)
    const credits = (await read(a, '/credits')).body
    expect(credits.balance).toBe(balance + 25)
    expect(((credits.transactions as Body[])[0] as Body).amount).toBe(25)
    expect(((await read(a, '/account')).body.reseller as Body).credit_balance).toBe(balance + 25)
    expect(((await read(a, '/stats')).body.stats as Body).credit_balance).toBe(balance + 25)

    const standard = await read(a, '/products')
    const moved = certdesk([
      'admin',
      '--data-dir',
      s.dataDir,
      'reseller',
      'set-group',
      '--reseller',
      String(a.id),
      '--group',
      '2'
    ])
    expect(moved.code, moved.stderr).toBe(0)
    const gold = await read(a, '/products')
    expect(gold.body.group_id).toBe(2)
    expect(gold.body.products).not.toEqual(standard.body.products)
    expect(((await read(a, '/account')).body.reseller as Body).group_id).toBe(2)
  })

  it('shows an order, its invoice and a product name changed by hand in another process', async () => {
    const a = await s.reseller({ credit: 500 })
    const id = await order(a, 'by-hand.example.com')
    for (const path of ['/orders?limit=50', '/invoices', '/products', '/stats']) await read(a, path)

    byHand(`UPDATE orders SET status = 'completed' WHERE id = ${id}`)
    const completed = await read(a, '/orders?limit=50')
    expect(completed.cached).toBe(false)
    expect((completed.body.orders as Body[])[0]).toMatchObject({ id, status: 'completed' })
    expect(((await read(a, '/stats')).body.charts as Body).status_distribution).toMatchObject({
      completed: 1,
      pending: 0
    })

    byHand(`UPDATE invoices SET status = 'sent' WHERE order_id = ${id}`)
    expect(((await read(a, '/orders?limit=50')).body.orders as Body[])[0]).toMatchObject({ invoice_status: 'sent' })
    expect(((await read(a, '/invoices')).body.invoices as Body[])[0]).toMatchObject({ status: 'sent' })

    const name = 'Renamed By Hand SSL'
    byHand(`UPDATE products SET name = '${name}' WHERE id = 2`)
    expect(((await read(a, '/orders?limit=50')).body.orders as Body[])[0]).toMatchObject({ product: name })
    expect(((await read(a, '/invoices')).body.invoices as Body[])[0]).toMatchObject({ product: name })
    expect(((await read(a, '/products')).body.products as Body[]).find((p) => p.id === 2)).toMatchObject({ name })
  })

  it('never shows a deleted order under its id when the id is used again', async () => {
    const a = await s.reseller({ credit: 500 })
    await order(a, 'kept.example.com')
    const id = ((await s.service.ctx.store.get('SELECT MAX(id) AS n FROM orders')) as { n: number }).n + 1
    // Rows written by hand, without an invoice: only the order's own row names it.
    const insert = (domain: string): string =>
      `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents,
         san_total_cents, discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date,
         created_at, updated_at)
       VALUES (${id}, 'ORD-HAND-${domain}', ${a.id}, 2, '${domain}', 12, 0, 0, 0, 0, 'pending', 'paid', 1, '2027-11-21',
         '2026-11-21 10:00:00', '2026-11-21 10:00:00');`
    // PostgreSQL hands out ids from a sequence: a repair that writes ids itself moves it on.
    const moveIds =
      TEST_ENGINE === 'postgres'
        ? "SELECT setval(pg_get_serial_sequence('orders', 'id'), (SELECT MAX(id) FROM orders));"
        : ''
    byHand(insert('deleted.example.com') + moveIds)
    expect(((await read(a, '/orders?limit=50')).body.orders as Body[])[0]).toMatchObject({
      id,
      domain: 'deleted.example.com'
    })
    byHand(`DELETE FROM orders WHERE id = ${id}; ${insert('reborn.example.com')} ${moveIds}`)
    const page = (await read(a, '/orders?limit=50')).body.orders as Body[]
    expect(page[0]).toMatchObject({ id, domain: 'reborn.example.com' })
    expect(page.map((o) => o.domain)).not.toContain('deleted.example.com')
  })
})

describe('GET /orders answered from kept orders', () => {
  it('sends each order exactly as GET /orders/:id does, as compact JSON', async () => {
    const a = await s.reseller({ credit: 500 })
    const domains = ['one.example.com', 'two.example.com', 'three.example.com']
    for (const domain of domains) await order(a, domain)
    // Built twice: once from rows, once from kept orders after another order shifted the page.
    for (const next of ['four.example.com', 'five.example.com']) {
      await order(a, next)
      domains.push(next)
      const page = await read(a, '/orders?limit=3&offset=1')
      expect(page.text).toBe(JSON.stringify(page.body))
      const orders = page.body.orders as Body[]
      expect(orders).toHaveLength(3)
      for (const o of orders) {
        const detail = await s.request<{ order: Body }>('GET', `/orders/${o.id as number}`, { key: a.key })
        expect(o).toEqual(detail.body.order)
      }
      expect(orders.map((o) => o.domain)).toEqual(domains.slice(-4, -1).reverse())
      expect(page.body.pagination).toEqual({ total: domains.length, limit: 3, offset: 1 })
    }
  })
})
