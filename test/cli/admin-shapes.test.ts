/**
 * `certdesk admin` prints the records the reseller API also shows in the API's own shape: a
 * script that reads a reseller, a credit transaction, a product or an event from one can read
 * it from the other. The admin adds only what the desktop user alone may see (a reseller's
 * status, the reseller an event belongs to); a product without a reseller has no reseller price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certdesk } from '../support/cli'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let api: TestServer
const admin = (...args: string[]) => certdesk(['admin', '--data-dir', api.dataDir, ...args])

beforeAll(async () => {
  api = await startServer()
})
afterAll(async () => {
  await api?.close()
})

describe('certdesk admin output', () => {
  it('shows a reseller, its transactions, the products and the events as the API does', async () => {
    const added = admin(
      'reseller',
      'add',
      '--name',
      'Contoso Hosting',
      '--email',
      'ops@contoso.test',
      '--group',
      '2',
      '--discount',
      '5'
    )
    expect(added.code, added.stderr).toBe(0)
    const id = (added.json.reseller as Body).id as number
    const credit = admin('credit', 'add', '--reseller', String(id), '--amount', '400', '--description', 'Wire 2026-12')
    expect(credit.code, credit.stderr).toBe(0)
    const key = admin('apikey', 'create', '--reseller', String(id)).json.api_key as string
    const ordered = await api.request<Body>('POST', '/orders', {
      key,
      body: { product_id: 2, domain: 'shapes.example.com' }
    })
    expect(ordered.status).toBe(200)
    const orderId = ordered.body.order_id as number

    // The reseller: GET /account's object (group name, order statistics) plus its status.
    const account = (await api.request<{ reseller: Body }>('GET', '/account', { key })).body.reseller
    expect(account.stats).toEqual({ order_count: 1, total_revenue: expect.any(Number) })
    const listed = (admin('reseller', 'list').json.resellers as Body[]).find((r) => r.id === id)
    expect(listed).toEqual({ ...account, status: 'active' })
    const regrouped = admin('reseller', 'set-group', '--reseller', String(id), '--group', 'none').json.reseller as Body
    expect(regrouped).toMatchObject({ group_id: null, group_name: null, stats: account.stats })

    // A credit transaction: as GET /credits lists it.
    const credits = (await api.request<{ transactions: Body[] }>('GET', '/credits', { key })).body.transactions
    const topUp = credit.json.transaction as Body
    expect(credits.find((t) => t.id === topUp.id)).toEqual(topUp)
    expect(topUp).toMatchObject({ amount: 400, type: 'credit', description: 'Wire 2026-12', order_id: null })

    // A product: GET /products' fields but the reseller's own prices.
    admin('reseller', 'set-group', '--reseller', String(id), '--group', '2')
    const products = (await api.request<{ products: Body[] }>('GET', '/products?include=acme', { key })).body.products
    const catalogue = admin('product', 'list').json.products as Body[]
    expect(products.length).toBeGreaterThan(0)
    for (const p of products) {
      const { reseller_price: _price, pricing: _pricing, ...shared } = p
      expect(catalogue.find((c) => c.id === p.id)).toEqual(shared)
    }

    // The order's events: GET /events' objects plus the reseller they belong to.
    const events = (await api.request<{ events: Body[] }>('GET', `/events?order_id=${orderId}`, { key })).body.events
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['order.created']))
    const log = admin('events', 'list', '--order', String(orderId)).json.events as Body[]
    expect(log).toEqual(events.map((e) => ({ ...e, reseller_id: id })))
  })
})
