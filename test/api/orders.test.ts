import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(() => s.close())

const sumLedger = (resellerId: number): number =>
  (
    s.service.ctx.db
      .prepare('SELECT COALESCE(SUM(amount_cents), 0) AS n FROM credit_transactions WHERE reseller_id = ?')
      .get(resellerId) as { n: number }
  ).n

describe('POST /orders pricing', () => {
  it('charges the group price for every period, with SANs and discount', async () => {
    const r = s.reseller({ credit: 10_000, discount: 10 })
    // PositiveSSL Multi-Domain (id 4), Standard group: 1y 79.20, SAN 20.00, wildcard SAN 96.00
    const cases: [number, number, number][] = [
      [12, 79.2, 20 + 96],
      [24, 146.52, 37 + 177.6],
      [36, 205.92, 52 + 249.6]
    ]
    let balance = 10_000
    for (const [period, base, san] of cases) {
      const res = await s.request<Body>('POST', '/orders', {
        key: r.key,
        body: { product_id: 4, domain: 'shop.example.com', period, san_count: 1, san_wildcard_count: 1 }
      })
      expect(res.status).toBe(200)
      const discount = Math.round((base + san) * 100 * 0.1) / 100
      const total = Math.round((base + san - discount) * 100) / 100
      balance = Math.round((balance - total) * 100) / 100
      expect(res.body).toMatchObject({
        success: true,
        domain: 'shop.example.com',
        base_price: base,
        san_total: Math.round(san * 100) / 100,
        discount_amount: discount,
        total,
        status: 'pending',
        payment_status: 'paid',
        credit_used: total,
        new_balance: balance,
        auto_reissue_enabled: true,
        max_validity_days: 200,
        period
      })
      expect(res.body.order_number).toMatch(/^ORD-\d{4}-\d{6}$/)
      expect(res.body.invoice_number).toMatch(/^INV-\d{4}-\d{6}$/)
    }
  })

  it('sets purchase end and the first planned reissue from the period', async () => {
    const r = s.reseller({ credit: 500 })
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'Example.ORG', period: 36 }
    })
    expect(res.status).toBe(200)
    expect(res.body.domain).toBe('example.org')
    const created = new Date()
    const end = new Date(Date.UTC(created.getUTCFullYear() + 3, created.getUTCMonth(), created.getUTCDate()))
    expect(res.body.purchase_end_date).toBe(end.toISOString().slice(0, 10))
    expect(typeof res.body.next_reissue_at).toBe('string')
    expect((res.body.next_reissue_at as string) < (res.body.purchase_end_date as string)).toBe(true)
  })

  it('never auto-reissues code signing and needs no domain for it', async () => {
    const r = s.reseller({ credit: 1000 })
    const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 11 } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ auto_reissue_enabled: false, next_reissue_at: null, domain: '' })
  })

  it('orders an internationalised name typed as people write it under its A-label', async () => {
    const r = s.reseller({ credit: 500 })
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'Bücher.example' }
    })
    expect(res.status).toBe(200)
    expect(res.body.domain).toBe('xn--bcher-kva.example')
    const wildcard = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 3, domain: '*.bücher.example' }
    })
    expect(wildcard.status).toBe(200)
    expect(wildcard.body.domain).toBe('*.xn--bcher-kva.example')
    const listed = await s.request<{ orders: Body[] }>('GET', '/orders?domain=xn--bcher-kva', { key: r.key })
    expect(listed.body.orders.map((o) => o.domain).sort()).toEqual(['*.xn--bcher-kva.example', 'xn--bcher-kva.example'])
  })

  it('refuses bad periods, domains and SAN counts with 400 and charges nothing', async () => {
    const r = s.reseller({ credit: 1000 })
    const bad: Body[] = [
      { product_id: 2, domain: 'example.com', period: 6 },
      { product_id: 2, domain: 'example.com', period: 18 },
      { product_id: 2, domain: 'example.com', period: 48 },
      { product_id: 2, domain: 'example.com', period: 0 },
      { product_id: 2, domain: 'not a domain' },
      { product_id: 2, domain: '*.example.com' },
      { product_id: 3, domain: 'example.com' },
      { product_id: 2 },
      { product_id: 2, domain: 'example.com', san_count: 2 },
      { product_id: 4, domain: 'example.com', san_count: -1 },
      { product_id: 4, domain: 'example.com', san_count: 1.5 },
      { product_id: 10, domain: 'example.com' },
      { product_id: '2', domain: 'example.com' },
      { product_id: 2, domain: 'example.com', perod: 24 },
      { domain: 'example.com' },
      { product_id: 2, domain: 'example.com', contact_email: 'nobody' },
      { product_id: 2, domain: 'xn--zz.example' },
      { product_id: 2, domain: 'bü cher.example' },
      { product_id: 2, domain: 'bücher\u0000.example' }
    ]
    for (const body of bad) {
      const res = await s.request<Body>('POST', '/orders', { key: r.key, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.success).toBe(false)
      expect(typeof res.body.error).toBe('string')
    }
    const list = await s.request<Body>('GET', '/orders', { key: r.key })
    expect((list.body.pagination as Body).total).toBe(0)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(1000)
  })

  it('is 402 with the required and available amounts when the balance is short, and creates nothing', async () => {
    const r = s.reseller({ credit: 30 })
    const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'example.net' } })
    expect(res.status).toBe(402)
    expect(res.body).toEqual({
      success: false,
      error: 'insufficient credit balance: required 31.20 USD, available 30.00 USD'
    })
    expect(((await s.request<Body>('GET', '/orders', { key: r.key })).body.pagination as Body).total).toBe(0)
    expect(((await s.request<Body>('GET', '/invoices', { key: r.key })).body.pagination as Body).total).toBe(0)
    expect((await s.request<Body>('GET', '/credits', { key: r.key })).body.balance).toBe(30)
  })

  it('is 403 for a product outside the group or a reseller without a group, 404 for an unknown product', async () => {
    const starter = s.reseller({ credit: 5000, groupId: 3 })
    expect(
      (await s.request('POST', '/orders', { key: starter.key, body: { product_id: 8, domain: 'example.com' } })).status
    ).toBe(403)
    const none = s.reseller({ credit: 5000, groupId: null })
    expect(
      (await s.request('POST', '/orders', { key: none.key, body: { product_id: 2, domain: 'example.com' } })).status
    ).toBe(403)
    expect(
      (await s.request('POST', '/orders', { key: starter.key, body: { product_id: 999, domain: 'example.com' } }))
        .status
    ).toBe(404)
  })
})

describe('orders list and detail', () => {
  it('pages newest first, filters by status and domain, clamps the limit', async () => {
    const r = s.reseller({ credit: 5000 })
    for (let i = 0; i < 7; i++) {
      const res = await s.request('POST', '/orders', {
        key: r.key,
        body: { product_id: 1, domain: `site${i}.example.com` }
      })
      expect(res.status).toBe(200)
    }
    const all = await s.request<{ orders: Body[]; pagination: Body }>('GET', '/orders', { key: r.key })
    expect(all.body.pagination).toEqual({ total: 7, limit: 50, offset: 0 })
    expect(all.body.orders.map((o) => o.domain)).toEqual([6, 5, 4, 3, 2, 1, 0].map((i) => `site${i}.example.com`))
    const page = await s.request<{ orders: Body[]; pagination: Body }>('GET', '/orders?limit=3&offset=5', {
      key: r.key
    })
    expect(page.body.orders.map((o) => o.domain)).toEqual(['site1.example.com', 'site0.example.com'])
    expect(page.body.pagination).toEqual({ total: 7, limit: 3, offset: 5 })
    const past = await s.request<{ orders: Body[]; pagination: Body }>('GET', '/orders?offset=100', { key: r.key })
    expect(past.body.orders).toEqual([])
    const clamped = await s.request<{ pagination: Body }>('GET', '/orders?limit=1000', { key: r.key })
    expect(clamped.body.pagination.limit).toBe(100)
    const search = await s.request<{ orders: Body[] }>('GET', '/orders?domain=SITE3', { key: r.key })
    expect(search.body.orders.map((o) => o.domain)).toEqual(['site3.example.com'])
    const wild = await s.request<{ orders: Body[] }>('GET', '/orders?domain=%25', { key: r.key })
    expect(wild.body.orders).toEqual([])
    const pending = await s.request<{ pagination: Body }>('GET', '/orders?status=pending', { key: r.key })
    expect(pending.body.pagination.total).toBe(7)
    const completed = await s.request<{ pagination: Body }>('GET', '/orders?status=completed', { key: r.key })
    expect(completed.body.pagination.total).toBe(0)
    for (const q of ['limit=0', 'limit=-1', 'offset=-1', 'limit=abc', 'status=lost']) {
      expect((await s.request('GET', `/orders?${q}`, { key: r.key })).status, q).toBe(400)
    }
  })

  it('returns the detail with renewal fields, and 404 for an unknown order', async () => {
    const r = s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 1, domain: 'detail.example.com' }
    })
    const res = await s.request<{ order: Body }>('GET', `/orders/${created.body.order_id}`, { key: r.key })
    expect(res.status).toBe(200)
    expect(res.body.order).toMatchObject({
      order_id: created.body.order_id,
      order_number: created.body.order_number,
      domain: 'detail.example.com',
      product: 'RapidSSL Standard DV',
      status: 'pending',
      payment_status: 'paid',
      reissue_count: 0,
      cert_valid_from: null,
      cert_valid_till: null,
      period: 12,
      invoice_number: created.body.invoice_number
    })
    expect((await s.request('GET', '/orders/999999', { key: r.key })).status).toBe(404)
  })
})

describe('PUT /orders/{id} cancel', () => {
  it('cancels a pending order, refunds the total and cancels the invoice', async () => {
    const r = s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'refund.example.com' }
    })
    expect(created.body.new_balance).toBe(68.8)
    const res = await s.request<Body>('PUT', `/orders/${created.body.order_id}`, {
      key: r.key,
      body: { action: 'cancel' }
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, status: 'cancelled', refunded: 31.2, new_balance: 100 })
    expect(res.body.message).toMatch(/31\.20 USD refunded/)
    const credits = await s.request<{ transactions: Body[]; balance: number }>('GET', '/credits', { key: r.key })
    expect(credits.body.balance).toBe(100)
    expect(credits.body.transactions[0]).toMatchObject({ amount: 31.2, type: 'credit', balance_after: 100 })
    expect(credits.body.transactions[1]).toMatchObject({ amount: -31.2, type: 'debit', balance_after: 68.8 })
    const inv = await s.request<{ invoices: Body[] }>('GET', '/invoices', { key: r.key })
    expect(inv.body.invoices[0].status).toBe('cancelled')
    const order = await s.request<{ order: Body }>('GET', `/orders/${created.body.order_id}`, { key: r.key })
    expect(order.body.order).toMatchObject({ status: 'cancelled', payment_status: 'refunded', next_reissue_at: null })
    expect(sumLedger(r.id)).toBe(100_00)
  })

  it('is 409 for a second cancel and refunds once', async () => {
    const r = s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'twice.example.com' }
    })
    const path = `/orders/${created.body.order_id}`
    expect((await s.request('PUT', path, { key: r.key, body: { action: 'cancel' } })).status).toBe(200)
    const again = await s.request<Body>('PUT', path, { key: r.key, body: { action: 'cancel' } })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/only pending or processing/)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(100)
  })

  it('refuses unknown actions and other resellers', async () => {
    const r = s.reseller({ credit: 100 })
    const other = s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'mine.example.com' }
    })
    const path = `/orders/${created.body.order_id}`
    expect((await s.request('PUT', path, { key: r.key, body: { action: 'refund' } })).status).toBe(400)
    expect((await s.request('PUT', path, { key: r.key, body: {} })).status).toBe(400)
    expect((await s.request('PUT', path, { key: other.key, body: { action: 'cancel' } })).status).toBe(404)
    expect((await s.request<{ order: Body }>('GET', path, { key: r.key })).body.order.status).toBe('pending')
  })
})

describe('money under concurrency', () => {
  it('lets exactly the affordable number of racing orders through, never below zero', async () => {
    // PositiveSSL 1 year in the Standard group is 31.20; 200.00 affords 6 (187.20).
    const r = s.reseller({ credit: 200 })
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: `race${i}.example.com` } })
      )
    )
    const ok = results.filter((x) => x.status === 200)
    const refused = results.filter((x) => x.status === 402)
    expect(ok.length).toBe(6)
    expect(refused.length).toBe(34)
    const balance = (await s.request<Body>('GET', '/balance', { key: r.key })).body.balance
    expect(balance).toBe(12.8)
    expect(sumLedger(r.id)).toBe(12_80)
    const db = s.service.ctx.db
    const orders = db.prepare('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ?').get(r.id) as { n: number }
    const debits = db
      .prepare("SELECT COUNT(*) AS n FROM credit_transactions WHERE reseller_id = ? AND type = 'debit'")
      .get(r.id) as { n: number }
    const invoices = db.prepare('SELECT COUNT(*) AS n FROM invoices WHERE reseller_id = ?').get(r.id) as { n: number }
    expect([orders.n, debits.n, invoices.n]).toEqual([6, 6, 6])
  })
})

describe('Idempotency-Key', () => {
  it('returns the first answer to a retry and charges once', async () => {
    const r = s.reseller({ credit: 100 })
    const body = { product_id: 2, domain: 'once.example.com' }
    const headers = { 'idempotency-key': 'order-once-1' }
    const first = await s.request<Body>('POST', '/orders', { key: r.key, body, headers })
    const second = await s.request<Body>('POST', '/orders', { key: r.key, body, headers })
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(second.body).toEqual(first.body)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(68.8)
    const other = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { ...body, domain: 'twice.example.com' },
      headers
    })
    expect(other.status).toBe(409)
    expect(other.body.error).toMatch(/Idempotency-Key/)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(68.8)
  })

  it('charges once when the same key races', async () => {
    const r = s.reseller({ credit: 100 })
    const body = { product_id: 2, domain: 'race-once.example.com' }
    const res = await Promise.all(
      Array.from({ length: 10 }, () =>
        s.request<Body>('POST', '/orders', { key: r.key, body, headers: { 'idempotency-key': 'same' } })
      )
    )
    expect(res.every((x) => x.status === 200)).toBe(true)
    expect(new Set(res.map((x) => x.body.order_id)).size).toBe(1)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(68.8)
  })

  it('keys are per reseller, and a refused request can be retried after a top-up', async () => {
    const a = s.reseller({ credit: 10 })
    const b = s.reseller({ credit: 100 })
    const body = { product_id: 2, domain: 'shared-key.example.com' }
    const headers = { 'idempotency-key': 'k-1' }
    expect((await s.request('POST', '/orders', { key: a.key, body, headers })).status).toBe(402)
    expect((await s.request('POST', '/orders', { key: b.key, body, headers })).status).toBe(200)
    s.service.ledger.topUp(a.id, 50_00)
    expect((await s.request('POST', '/orders', { key: a.key, body, headers })).status).toBe(200)
    expect((await s.request('POST', '/orders', { key: a.key, body, headers: { 'idempotency-key': '' } })).status).toBe(
      400
    )
  })
})

describe('cross-reseller isolation', () => {
  it("never shows or touches another reseller's orders, invoices or ledger", async () => {
    const a = s.reseller({ credit: 100 })
    const b = s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: a.key,
      body: { product_id: 2, domain: 'private.example.com' }
    })
    const id = created.body.order_id as number
    expect((await s.request('GET', `/orders/${id}`, { key: b.key })).status).toBe(404)
    expect((await s.request('POST', '/credits', { key: b.key, body: { order_id: id } })).status).toBe(404)
    const invoices = await s.request<{ invoices: Body[] }>('GET', '/invoices', { key: a.key })
    const invoiceId = invoices.body.invoices[0].id
    expect((await s.request('GET', `/invoices/${invoiceId}`, { key: b.key })).status).toBe(404)
    expect((await s.request<{ pagination: Body }>('GET', '/orders', { key: b.key })).body.pagination.total).toBe(0)
    expect(
      (await s.request<{ transactions: Body[] }>('GET', '/credits', { key: b.key })).body.transactions.length
    ).toBe(1)
    expect((await s.request<{ stats: Body }>('GET', '/stats', { key: b.key })).body.stats.total_orders).toBe(0)
  })
})
