import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

// Requests node's HTTP parser or the router refuse before any route runs still get the spec's
// envelope, and an API key in a URL never reaches the log (found by the reliability run).
let s: TestServer
const logged: string[] = []

beforeAll(async () => {
  s = await startServer({
    server: { logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } }
  })
})
afterAll(() => s.close())

function raw(bytes: string): Promise<{ status: number; body: unknown }> {
  const { port } = new URL(s.url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    let out = ''
    const timer = setTimeout(() => socket.destroy(new Error('no answer in 5 s')), 5000)
    socket.on('data', (d) => (out += d))
    socket.on('error', reject)
    socket.on('close', () => {
      clearTimeout(timer)
      const m = /^HTTP\/1\.1 (\d{3})/.exec(out)
      const body = out.slice(out.indexOf('\r\n\r\n') + 4)
      resolve({ status: m ? Number(m[1]) : 0, body: JSON.parse(body) })
    })
    socket.write(bytes)
    setTimeout(() => socket.end(), 200)
  })
}

describe('requests refused before any route', () => {
  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400],
    [
      'a header over the size limit',
      `GET /products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431
    ],
    ['a broken chunk', 'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
    ['no Host header', 'GET /products HTTP/1.1\r\n\r\n', 403],
    ['CONNECT', 'CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 405],
    [
      'a path that is not UTF-8',
      'GET /products/%ff HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: cdk_x\r\nConnection: close\r\n\r\n',
      400
    ]
  ])('answers %s in the envelope', async (_name, bytes, status) => {
    const res = await raw(bytes)
    expect(res.status).toBe(status)
    expect(res.body).toEqual({ success: false, error: expect.any(String) })
  })

  it('answers an undecodable path of a known caller with 400 in the envelope', async () => {
    const r = s.reseller()
    const res = await s.request('GET', '/products/%ff', { key: r.key })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, error: expect.stringContaining('request path') })
  })
})

describe('the request log', () => {
  it('never shows an API key a client put in the URL', async () => {
    const r = s.reseller()
    const res = await s.request('GET', `/orders?api_key=${r.key}`, { key: r.key })
    // /orders takes no api_key parameter: refused by its name, and the key is not echoed.
    expect(res.status).toBe(400)
    expect(JSON.stringify(res.body)).not.toContain(r.key)
    const log = logged.join('')
    expect(log).toContain('/orders?api_key=[redacted]')
    expect(log).not.toContain(r.key)
  })
})
