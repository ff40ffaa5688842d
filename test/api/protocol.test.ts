import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let r: TestReseller

beforeAll(async () => {
  s = await startServer()
  r = await s.reseller({ credit: 100 })
})
afterAll(async () => await s.close())

/** A raw request, for headers fetch will not let a test set (Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string
): Promise<{ status: number; body: Body; headers: Record<string, unknown> }> {
  const u = new URL(s.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Body, headers: res.headers })
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('authentication', () => {
  it('accepts X-API-Key and Authorization: Bearer', async () => {
    expect((await s.request('GET', '/account', { key: r.key })).status).toBe(200)
    expect((await s.request('GET', '/account', { headers: { authorization: `Bearer ${r.key}` } })).status).toBe(200)
  })

  it('is 401 without a key, with a wrong key, a revoked key, or API access disabled', async () => {
    const none = await s.request<Body>('GET', '/account')
    expect(none.status).toBe(401)
    expect(none.body).toEqual({
      success: false,
      error: 'missing API key: send it as X-API-Key or Authorization: Bearer'
    })
    expect((await s.request('GET', '/account', { key: 'cdk_wrong' })).status).toBe(401)
    expect((await s.request('GET', '/account', { headers: { authorization: 'Basic abc' } })).status).toBe(401)

    const other = await s.reseller({ credit: 10 })
    await s.service.resellers.setApiAccess(other.id, false)
    const disabled = await s.request<Body>('GET', '/account', { key: other.key })
    expect(disabled.status).toBe(401)
    expect(disabled.body.error).toMatch(/API access is disabled/)
    await s.service.resellers.setApiAccess(other.id, true)
    expect((await s.request('GET', '/account', { key: other.key })).status).toBe(200)

    const keyId = (await s.service.resellers.apiKeys(other.id))[0].id
    await s.service.resellers.revokeApiKey(keyId)
    expect((await s.request('GET', '/account', { key: other.key })).status).toBe(401)
  })

  it('checks the key before anything else: unknown paths are 401 without a key', async () => {
    expect((await s.request('GET', '/nowhere')).status).toBe(401)
  })
})

describe('Host header (DNS rebinding)', () => {
  it('accepts loopback names and refuses any other Host with 403', async () => {
    for (const host of ['127.0.0.1', 'localhost', `localhost:${new URL(s.url).port}`, '[::1]:8080']) {
      expect((await raw('GET', '/account', { host, 'x-api-key': r.key })).status, host).toBe(200)
    }
    for (const host of [
      'evil.example.com',
      'evil.example.com:80',
      '127.0.0.1.nip.io',
      '127.0.0.1:8080@evil.example.com'
    ]) {
      const res = await raw('GET', '/account', { host, 'x-api-key': r.key })
      expect(res.status, host).toBe(403)
      expect(res.body.success).toBe(false)
    }
  })
})

describe('methods, paths and bodies', () => {
  it('answers 405 with Allow for a method an endpoint does not take', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/orders', 'GET, HEAD, POST'],
      ['POST', '/products', 'GET, HEAD'],
      ['PATCH', '/orders/1', 'GET, HEAD, PUT'],
      ['GET', '/ssl/configure', 'POST'],
      ['PUT', '/credits', 'GET, HEAD, POST'],
      ['DELETE', '/certificate/1/download', 'GET, HEAD']
    ]
    for (const [method, path, allow] of cases) {
      const res = await s.request<Body>(method, path, { key: r.key })
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get('allow')).toBe(allow)
      expect(res.body.success).toBe(false)
    }
  })

  it('answers 404 in the envelope for unknown paths', async () => {
    const res = await s.request<Body>('GET', '/v2/products', { key: r.key })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ success: false, error: 'no such endpoint: GET /v2/products' })
  })

  it('refuses a body over 1 MiB with 413, a non-JSON body with 415, broken JSON with 400', async () => {
    const big = JSON.stringify({ product_id: 2, domain: 'x'.repeat(1024 * 1024 + 10) })
    const tooBig = await s.request<Body>('POST', '/orders', { key: r.key, body: big })
    expect(tooBig.status).toBe(413)
    expect(tooBig.body.success).toBe(false)
    const text = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: 'product_id=2',
      headers: { 'content-type': 'text/plain' }
    })
    expect(text.status).toBe(415)
    const form = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: 'product_id=2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }
    })
    expect(form.status).toBe(415)
    const broken = await s.request<Body>('POST', '/orders', { key: r.key, body: '{"product_id": 2,' })
    expect(broken.status).toBe(400)
    expect(broken.body.error).toMatch(/not valid JSON/)
    const array = await s.request<Body>('POST', '/orders', { key: r.key, body: '[1,2]' })
    expect(array.status).toBe(400)
    const proto = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: '{"product_id":2,"domain":"a.example.com","__proto__":{"x":1}}'
    })
    expect(proto.status).toBe(400)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(100)
  })

  it('serves the OpenAPI document of the API', async () => {
    const res = await s.request<{ openapi: string; info: Body; paths: Record<string, Body> }>('GET', '/openapi.json', {
      key: r.key
    })
    expect(res.status).toBe(200)
    expect(res.body.info.version).toBe('3.0')
    for (const p of [
      '/products',
      '/products/{id}',
      '/san-pricing/{product_id}',
      '/orders',
      '/orders/{id}',
      '/orders/{order_id}/acme',
      '/ssl/configure',
      '/ssl/{order_id}',
      '/ssl/resend-validation',
      '/ssl/change-dcv',
      '/ssl/reissue',
      '/csr/decode',
      '/invoices',
      '/invoices/{id}',
      '/credits',
      '/balance',
      '/certificate/{order_id}',
      '/certificate/{order_id}/download',
      '/account',
      '/stats'
    ]) {
      expect(Object.keys(res.body.paths), p).toContain(p)
    }
  })
})
