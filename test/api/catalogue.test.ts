import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Product = Record<string, unknown> & { id: number; pricing: Record<string, number>; type: string }

let s: TestServer
let standard: TestReseller
let gold: TestReseller
let starter: TestReseller
let groupless: TestReseller

beforeAll(async () => {
  s = await startServer()
  standard = await s.reseller({ groupId: 1 })
  gold = await s.reseller({ groupId: 2 })
  starter = await s.reseller({ groupId: 3 })
  groupless = await s.reseller({ groupId: null })
})
afterAll(async () => await s.close())

describe('GET /products', () => {
  it('lists the group products with list and group prices, without subscriptions by default', async () => {
    const r = await s.request<{ success: boolean; products: Product[]; count: number; group_id: number; note: string }>(
      'GET',
      '/products',
      { key: standard.key }
    )
    expect(r.status).toBe(200)
    expect(r.body.success).toBe(true)
    expect(r.body.group_id).toBe(1)
    expect(r.body.count).toBe(r.body.products.length)
    expect(r.body.note).toMatch(/USD/)
    expect(r.body.products.some((p) => p.fulfillment === 'acme_subscription')).toBe(false)
    const types = new Set(r.body.products.map((p) => p.type))
    expect([...types].sort()).toEqual(['code-signing', 'multi-domain', 'ssl', 'wildcard'])
    const p = r.body.products.find((x) => x.id === 2) as Product
    expect(p).toMatchObject({
      name: 'PositiveSSL',
      brand: 'Sectigo',
      validation_type: 'dv',
      list_price: 39,
      reseller_price: 31.2,
      max_years: 3,
      san_enabled: false
    })
    expect(p.list_pricing).toEqual({ 1: 39, 2: 72.15, 3: 101.4 })
    expect(p.pricing).toEqual({ 1: 31.2, 2: 57.72, 3: 81.12 })
  })

  it('shows each group its own prices', async () => {
    const a = await s.request<{ products: Product[] }>('GET', '/products', { key: standard.key })
    const b = await s.request<{ products: Product[] }>('GET', '/products', { key: gold.key })
    const pa = a.body.products.find((p) => p.id === 8) as Product
    const pb = b.body.products.find((p) => p.id === 8) as Product
    expect(pa.reseller_price).toBe(796)
    expect(pb.reseller_price).toBe(646.75)
    expect(pa.list_price).toBe(pb.list_price)
  })

  it('hides products outside the group', async () => {
    const r = await s.request<{ products: Product[] }>('GET', '/products', { key: starter.key })
    expect(r.body.products.every((p) => p.validation_type !== 'ev')).toBe(true)
    expect(r.body.products.length).toBeGreaterThan(0)
  })

  it('filters by brand (any case), type and validation', async () => {
    const brand = await s.request<{ products: Product[] }>('GET', '/products?brand=digicert', { key: standard.key })
    expect(brand.body.products.map((p) => p.brand)).toEqual(['DigiCert', 'DigiCert'])
    const wild = await s.request<{ products: Product[] }>('GET', '/products?type=wildcard', { key: standard.key })
    expect(wild.body.products.length).toBe(2)
    expect(wild.body.products.every((p) => p.type === 'wildcard')).toBe(true)
    const ov = await s.request<{ products: Product[] }>('GET', '/products?validation=ov&type=multi-domain', {
      key: standard.key
    })
    expect(ov.body.products.map((p) => p.name)).toEqual(['SSL Web Server Multi-Domain OV'])
    const none = await s.request<{ products: Product[]; count: number }>('GET', '/products?brand=Nobody', {
      key: standard.key
    })
    expect(none.body).toMatchObject({ success: true, count: 0, products: [] })
  })

  it('adds ACME subscription products with include=acme', async () => {
    const r = await s.request<{ products: Product[] }>('GET', '/products?include=acme', { key: standard.key })
    const subs = r.body.products.filter((p) => p.fulfillment === 'acme_subscription')
    expect(subs.map((p) => p.acme_type).sort()).toEqual(['ais', 'caas', 'caas'])
    expect(subs.every((p) => p.requires_csr === false)).toBe(true)
    expect(subs.filter((p) => p.wildcard_only === true).length).toBe(1)
  })

  it('refuses unknown filter values with 400', async () => {
    for (const q of ['type=ev-ssl', 'validation=xv', 'include=everything']) {
      const r = await s.request<{ success: boolean; error: string }>('GET', `/products?${q}`, { key: standard.key })
      expect(r.status).toBe(400)
      expect(r.body.success).toBe(false)
      expect(r.body.error).toMatch(/must be one of/)
    }
  })

  it('is 403 for a reseller without a group', async () => {
    const r = await s.request<{ error: string }>('GET', '/products', { key: groupless.key })
    expect(r.status).toBe(403)
    expect(r.body.error).toMatch(/group/)
  })
})

describe('GET /products/{id} and /san-pricing/{id}', () => {
  it('returns the detail with every year and SAN prices', async () => {
    const r = await s.request<{ product: Record<string, unknown> }>('GET', '/products/7', { key: standard.key })
    expect(r.status).toBe(200)
    expect(r.body.product).toMatchObject({
      id: 7,
      type: 'multi-domain',
      san_enabled: true,
      wildcard_san_enabled: true,
      included_sans: 4
    })
    expect(r.body.product.pricing).toEqual({ 1: 207.2, 2: 383.32, 3: 538.72 })
    expect((r.body.product.san_pricing as Record<string, unknown>).pricing).toEqual({
      1: { san_price: 47.2, wildcard_san_price: 223.2 },
      2: { san_price: 87.32, wildcard_san_price: 412.92 },
      3: { san_price: 122.72, wildcard_san_price: 580.32 }
    })
  })

  it('returns SAN pricing', async () => {
    const r = await s.request<{ san_pricing: Record<string, unknown> }>('GET', '/san-pricing/4', { key: standard.key })
    expect(r.status).toBe(200)
    expect(r.body.san_pricing).toMatchObject({
      product_id: 4,
      san_enabled: true,
      san_price: 20,
      wildcard_san_price: 96
    })
  })

  it('is 404 for an unknown product, 403 outside the group, 400 for a non-numeric id', async () => {
    expect((await s.request('GET', '/products/999', { key: standard.key })).status).toBe(404)
    expect((await s.request('GET', '/san-pricing/999', { key: standard.key })).status).toBe(404)
    expect((await s.request('GET', '/products/8', { key: starter.key })).status).toBe(403)
    expect((await s.request('GET', '/san-pricing/8', { key: starter.key })).status).toBe(403)
    expect((await s.request('GET', '/products/abc', { key: standard.key })).status).toBe(400)
    expect((await s.request('GET', '/products/0', { key: standard.key })).status).toBe(400)
  })
})
