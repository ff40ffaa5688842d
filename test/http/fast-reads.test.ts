import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

// A repeated GET is answered from kept bytes before fastify runs (src-main/http/fast-reads.ts).
// The answer must be byte for byte what fastify sent, and every refusal (Host, key) must still
// come, in the envelope, even when a kept answer exists for that very URL.
let s: TestServer
/** Requests that reached fastify's own hooks. */
let throughFastify = 0

beforeAll(async () => {
  s = await startServer({
    server: {
      extend: (app) => {
        app.addHook('onRequest', async () => {
          throughFastify += 1
        })
      }
    }
  })
})
afterAll(async () => await s.close())

/** A GET with a Host header of our choosing (fetch always sends the URL's). */
const getWithHost = (path: string, host: string, key: string): Promise<{ status: number; body: unknown }> =>
  new Promise((resolve, reject) => {
    const req = request(`${s.url}${path}`, { headers: { host, 'x-api-key': key } }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }))
    })
    req.on('error', reject)
    req.end()
  })

describe('kept answers sent before fastify', () => {
  it("answers the reseller's next GET after its own order before fastify, showing the order", async () => {
    const r = await s.reseller({ credit: 100 })
    const place = (domain: string) =>
      s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain } }).then((res) => res.status)
    expect(await place('before-fast.example.com')).toBe(200)
    for (let i = 0; i < 2; i++) await fetch(`${s.url}/orders?limit=5`, { headers: { 'x-api-key': r.key } })
    expect(await place('after-fast.example.com')).toBe(200)
    const before = throughFastify
    const res = await fetch(`${s.url}/orders?limit=5`, { headers: { 'x-api-key': r.key } })
    const body = (await res.json()) as { orders: { domain: string }[]; pagination: { total: number } }
    expect(throughFastify - before).toBe(0)
    expect(body.orders.map((o) => o.domain)).toEqual(['after-fast.example.com', 'before-fast.example.com'])
    expect(body.pagination.total).toBe(2)
  })

  it('answers a repeated GET without fastify, with the same status, headers and bytes', async () => {
    const r = await s.reseller({ credit: 100 })
    await s.request('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'fast.example.com' } })
    const answers = []
    for (let i = 0; i < 4; i++) {
      const before = throughFastify
      const res = await fetch(`${s.url}/orders?limit=5`, { headers: { 'x-api-key': r.key } })
      answers.push({
        status: res.status,
        type: res.headers.get('content-type'),
        length: res.headers.get('content-length'),
        body: await res.text(),
        fastify: throughFastify - before
      })
    }
    // The first builds the answer, the second vouches for the key; from then on fastify is skipped.
    expect(answers[0].fastify).toBe(1)
    expect(answers[3].fastify).toBe(0)
    for (const a of answers.slice(1)) {
      expect(a).toMatchObject({ status: 200, type: answers[0].type, length: answers[0].length, body: answers[0].body })
    }
    expect(JSON.parse(answers[3].body)).toMatchObject({ success: true, pagination: { total: 1 } })
  })

  it('still refuses a foreign Host, a missing key and a wrong key for a URL it keeps an answer to', async () => {
    const r = await s.reseller({ credit: 100 })
    for (let i = 0; i < 3; i++) {
      expect((await s.request('GET', '/products', { key: r.key })).status).toBe(200)
    }
    expect((await getWithHost('/products', 'localhost', r.key)).status).toBe(200)
    const foreign = await getWithHost('/products', 'rebound.example', r.key)
    expect(foreign.status).toBe(403)
    expect(foreign.body).toEqual({
      success: false,
      error: 'request refused: the Host header is not a loopback name'
    })
    const none = await s.request('GET', '/products')
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ success: false })
    const wrong = await s.request('GET', '/products', { key: `${r.key}x` })
    expect(wrong.status).toBe(401)
    // A HEAD of the same URL is fastify's (no body), not a kept GET answer.
    const head = await fetch(`${s.url}/products`, { method: 'HEAD', headers: { 'x-api-key': r.key } })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })
})
