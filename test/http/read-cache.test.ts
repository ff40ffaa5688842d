import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certdesk, cliTopUp } from '../support/cli'
import { startServer, type TestServer } from '../support/server'

// Repeated GETs and known keys are answered from memory while the store is unchanged. Every
// change, by this server or by another process, must show on the very next request.
type Body = Record<string, unknown>
let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

const total = async (key: string, path: string): Promise<number> => {
  const res = await s.request<{ pagination: Body }>('GET', path, { key })
  expect(res.status).toBe(200)
  return res.body.pagination.total as number
}

describe('answers reused while the store is unchanged', () => {
  it('shows an order placed through the API on the next list', async () => {
    const r = await s.reseller({ credit: 500 })
    expect(await total(r.key, '/orders')).toBe(0)
    expect(await total(r.key, '/orders')).toBe(0)
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'first.example.com' } })
    expect(await total(r.key, '/orders')).toBe(1)
  })

  it('shows a top-up made by the admin CLI in another process', async () => {
    const r = await s.reseller({ credit: 10 })
    const before = await s.request<Body>('GET', '/balance', { key: r.key })
    await s.request<Body>('GET', '/balance', { key: r.key })
    const out = cliTopUp(s.dataDir, r.id, 25)
    expect(out.code).toBe(0)
    const after = await s.request<Body>('GET', '/balance', { key: r.key })
    expect(after.body.balance).toBe((before.body.balance as number) + 25)
  })

  it('refuses a key at once after the admin CLI revokes it or turns API access off', async () => {
    const r = await s.reseller({ credit: 10 })
    expect((await s.request('GET', '/orders', { key: r.key })).status).toBe(200)
    expect(
      certdesk(['admin', '--data-dir', s.dataDir, 'reseller', 'api-access', '--reseller', String(r.id), '--disable'])
        .code
    ).toBe(0)
    expect((await s.request('GET', '/orders', { key: r.key })).status).toBe(401)
    expect(
      certdesk(['admin', '--data-dir', s.dataDir, 'reseller', 'api-access', '--reseller', String(r.id), '--enable'])
        .code
    ).toBe(0)
    expect((await s.request('GET', '/orders', { key: r.key })).status).toBe(200)
    const keyId = (await s.service.resellers.apiKeys(r.id))[0].id
    expect(certdesk(['admin', '--data-dir', s.dataDir, 'apikey', 'revoke', '--key-id', String(keyId)]).code).toBe(0)
    expect((await s.request('GET', '/orders', { key: r.key })).status).toBe(401)
  })

  it('never gives one reseller the answer another reseller got', async () => {
    const a = await s.reseller({ credit: 500 })
    const b = await s.reseller({ credit: 500 })
    await s.request('POST', '/orders', { key: a.key, body: { product_id: 2, domain: 'only-a.example.com' } })
    expect(await total(a.key, '/orders')).toBe(1)
    expect(await total(b.key, '/orders')).toBe(0)
  })
})
