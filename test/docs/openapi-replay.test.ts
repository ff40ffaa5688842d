/**
 * A validating proxy (Prism) in front of a live CertDesk checks every request against
 * docs/openapi.json on the way in and every answer on the way out. A broad replay (every
 * operation, and the error statuses a valid request can meet: 400, 401, 402, 403, 404, 409, 429)
 * must see no violation at all. Requests the description itself forbids (an unknown query
 * parameter, a number out of range, a body that is not JSON) are refused by the server in the
 * answer the description gives, and whatever Prism finds about them is about the request only. 405 has no operation for Prism to match (the method is the one the
 * path does not serve), so its answers are held to the description here directly.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { opensslCsr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { OFFLINE_MARKER, offlineEnv, ROOT } from '../support/offline-tool'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
interface Violation {
  location: string[]
  severity: string
  message: string
}
interface Answer {
  status: number
  body: Body
  headers: Headers
  violations: Violation[]
}

let s: TestServer
let dns: DnsServer
let prism: ChildProcess
let prismLog = ''
let base = ''
let r: TestReseller
const seen = new Map<string, Set<number>>()

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

beforeAll(async () => {
  s = await startServer()
  dns = await startDns()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  r = await s.reseller({ credit: 1000 })
  const started = await startPrism(join(ROOT, 'docs', 'openapi.json'))
  prism = started.child
  base = started.base
  started.child.stdout?.on('data', (d) => (prismLog += d))
  started.child.stderr?.on('data', (d) => (prismLog += d))
}, 120_000)

/** Prism as a validating proxy of `description` in front of the server, once it answers. */
async function startPrism(description: string): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort()
  const child = spawn(
    join(ROOT, 'node_modules', '.bin', 'prism'),
    ['proxy', description, s.url, '--port', String(port), '--host', '127.0.0.1', '--cors', 'false', '-v', 'warn'],
    { cwd: ROOT, env: offlineEnv() }
  )
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i += 1) {
    const up = await fetch(`${url}/acme/root-ca.pem`).then(
      () => true,
      () => false
    )
    if (up) return { child, base: url }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  child.kill()
  throw new Error('could not start Prism')
}

afterAll(async () => {
  prism?.kill()
  await dns?.close()
  await s?.close()
})

/** One request through Prism, with what it found wrong (the `sl-violations` header). */
async function via(
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}
): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers }
  const key = opts.key === undefined ? r.key : opts.key
  if (key) headers['x-api-key'] = key
  let payload: string | undefined
  if (opts.body !== undefined) {
    payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(base + path, { method, headers, body: payload })
  const text = await res.text()
  let body: Body
  try {
    body = JSON.parse(text) as Body
  } catch {
    body = { text }
  }
  const raw = res.headers.get('sl-violations')
  const violations = raw ? (JSON.parse(raw) as Violation[]) : []
  const route = `${method} ${path.split('?')[0].replace(/\/\d+(?=\/|$)/g, '/{id}')}`
  if (!seen.has(route)) seen.set(route, new Set())
  seen.get(route)?.add(res.status)
  return { status: res.status, body, headers: res.headers, violations }
}

/** A request the description allows: the answer has `status` and nothing is wrong with either. */
async function clean(status: number, method: string, path: string, opts?: Parameters<typeof via>[2]): Promise<Answer> {
  const a = await via(method, path, opts)
  expect({ call: `${method} ${path}`, status: a.status, violations: a.violations }).toEqual({
    call: `${method} ${path}`,
    status,
    violations: []
  })
  return a
}

describe('a replay through the validating proxy', () => {
  it('sees no violation on any operation, its answers or its error statuses', async () => {
    // Catalogue
    await clean(200, 'GET', '/products')
    await clean(200, 'GET', '/products?include=acme&type=ssl&validation=dv&brand=Sectigo')
    await clean(200, 'GET', '/products/2')
    await clean(200, 'GET', '/san-pricing/4')
    await clean(404, 'GET', '/products/999')
    const noGroup = await s.reseller({ credit: 10, groupId: null })
    await clean(403, 'GET', '/products', { key: noGroup.key })
    await clean(401, 'GET', '/products', { key: 'cdk_not-a-key' })

    // Orders
    const placed = await clean(200, 'POST', '/orders', {
      body: { product_id: 2, domain: 'replay.example.com', period: 24 },
      headers: { 'idempotency-key': 'replay-1' }
    })
    const retry = await clean(200, 'POST', '/orders', {
      body: { period: 24, domain: 'replay.example.com', product_id: 2 },
      headers: { 'idempotency-key': 'replay-1' }
    })
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    await clean(409, 'POST', '/orders', {
      body: { product_id: 2, domain: 'other.example.com' },
      headers: { 'idempotency-key': 'replay-1' }
    })
    await clean(400, 'POST', '/orders', { body: { product_id: 2, domain: 'replay.example.com', period: 48 } })
    await clean(402, 'POST', '/orders', { body: { product_id: 9, domain: 'rich.example.com', period: 36 } })
    await clean(403, 'POST', '/orders', { key: noGroup.key, body: { product_id: 2, domain: 'x.example.com' } })
    await clean(404, 'POST', '/orders', { body: { product_id: 999, domain: 'x.example.com' } })
    const acme = await clean(200, 'POST', '/orders', { body: { product_id: 12, domain: 'acme.example.com' } })
    expect(acme.body.fulfillment).toBe('acme_subscription')
    const id = placed.body.order_id as number
    await clean(200, 'GET', `/orders/${id}`)
    await clean(200, 'GET', `/orders/${acme.body.order_id as number}`)
    await clean(200, 'GET', '/orders?status=pending&domain=replay&limit=500&offset=0')
    await clean(404, 'GET', '/orders/4242')
    await clean(200, 'GET', `/orders/${acme.body.order_id as number}/acme`)
    await clean(404, 'GET', `/orders/${id}/acme`)
    await clean(200, 'GET', '/acme/root-ca.pem', { key: null, headers: { accept: 'application/x-pem-file' } })

    // SSL: an http order left waiting, an email order, and a code-signing order issued at configure
    const csr = opensslCsr(['replay.example.com'])
    await clean(200, 'POST', '/csr/decode', { body: { csr } })
    await clean(400, 'POST', '/csr/decode', { body: { csr: '-----BEGIN CERTIFICATE REQUEST-----\n!!\n' } })
    await clean(400, 'POST', '/ssl/configure', { body: { order_id: id, csr: opensslCsr(['elsewhere.example.org']) } })
    await clean(200, 'POST', '/ssl/configure', { body: { order_id: id, csr, dcv_method: 'http' } })
    await clean(409, 'POST', '/ssl/configure', { body: { order_id: id, csr, dcv_method: 'http' } })
    await clean(404, 'POST', '/ssl/configure', { body: { order_id: 4242, csr } })
    await clean(200, 'GET', `/ssl/${id}`)
    await clean(200, 'POST', '/ssl/change-dcv', { body: { order_id: id, dcv_method: 'dns' } })
    await clean(200, 'POST', '/ssl/change-dcv', { body: { order_id: id, dcv_method: 'email' } })
    await clean(200, 'POST', '/ssl/resend-validation', { body: { order_id: id } })
    await clean(400, 'POST', '/ssl/approve', { body: { order_id: id, code: 'WRONGCODE1' } })
    await clean(409, 'PUT', `/orders/${id}`, { body: { action: 'cancel' } })
    await clean(200, 'GET', `/certificate/${id}`)
    await clean(404, 'GET', `/certificate/${id}/download`)
    // The newest approval message (first: newest first) waits in the outbox (no SMTP server is set): its code approves.
    const message = (await s.service.certificates.outbox(id))[0]?.body ?? ''
    const code = /^\s{4}([A-Z2-9]{10})\s*$/m.exec(message)?.[1]
    expect(code, message).toBeDefined()
    await clean(200, 'POST', '/ssl/approve', { body: { order_id: id, code } })
    await clean(200, 'GET', `/certificate/${id}/download`)
    // Revoked once (onto the local CA's CRL); a second time is a conflict.
    await clean(200, 'POST', '/ssl/revoke', { body: { order_id: id, reason: 'keyCompromise' } })
    await clean(409, 'POST', '/ssl/revoke', { body: { order_id: id, reason: 'superseded' } })
    await clean(404, 'POST', '/ssl/revoke', { body: { order_id: 4242, reason: 'superseded' } })
    await clean(200, 'GET', `/certificate/${id}`)

    const signing = await clean(200, 'POST', '/orders', { body: { product_id: 10 } })
    const cs = signing.body.order_id as number
    await clean(200, 'POST', '/ssl/configure', {
      body: { order_id: cs, csr: opensslCsr([], 'rsa:3072', '/C=US/O=Replay Ltd/CN=Replay Ltd') }
    })
    await clean(409, 'POST', '/ssl/change-dcv', { body: { order_id: cs, dcv_method: 'http' } })
    await clean(409, 'POST', '/ssl/resend-validation', { body: { order_id: cs } })
    await clean(409, 'POST', '/ssl/approve', { body: { order_id: cs, code: 'WRONGCODE1' } })
    await clean(200, 'GET', `/certificate/${cs}`)
    await clean(200, 'GET', `/certificate/${cs}/download`)
    for (let i = 0; i < 3; i += 1) await clean(200, 'POST', '/ssl/reissue', { body: { order_id: cs } })
    const limited = await clean(429, 'POST', '/ssl/reissue', { body: { order_id: cs } })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)

    // Cancel what can be
    const spare = await clean(200, 'POST', '/orders', { body: { product_id: 1, domain: 'spare.example.com' } })
    await clean(409, 'POST', '/ssl/reissue', { body: { order_id: spare.body.order_id } })
    await clean(200, 'PUT', `/orders/${spare.body.order_id as number}`, { body: { action: 'cancel' } })

    // Billing
    await clean(200, 'GET', '/invoices?status=paid&limit=2')
    const invoices = await clean(200, 'GET', '/invoices')
    await clean(200, 'GET', `/invoices/${(invoices.body.invoices as Body[])[0].id as number}`)
    await clean(404, 'GET', '/invoices/4242')
    await clean(200, 'GET', '/credits?limit=3&offset=1')
    await clean(200, 'GET', '/balance')
    const unpaid = await s.service.orders.create(
      await s.service.resellers.get(r.id),
      { productId: 2, domain: 'invoice.example.com' },
      'invoice'
    )
    const poor = await s.reseller({ credit: 1 })
    const poorOrder = await s.service.orders.create(
      await s.service.resellers.get(poor.id),
      { productId: 2, domain: 'poor.example.com' },
      'invoice'
    )
    await clean(402, 'POST', '/credits', { key: poor.key, body: { order_id: poorOrder.order.id } })
    const paid = await clean(200, 'POST', '/credits', {
      body: { order_id: unpaid.order.id },
      headers: { 'idempotency-key': 'pay-1' }
    })
    const paidAgain = await clean(200, 'POST', '/credits', {
      body: { order_id: unpaid.order.id },
      headers: { 'idempotency-key': 'pay-1' }
    })
    expect(paidAgain.body).toEqual(paid.body)
    await clean(409, 'POST', '/credits', { body: { order_id: unpaid.order.id } })
    await clean(404, 'POST', '/credits', { body: { order_id: 4242 } })

    // Account, statistics, events, reports, renewal, installations, the description
    await clean(200, 'GET', '/account')
    await clean(200, 'GET', '/stats')
    await clean(200, 'GET', '/events')
    await clean(200, 'GET', `/events?type=order.created&since=2020-01-01&order_id=${id}&limit=5&offset=0`)
    await clean(400, 'GET', '/events?since=2026-02-30')
    await clean(200, 'GET', '/reports/expiring?days=398')
    await clean(200, 'GET', `/orders/${cs}/renewal`)
    await clean(404, 'GET', '/orders/4242/renewal')
    // Switching how an order renews is for TLS orders an external ACME CA issues: one is named
    // (switching touches only the store, so the CA is never reached), then removed again.
    await clean(409, 'POST', `/orders/${id}/renewal`, { body: { dcv_method: 'dns' } })
    await s.service.acmeIssuer.configure('https://ca.replay.invalid/directory', null, null)
    try {
      await clean(200, 'POST', `/orders/${id}/renewal`, { body: { dcv_method: 'dns' } })
      await clean(409, 'POST', `/orders/${cs}/renewal`, { body: { dcv_method: 'dns' } })
      await clean(404, 'POST', '/orders/4242/renewal', { body: { dcv_method: 'dns' } })
    } finally {
      await s.service.acmeIssuer.disable()
    }
    await clean(200, 'GET', `/orders/${cs}/installation`)
    // An endpoint nothing listens on: the check answers it unreachable, at once.
    await s.service.installations.addEndpoint(r.id, cs, {
      host: 'replay.example.com',
      port: await freePort(),
      address: '127.0.0.1'
    })
    await clean(200, 'POST', `/orders/${cs}/installation/check`)
    await clean(400, 'POST', `/orders/${spare.body.order_id as number}/installation/check`)
    await clean(404, 'GET', '/orders/4242/installation')
    await clean(200, 'GET', '/openapi.json')

    expect(prismLog).not.toContain(OFFLINE_MARKER)
    expect(prismLog).not.toMatch(/Violation: response/)
  })

  it('reached every operation of the description, and every status it lists that a valid request can meet', () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>
    }
    const key = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[a-z_]+\}/g, '{id}')}`
    const missing = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .map((m) => key(m, path))
        .filter((op) => !seen.get(op)?.has(200))
    )
    expect(missing, JSON.stringify(missing)).toEqual([])
    const statuses = new Set([...seen.values()].flatMap((set) => [...set]))
    for (const status of [200, 400, 401, 402, 403, 404, 409, 429])
      expect(statuses.has(status), String(status)).toBe(true)
  })

  it('flags the requests the description forbids as requests only, and the server refuses them as described', async () => {
    const forbidden: [number, string, string, Parameters<typeof via>[2]?][] = [
      [400, 'GET', '/credits?type=debit'],
      [400, 'GET', '/orders?offset=9223372036854775807'],
      [400, 'GET', '/orders/0'],
      [400, 'POST', '/orders', { body: { product_id: 2, domain: 'x.example.com', perod: 24 } }],
      [
        400,
        'POST',
        '/orders',
        { body: { product_id: 2, domain: 'x.example.com' }, headers: { 'idempotency-key': 'ä' } }
      ],
      [415, 'POST', '/orders', { body: 'product_id=2', headers: { 'content-type': 'text/plain' } }],
      [413, 'POST', '/csr/decode', { body: { csr: `-----BEGIN CERTIFICATE REQUEST-----${'A'.repeat(1_100_000)}` } }]
    ]
    for (const [status, method, path, opts] of forbidden) {
      const a = await via(method, path, opts)
      const call = `${method} ${path.slice(0, 60)}`
      expect({ call, status: a.status }).toEqual({ call, status })
      expect(a.body).toEqual({ success: false, error: expect.any(String) })
      // Prism does not hold a query string to its declared parameters, so an unknown one is
      // the server's alone to refuse; what Prism does find is about the request.
      expect(
        a.violations.filter((v) => v.location[0] !== 'request'),
        call
      ).toEqual([])
    }
    expect(prismLog).not.toMatch(/Violation: response/)
  })

  it('would see an answer that breaks the description (the proxy is not blind)', async () => {
    // The same description, except that an order may not be pending: Prism must object to the answer.
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as {
      components: { schemas: { Order: { properties: { status: { enum: string[] } } } } }
    }
    const status = doc.components.schemas.Order.properties.status
    status.enum = status.enum.filter((v) => v !== 'pending')
    const dir = mkdtempSync(join(tmpdir(), 'certdesk-prism-'))
    const broken = join(dir, 'openapi.json')
    writeFileSync(broken, JSON.stringify(doc))
    const other = await startPrism(broken)
    try {
      const placed = await s.request<Body>('POST', '/orders', {
        key: r.key,
        body: { product_id: 2, domain: 'canary.example.com' }
      })
      const res = await fetch(`${other.base}/orders/${placed.body.order_id as number}`, {
        headers: { 'x-api-key': r.key }
      })
      const found = JSON.parse(res.headers.get('sl-violations') ?? '[]') as Violation[]
      expect(found.some((v) => v.location[0] === 'response' && v.location.includes('status'))).toBe(true)
    } finally {
      other.child.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('answers 405 with Allow listing exactly the methods the description gives the path', async () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      components: { responses: Record<string, { headers: Record<string, unknown> }> }
    }
    expect(doc.components.responses.MethodNotAllowed.headers).toHaveProperty('Allow')
    const concrete = (path: string) => path.replace(/\{[a-z_]+\}/g, '1')
    for (const [path, item] of Object.entries(doc.paths)) {
      const served = Object.keys(item).map((m) => m.toUpperCase())
      for (const op of Object.values(item)) expect(op.responses, path).toHaveProperty('405')
      const other = ['DELETE', 'PATCH', 'PUT', 'POST'].find((m) => !served.includes(m)) as string
      const res = await s.request<Body>(other, concrete(path), { key: r.key, body: {} })
      expect(res.status, `${other} ${path}`).toBe(405)
      expect(res.body).toEqual({ success: false, error: expect.any(String) })
      const allow = (res.headers.get('allow') ?? '').split(', ').filter((m) => m !== 'HEAD')
      expect(allow.sort(), path).toEqual(served.sort())
    }
  })
})
