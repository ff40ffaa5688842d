/**
 * Every name a CSR asks for is either issued or refused by name, never dropped: an
 * internationalised name written as raw bytes (0xFC, as a generator that does not convert to
 * A-labels writes it, or UTF-8, as `openssl req -addext` does), a name that is not a domain
 * name, and a subjectAltName entry of another kind are each a 400 that names the entry, on
 * POST /csr/decode, POST /ssl/configure, POST /ssl/reissue and the desktop bridge; the order is
 * left as it was. The same name as its A-label is accepted and issued.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { API_VERSION } from '../../src-main/http/server'
import { manualClock } from '../support/clock'
import { newKeyPem, opensslCsr, opensslText, x509Csr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>

const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let dns: DnsServer
let r: TestReseller
let app: AppHandlers

beforeAll(async () => {
  ;[s, dns] = await Promise.all([startServer({ clock: clock.clock }), startDns()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  r = await s.reseller({ credit: 5000 })
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
})
afterAll(async () => {
  await Promise.all([s?.close(), dns?.close()])
})

/** A CSR whose subjectAltName is exactly `san` (openssl's syntax: DNS:…, IP:…, email:…). */
function opensslCsrWithSan(cn: string, san: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-csr-san-'))
  try {
    const out = join(dir, 'csr.pem')
    const r = spawnSync('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-subj',
      `/CN=${cn}`,
      '-addext',
      `subjectAltName=${san}`,
      '-out',
      out
    ])
    if (r.status !== 0) throw new Error(String(r.stderr))
    return readFileSync(out, 'utf8')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The DER bytes of a PEM CSR. */
const derOf = (pem: string): Buffer => {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64')
  return der
}

async function multiDomainOrder(domain: string): Promise<number> {
  const res = await s.request<Body>('POST', '/orders', {
    key: r.key,
    body: { product_id: 4, domain, period: 12 }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.order_id as number
}

/** What a refused request must leave alone: the order's row, its request and its checks. */
async function orderState(id: number): Promise<unknown> {
  const db = s.service.ctx.store
  return {
    order: await db.get('SELECT status, status_note, updated_at FROM orders WHERE id = ?', id),
    request: (await db.get('SELECT csr_pem, names FROM certificate_requests WHERE order_id = ?', id)) ?? null,
    checks: await db.get('SELECT COUNT(*) AS n FROM dcv_checks WHERE order_id = ?', id),
    certificates: await db.get('SELECT COUNT(*) AS n FROM certificates WHERE order_id = ?', id)
  }
}

describe('an internationalised name written as raw bytes', () => {
  it('is refused with its name and its A-label by POST /ssl/configure, and the order stays as it was', async () => {
    const id = await multiDomainOrder('shop.idn.example')
    // @peculiar/x509 writes each character's code as one IA5String byte: ü is 0xFC.
    const csr = await x509Csr(['shop.idn.example', 'bücher.idn.example'])
    expect(derOf(csr).includes(Buffer.from('b\xfccher.idn.example', 'latin1'))).toBe(true)
    const before = await orderState(id)
    const res = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr, dcv_method: 'dns' }
    })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
    expect(res.body.error).toContain('bücher.idn.example')
    expect(res.body.error).toContain('xn--bcher-kva.idn.example')
    expect(await orderState(id)).toEqual(before)
    expect(((await s.request<Body>('GET', `/orders/${id}`, { key: r.key })).body.order as Body).status).toBe('pending')
  })

  it('is refused by POST /csr/decode, naming it (UTF-8 bytes from openssl too)', async () => {
    const raw = await x509Csr(['shop.idn.example', 'bücher.idn.example'])
    const decoded = await s.request<Body>('POST', '/csr/decode', { key: r.key, body: { csr: raw } })
    expect(decoded.status).toBe(400)
    expect(decoded.body.error).toContain('bücher.idn.example')

    const utf8 = opensslCsr(['shop.idn.example', 'bücher.idn.example'], 'ec:P-256')
    expect(derOf(utf8).includes(Buffer.from('bücher.idn.example', 'utf8'))).toBe(true)
    const res = await s.request<Body>('POST', '/csr/decode', { key: r.key, body: { csr: utf8 } })
    expect(res.status).toBe(400)
    expect(res.body.error).toContain('bücher.idn.example')
    expect(res.body.error).toContain('xn--bcher-kva.idn.example')
  })

  it('is refused by the bridge (keeping a generated CSR, and submitting one) with the same message', async () => {
    const id = await multiDomainOrder('bridge.idn.example')
    const key = newKeyPem()
    const csr = await x509Csr(['bridge.idn.example', 'bücher.idn.example'])
    const before = await orderState(id)
    const configured = await callHandler(app, 'configureOrder', [r.id, { orderId: id, csr, dcvMethod: 'dns' }])
    expect(configured.status).toBe(400)
    expect(JSON.stringify(configured.body)).toContain('bücher.idn.example')
    // A draft pairs a key with its own CSR: this CSR's key is another, but its names are read first.
    const kept = await callHandler(app, 'keepCsrDraft', [r.id, id, { pkcs8Pem: key, csrPem: csr }])
    expect(kept.status).toBe(400)
    expect(JSON.stringify(kept.body)).toContain('bücher.idn.example')
    expect(await orderState(id)).toEqual(before)
  })

  it('as its A-label is accepted, validated and issued: the certificate carries xn--bcher-kva', async () => {
    const id = await multiDomainOrder('shop2.idn.example')
    const names = ['shop2.idn.example', 'xn--bcher-kva.idn.example']
    const res = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr: opensslCsr(names, 'ec:P-256'), dcv_method: 'dns' }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const validation = res.body.validation as { name: string; instructions: Record<string, string> }[]
    expect(validation.map((v) => v.name).sort()).toEqual([...names].sort())
    for (const v of validation) await dns.setCname(v.instructions.record_name, v.instructions.record_value)
    expect((await s.request<Body>('GET', `/ssl/${id}`, { key: r.key })).body.status).toBe('completed')
    const cert = await s.request<Body>('GET', `/certificate/${id}/download`, { key: r.key })
    const text = opensslText((cert.body.certificate as Body).certificate_pem as string)
    expect(text).toContain('DNS:xn--bcher-kva.idn.example')
    expect(text).toContain('DNS:shop2.idn.example')
  })
})

describe('names that are not domain names, and subjectAltName entries of other kinds', () => {
  const cases: [string, string, RegExp][] = [
    ['a single label', 'DNS:shop.odd.example,DNS:localhost', /localhost/],
    ['an underscore', 'DNS:shop.odd.example,DNS:under_score.odd.example', /under_score\.odd\.example/],
    ['an IP address', 'DNS:shop.odd.example,IP:192.0.2.7', /IP address 192\.0\.2\.7/],
    ['an email address', 'DNS:shop.odd.example,email:ops@odd.example', /ops@odd\.example/],
    ['an invalid A-label', 'DNS:shop.odd.example,DNS:xn--zz.odd.example', /xn--zz\.odd\.example/]
  ]
  it.each(cases)('%s is refused by POST /ssl/configure, naming it; the order stays pending', async (_, san, named) => {
    const id = await multiDomainOrder('shop.odd.example')
    const before = await orderState(id)
    const res = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr: opensslCsrWithSan('shop.odd.example', san), dcv_method: 'dns' }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(400)
    expect(res.body.error).toMatch(/^could not accept CSR: /)
    expect(res.body.error).toMatch(named)
    expect(await orderState(id)).toEqual(before)
  })

  it('a hostile name is shown escaped and bounded in the message, never raw', async () => {
    const id = await multiDomainOrder('shop.hostile.example')
    const long = `${'a'.repeat(300)}.example`
    const csr = await x509Csr(['shop.hostile.example', 'evil\n\u001b[31m.example', long])
    const res = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr, dcv_method: 'dns' }
    })
    expect(res.status).toBe(400)
    const error = res.body.error as string
    expect([...error].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false)
    expect(error).toContain('evil\\n\\x1b[31m.example')
    expect(error.length).toBeLessThan(600)
  })
})

describe('a reissue with a CSR naming a raw-byte IDN', () => {
  it('is refused with the name, and the order keeps its certificate', async () => {
    const domain = 'reissue.idn.example'
    const id = await multiDomainOrder(domain)
    const conf = await s.request<Body>('POST', '/ssl/configure', {
      key: r.key,
      body: { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: 'dns' }
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    for (const v of conf.body.validation as { instructions: Record<string, string> }[])
      await dns.setCname(v.instructions.record_name, v.instructions.record_value)
    expect((await s.request<Body>('GET', `/ssl/${id}`, { key: r.key })).body.status).toBe('completed')
    const before = await orderState(id)
    const res = await s.request<Body>('POST', '/ssl/reissue', {
      key: r.key,
      body: { order_id: id, csr: await x509Csr([domain, 'bücher.idn.example']) }
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toContain('bücher.idn.example')
    expect(await orderState(id)).toEqual(before)
  })
})
