import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

/** An order the desktop app placed "on invoice": unpaid, with an unpaid invoice. */
const onInvoice = async (resellerId: number, domain: string) =>
  (await s.service.orders.create(await s.service.resellers.get(resellerId), { productId: 2, domain }, 'invoice')).order

describe('invoices', () => {
  it('lists invoices newest first with filters and paging, and shows one', async () => {
    const r = await s.reseller({ credit: 200 })
    for (const d of ['a.example.com', 'b.example.com', 'c.example.com']) {
      await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: d } })
    }
    const unpaid = await onInvoice(r.id, 'd.example.com')
    const list = await s.request<{ invoices: Body[]; pagination: Body }>('GET', '/invoices', { key: r.key })
    expect(list.status).toBe(200)
    expect(list.body.pagination).toEqual({ total: 4, limit: 50, offset: 0 })
    expect(list.body.invoices.map((i) => i.domain)).toEqual([
      'd.example.com',
      'c.example.com',
      'b.example.com',
      'a.example.com'
    ])
    expect(list.body.invoices[1]).toMatchObject({ total: 31.2, currency: 'USD', status: 'paid' })
    expect(list.body.invoices[1].invoice_number).toMatch(/^INV-\d{4}-\d{6}$/)
    expect(list.body.invoices[1].created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(list.body.invoices[0]).toMatchObject({ status: 'unpaid', order_number: unpaid.orderNumber })
    // An unpaid invoice is due 14 days after the order; a paid one on the day.
    const due = new Date(
      Date.parse(`${(list.body.invoices[0].created_at as string).slice(0, 10)}T00:00:00Z`) + 14 * 86_400_000
    )
    expect(list.body.invoices[0].due_date).toBe(due.toISOString().slice(0, 10))
    const paidOnly = await s.request<{ invoices: Body[] }>('GET', '/invoices?status=paid&limit=2', { key: r.key })
    expect(paidOnly.body.invoices.map((i) => i.domain)).toEqual(['c.example.com', 'b.example.com'])
    const one = await s.request<{ invoice: Body }>('GET', `/invoices/${list.body.invoices[2].id}`, { key: r.key })
    expect(one.body.invoice).toMatchObject({ domain: 'b.example.com', status: 'paid', product: 'PositiveSSL' })
    expect((await s.request('GET', '/invoices/99999', { key: r.key })).status).toBe(404)
    expect((await s.request('GET', '/invoices?status=overdue', { key: r.key })).status).toBe(400)
    expect(
      (await s.request<{ pagination: Body }>('GET', '/invoices?limit=500', { key: r.key })).body.pagination.limit
    ).toBe(100)
  })
})

describe('credits and balance', () => {
  it('pages the ledger newest first and shows the last 10 on /balance', async () => {
    const r = await s.reseller({ credit: 1000 })
    for (let i = 0; i < 12; i++)
      await s.request('POST', '/orders', { key: r.key, body: { product_id: 1, domain: `l${i}.example.com` } })
    const credits = await s.request<{ balance: number; currency: string; transactions: Body[]; pagination: Body }>(
      'GET',
      '/credits?limit=5&offset=0',
      { key: r.key }
    )
    expect(credits.body).toMatchObject({ success: true, currency: 'USD' })
    expect(credits.body.balance).toBe(Math.round((1000 - 12 * 23.2) * 100) / 100)
    expect(credits.body.pagination).toEqual({ total: 13, limit: 5, offset: 0 })
    expect(credits.body.transactions[0]).toMatchObject({
      type: 'debit',
      amount: -23.2,
      balance_after: credits.body.balance
    })
    const last = await s.request<{ transactions: Body[] }>('GET', '/credits?offset=12', { key: r.key })
    expect(last.body.transactions).toEqual([
      expect.objectContaining({ type: 'credit', amount: 1000, balance_after: 1000 })
    ])
    const balance = await s.request<{ balance: number; transactions: Body[] }>('GET', '/balance', { key: r.key })
    expect(balance.body.balance).toBe(credits.body.balance)
    expect(balance.body.transactions.length).toBe(10)
    expect(balance.body.transactions[0].id).toBe(credits.body.transactions[0].id)
  })

  it('POST /credits pays an unpaid order once, marks it and its invoice paid', async () => {
    const r = await s.reseller({ credit: 50 })
    const order = await onInvoice(r.id, 'pay.example.com')
    const res = await s.request<Body>('POST', '/credits', { key: r.key, body: { order_id: order.id } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, order_id: order.id, amount_paid: 31.2, new_balance: 18.8 })
    const detail = await s.request<{ order: Body }>('GET', `/orders/${order.id}`, { key: r.key })
    expect(detail.body.order).toMatchObject({ payment_status: 'paid', invoice_status: 'paid' })
    const again = await s.request<Body>('POST', '/credits', { key: r.key, body: { order_id: order.id } })
    expect(again.status).toBe(409)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(18.8)
  })

  it('POST /credits is 402 when short and changes nothing; replays with an Idempotency-Key', async () => {
    const r = await s.reseller({ credit: 10 })
    const order = await onInvoice(r.id, 'short.example.com')
    const res = await s.request<Body>('POST', '/credits', { key: r.key, body: { order_id: order.id } })
    expect(res.status).toBe(402)
    expect(res.body.error).toBe('insufficient credit balance: required 31.20 USD, available 10.00 USD')
    expect(
      (await s.request<{ order: Body }>('GET', `/orders/${order.id}`, { key: r.key })).body.order.payment_status
    ).toBe('unpaid')
    await s.service.ledger.topUp(r.id, 40_00)
    const headers = { 'idempotency-key': 'pay-1' }
    const first = await s.request<Body>('POST', '/credits', { key: r.key, body: { order_id: order.id }, headers })
    const second = await s.request<Body>('POST', '/credits', { key: r.key, body: { order_id: order.id }, headers })
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(second.body).toEqual(first.body)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(18.8)
  })

  it('POST /credits refuses bad bodies and unknown orders', async () => {
    const r = await s.reseller({ credit: 10 })
    expect((await s.request('POST', '/credits', { key: r.key, body: {} })).status).toBe(400)
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: 'x' } })).status).toBe(400)
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: 424242 } })).status).toBe(404)
  })

  it('cancelling an unpaid order refunds nothing and cancels its invoice', async () => {
    const r = await s.reseller({ credit: 10 })
    const order = await onInvoice(r.id, 'unpaid-cancel.example.com')
    const res = await s.request<Body>('PUT', `/orders/${order.id}`, { key: r.key, body: { action: 'cancel' } })
    expect(res.body).toMatchObject({ status: 'cancelled', refunded: 0, new_balance: 10 })
    expect((await s.request<{ order: Body }>('GET', `/orders/${order.id}`, { key: r.key })).body.order).toMatchObject({
      payment_status: 'unpaid',
      invoice_status: 'cancelled'
    })
    expect((await s.request('POST', '/credits', { key: r.key, body: { order_id: order.id } })).status).toBe(409)
  })
})
