import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storedBytes } from '../support/engine'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Acme = {
  status: string
  category: string
  domains: { id: string; name: string }[]
  subscription: { begin: string; next_renewal: string; end: string | null }
  account: { eab_kid: string; eab_hmac_key: string; server_url: string; status: string; accounts: unknown[] }
  allowed_identifiers: string[]
  commands: { certbot: string; acme_sh: string; lego: string }
  autoinstall: { login_url: string } | null
}

let s: TestServer
beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

const ledgerSum = async (resellerId: number): Promise<number> =>
  (
    (await s.service.ctx.store.get(
      'SELECT COALESCE(SUM(amount_cents), 0) AS n FROM credit_transactions WHERE reseller_id = ?',
      resellerId
    )) as { n: number }
  ).n

/** Everything the store keeps (the SQLite files, or a dump of the PostgreSQL database), as text. */
const storeBytes = (): string =>
  storedBytes(s.service)
    .map((b) => b.bytes.toString('latin1'))
    .join('')

describe('ordering an ACME subscription (POST /orders)', () => {
  it('completes the order at once, debits the price and answers the short response', async () => {
    const r = await s.reseller({ credit: 100 })
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 12, domain: 'shop.example.com' }
    })
    expect(res.status).toBe(200)
    // PositiveSSL ACME DV, Standard group, 1 year: 39.20
    expect(res.body).toMatchObject({
      success: true,
      status: 'completed',
      fulfillment: 'acme_subscription',
      total: 39.2,
      credit_used: 39.2,
      new_balance: 60.8,
      acme: { status: 'created', details_endpoint: `/orders/${res.body.order_id}/acme` }
    })
    expect(typeof (res.body.acme as Body).subscription_id).toBe('number')
    const order = await s.request<{ order: Body }>('GET', `/orders/${res.body.order_id}`, { key: r.key })
    expect(order.body.order).toMatchObject({
      status: 'completed',
      payment_status: 'paid',
      invoice_status: 'paid',
      // Spec "Order": the detail of an ACME order carries an `acme` summary, without secrets.
      acme: {
        status: 'active',
        category: 'caas',
        subscription_id: (res.body.acme as Body).subscription_id,
        // One shape for a subscription's names everywhere (reseller API v3.0, "ACME subscription details").
        domains: [
          { id: expect.any(String), name: 'shop.example.com' },
          { id: expect.any(String), name: 'www.shop.example.com' }
        ],
        bound_accounts: 0,
        details_endpoint: `/orders/${res.body.order_id}/acme`
      }
    })
    expect(JSON.stringify(order.body)).not.toMatch(/eab|hmac/i)
    expect(await ledgerSum(r.id)).toBe(6080)
  })

  it('shows the acme object with EAB credentials kept only in the keychain', async () => {
    const r = await s.reseller({ credit: 200 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 12, domain: 'www.Example.net', period: 24 }
    })
    expect(created.status).toBe(200)
    const res = await s.request<{ acme: Acme }>('GET', `/orders/${created.body.order_id}/acme`, { key: r.key })
    expect(res.status).toBe(200)
    const a = res.body.acme
    expect(a.status).toBe('active')
    expect(a.category).toBe('caas')
    expect(a.domains.map((d) => d.name)).toEqual(['example.net', 'www.example.net'])
    expect(a.domains.every((d) => typeof d.id === 'string' && d.id.length > 0)).toBe(true)
    const today = new Date().toISOString().slice(0, 10)
    expect(a.subscription.begin).toBe(today)
    expect(a.subscription.end).toBe(created.body.purchase_end_date ?? a.subscription.end)
    expect(a.subscription.next_renewal > today).toBe(true)
    expect(a.subscription.next_renewal < (a.subscription.end as string)).toBe(true)
    expect(a.account.eab_kid).toMatch(/^kid_/)
    expect(a.account.eab_hmac_key.length).toBeGreaterThanOrEqual(43)
    expect(a.account.server_url).toMatch(/^https:\/\/.+\/acme\/directory$/)
    expect(a.account.status).toBe('pending')
    expect(a.autoinstall).toBeNull()
    expect(a.commands.certbot).toContain(`--eab-kid ${a.account.eab_kid}`)
    expect(a.commands.certbot).toContain(`--eab-hmac-key=${a.account.eab_hmac_key}`)
    expect(a.account.eab_hmac_key.startsWith('-')).toBe(false)
    expect(a.commands.lego).toContain('--domains example.net --domains www.example.net')
    // The HMAC key is in the OS keychain and nowhere in the store.
    expect(await s.service.ctx.secrets.get(`acme-eab/${a.account.eab_kid}`)).toBe(a.account.eab_hmac_key)
    expect(storeBytes()).not.toContain(a.account.eab_hmac_key)
    expect(storeBytes()).toContain(a.account.eab_kid)
  })

  it('takes a wildcard name for wildcard-only products and lists the bare and www names', async () => {
    const r = await s.reseller({ credit: 500 })
    const bare = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 13, domain: 'example.org' }
    })
    expect(bare.status).toBe(400)
    expect(bare.body.error).toContain('wildcard')
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 13, domain: '*.example.org' }
    })
    expect(res.status).toBe(200)
    const acme = (await s.request<{ acme: Acme }>('GET', `/orders/${res.body.order_id}/acme`, { key: r.key })).body.acme
    expect(acme.domains.map((d) => d.name)).toEqual(['example.org', 'www.example.org'])
    expect(acme.allowed_identifiers).toEqual(['example.org', 'www.example.org', '*.example.org'])
    expect(await ledgerSum(r.id)).toBe(500_00 - 143_20)
  })

  it('requires contact_email for auto-install products and serves their set-up page', async () => {
    const r = await s.reseller({ credit: 100 })
    const missing = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 14, domain: 'blog.example.com' }
    })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({
      success: false,
      error: 'contact_email is required for auto-install subscription products'
    })
    expect(await ledgerSum(r.id)).toBe(100_00)
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 14, domain: 'blog.example.com', contact_email: 'ops@example.com' }
    })
    expect(res.status).toBe(200)
    const acme = (await s.request<{ acme: Acme }>('GET', `/orders/${res.body.order_id}/acme`, { key: r.key })).body.acme
    expect(acme.category).toBe('ais')
    expect(acme.autoinstall?.login_url).toMatch(new RegExp(`^${s.url}/acme/setup/[A-Za-z0-9_-]{32}$`))
    // The set-up link works without an API key (it is the secret) and shows the three clients.
    const page = await fetch(acme.autoinstall?.login_url as string)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    for (const client of ['certbot certonly', 'acme.sh --register-account', 'lego --server'])
      expect(html).toContain(client)
    expect(html).toContain(acme.account.eab_hmac_key)
    expect(html).toContain('-m ops@example.com')
    const wrong = await fetch(`${s.url}/acme/setup/not-a-real-token`)
    expect(wrong.status).toBe(404)
    expect(await wrong.json()).toMatchObject({ success: false })
  })

  it("answers 404 for another reseller's order and for an order that is not a subscription", async () => {
    const a = await s.reseller({ credit: 200 })
    const b = await s.reseller({ credit: 200 })
    const sub = await s.request<Body>('POST', '/orders', {
      key: a.key,
      body: { product_id: 12, domain: 'a.example.com' }
    })
    const other = await s.request<Body>('GET', `/orders/${sub.body.order_id}/acme`, { key: b.key })
    expect(other.status).toBe(404)
    expect(other.body.success).toBe(false)
    expect(JSON.stringify(other.body)).not.toContain('kid_')
    const tls = await s.request<Body>('POST', '/orders', {
      key: a.key,
      body: { product_id: 2, domain: 'b.example.com' }
    })
    const res = await s.request<Body>('GET', `/orders/${tls.body.order_id}/acme`, { key: a.key })
    expect(res.status).toBe(404)
    expect(res.body.error).toBe(`order ${tls.body.order_id} has no ACME subscription`)
    const noKey = await fetch(`${s.url}/orders/${sub.body.order_id}/acme`)
    expect(noKey.status).toBe(401)
  })

  it('refuses an ACME order the balance cannot pay with 402 and creates nothing', async () => {
    const r = await s.reseller({ credit: 10 })
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 12, domain: 'poor.example.com' }
    })
    expect(res.status).toBe(402)
    const n = (await s.service.ctx.store.get(
      'SELECT COUNT(*) AS n FROM acme_subscriptions WHERE reseller_id = ?',
      r.id
    )) as { n: number }
    expect(n.n).toBe(0)
  })
})
