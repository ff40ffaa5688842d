import { createServer, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslText, opensslVerify, x509Csr } from '../support/csr'
import { startDns, startSmtp, startWeb, type DnsServer, type SmtpSink, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
interface Validation {
  name: string
  method: string
  status: string
  detail: string | null
  instructions: Record<string, string>
}

const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let dns: DnsServer
let web: WebServer
let smtp: SmtpSink
let r: TestReseller

beforeAll(async () => {
  ;[s, dns, web, smtp] = await Promise.all([startServer({ clock: clock.clock }), startDns(), startWeb(), startSmtp()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.httpsPort, String(web.httpsPort))
  // The web server is on loopback: a lab, so validation may reach it.
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  r = await s.reseller({ credit: 20_000 })
})
afterAll(async () => {
  await Promise.all([s?.close(), dns?.close(), web?.close(), smtp?.close()])
})

const order = async (body: Body, key = r.key): Promise<number> => {
  const res = await s.request<Body>('POST', '/orders', { key, body })
  expect(res.status).toBe(200)
  return res.body.order_id as number
}
const post = async (path: string, body: Body, key = r.key) => await s.request<Body>('POST', path, { key, body })
const get = async (path: string, key = r.key) => await s.request<Body>('GET', path, { key })
const validations = (b: Body): Validation[] => b.validation as Validation[]

/** Puts the validation file the instructions ask for on the loopback web server. */
function serveFiles(b: Body): void {
  for (const v of validations(b)) {
    const url = new URL(v.instructions.url)
    web.put(url.hostname, url.pathname, `${v.instructions.file_content}\n`)
  }
}

async function verifyDownload(orderId: number): Promise<Body> {
  const dl = await get(`/certificate/${orderId}/download`)
  expect(dl.status).toBe(200)
  const c = dl.body.certificate as Body
  const root = await s.service.localCa.rootPem()
  const v = opensslVerify(root, c.ca_bundle as string, c.certificate_pem as string, clock.now())
  expect(v.out).toMatch(/: OK/)
  expect(v.ok).toBe(true)
  expect(c.private_key_note).toMatch(/not returned/)
  expect(JSON.stringify(dl.body)).not.toMatch(/PRIVATE KEY/)
  return c
}

describe('POST /csr/decode', () => {
  it('decodes openssl and @peculiar/x509 CSRs, RSA and ECDSA', async () => {
    const a = await post('/csr/decode', {
      csr: opensslCsr(
        ['shop.example.com', 'www.shop.example.com'],
        'rsa:2048',
        '/C=NL/ST=Noord-Holland/L=Amsterdam/O=Shop BV/OU=Ops/CN=shop.example.com/emailAddress=ops@shop.example.com'
      )
    })
    expect(a.status).toBe(200)
    expect(a.body.csr).toMatchObject({
      domain: 'shop.example.com',
      organization: 'Shop BV',
      organizational_unit: 'Ops',
      locality: 'Amsterdam',
      state: 'Noord-Holland',
      country: 'NL',
      email: 'ops@shop.example.com',
      sans: ['shop.example.com', 'www.shop.example.com'],
      key_algorithm: 'RSA',
      key_size: 2048,
      signature_algorithm: 'sha256WithRSAEncryption',
      signature_valid: true
    })
    const b = await post('/csr/decode', { csr: await x509Csr(['api.example.com'], 'P-256') })
    expect(b.body.csr).toMatchObject({
      domain: 'api.example.com',
      key_algorithm: 'EC',
      curve: 'P-256',
      key_size: 256,
      signature_algorithm: 'ecdsa-with-SHA256',
      signature_valid: true
    })
  })

  it('answers garbage, a certificate and a truncated PEM with 400 and a clear message', async () => {
    const cert = await s.service.localCa.rootPem()
    const pem = opensslCsr(['example.com'])
    const cases: [unknown, RegExp][] = [
      [{ csr: 'garbage' }, /expected a PEM block/],
      [{ csr: cert }, /certificate, not a certificate signing request/],
      [{ csr: pem.slice(0, 250) }, /truncated/],
      [{ csr: '' }, /csr/],
      [{}, /csr is required/],
      [{ csr: pem, extra: 1 }, /unknown field "extra"/]
    ]
    for (const [body, message] of cases) {
      const res = await s.request<Body>('POST', '/csr/decode', { key: r.key, body })
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(400)
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(message) })
    }
  })
})

describe('http and https validation, issuance and download', () => {
  it('takes an order from an openssl CSR to a chain openssl verifies, over http on loopback', async () => {
    const id = await order({ product_id: 2, domain: 'shop.example.com', period: 12 })
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['shop.example.com', 'www.shop.example.com']),
      dcv_method: 'http'
    })
    expect(conf.status).toBe(200)
    expect(conf.body).toMatchObject({
      success: true,
      status: 'validation_pending',
      dcv_method: 'http',
      names: ['shop.example.com', 'www.shop.example.com'],
      certificate_issued: false
    })
    const md5 = (conf.body.csr as Body).md5 as string
    const sha = (conf.body.csr as Body).sha256 as string
    const v = validations(conf.body)
    expect(v.map((x) => [x.name, x.status])).toEqual([
      ['shop.example.com', 'pending'],
      ['www.shop.example.com', 'pending']
    ])
    expect(v[0].instructions).toMatchObject({
      method: 'http',
      url: `http://shop.example.com/.well-known/pki-validation/${md5}.txt`,
      file_name: `${md5}.txt`,
      file_content: expect.stringMatching(new RegExp(`^${sha}\\ncertdesk\\.invalid\\n[0-9a-f]{20}$`))
    })
    expect(v[1].instructions.url).toBe(`http://www.shop.example.com/.well-known/pki-validation/${md5}.txt`)

    // Nothing served yet: each name waits, saying when it looked and what it found; nothing is issued.
    const early = await get(`/ssl/${id}`)
    expect(early.body.status).toBe('validation_pending')
    expect(validations(early.body)[0]).toMatchObject({
      status: 'pending',
      checked_at: '2026-11-21 10:00:00',
      detail: expect.stringMatching(/HTTP 404/)
    })
    expect((await get(`/certificate/${id}/download`)).status).toBe(404)

    // Only the bare domain's file: that name passes, www still waits.
    web.put('shop.example.com', `/.well-known/pki-validation/${md5}.txt`, v[0].instructions.file_content)
    const half = await get(`/ssl/${id}`)
    expect(validations(half.body).map((x) => x.status)).toEqual(['valid', 'pending'])
    expect(half.body.status).toBe('validation_pending')
    expect(web.hostsSeen).toContain('www.shop.example.com')

    serveFiles(conf.body)
    const done = await get(`/ssl/${id}`)
    expect(done.body).toMatchObject({
      status: 'completed',
      certificate_issued: true,
      valid_from: '2026-11-21',
      reissue_count: 0
    })
    // 200 days from 2026-11-21 10:00, inclusive: ends 2027-06-09 09:59:59
    expect(done.body.valid_till).toBe('2027-06-09')
    expect(done.body.next_reissue_at).toBe('2027-05-26')

    const cs = await get(`/certificate/${id}`)
    expect(cs.body.certificate).toMatchObject({
      order_id: id,
      domain: 'shop.example.com',
      status: 'completed',
      valid_from: '2026-11-21',
      valid_till: '2027-06-09',
      has_certificate: true,
      has_ca_bundle: true,
      days_remaining: 200,
      is_expired: false,
      auto_reissue_enabled: true,
      max_validity_days: 200,
      next_reissue_at: '2027-05-26',
      reissue_count: 0,
      names: ['shop.example.com', 'www.shop.example.com']
    })
    const c = await verifyDownload(id)
    expect(c).toMatchObject({ domain: 'shop.example.com', valid_from: '2026-11-21', valid_till: '2027-06-09' })
    const text = opensslText(c.certificate_pem as string)
    expect(text).toMatch(/DNS:shop\.example\.com, DNS:www\.shop\.example\.com/)
    expect(text).toMatch(/Subject: CN\s?=\s?shop\.example\.com/)
    const o = await get(`/orders/${id}`)
    expect(o.body.order).toMatchObject({
      status: 'completed',
      cert_valid_from: '2026-11-21',
      cert_valid_till: '2027-06-09',
      next_reissue_at: '2027-05-26'
    })
  })

  it('validates over https with an ECDSA CSR made in code', async () => {
    const id = await order({ product_id: 1, domain: 'secure.example.com' })
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: await x509Csr(['secure.example.com'], 'P-384'),
      dcv_method: 'https'
    })
    expect(conf.status).toBe(200)
    expect(validations(conf.body)[0].instructions.url).toMatch(
      /^https:\/\/secure\.example\.com\/\.well-known\/pki-validation\/[0-9A-F]{32}\.txt$/
    )
    serveFiles(conf.body)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status).toBe('completed')
    await verifyDownload(id)
  })
})

describe('dns validation for a multi-domain order, each SAN on its own', () => {
  it('checks CNAME and TXT records at _<md5>.<domain> through the configured resolver', async () => {
    const id = await order({ product_id: 4, domain: 'multi.example.com', san_count: 0, san_wildcard_count: 1 })
    const names = ['multi.example.com', 'api.example.net', 'shop.example.org', '*.example.org']
    const conf = await post('/ssl/configure', { order_id: id, csr: await x509Csr(names, 'RSA'), dcv_method: 'dns' })
    expect(conf.status).toBe(200)
    const v = validations(conf.body)
    expect(v.map((x) => x.name)).toEqual(names)
    const md5 = ((conf.body.csr as Body).md5 as string).toLowerCase()
    expect(v[0].instructions).toMatchObject({
      method: 'dns',
      record_name: `_${md5}.multi.example.com`,
      record_type: 'CNAME'
    })
    expect(v[3].instructions.record_name).toBe(`_${md5}.example.org`) // the wildcard is validated at its base domain
    const value = v[0].instructions.record_value
    expect(value).toMatch(/^[0-9a-f]{32}\.[0-9a-f]{32}\.[0-9a-f]{20}\.certdesk\.invalid$/)

    await dns.setCname(v[0].instructions.record_name, value)
    await dns.setTxt(v[1].instructions.record_name, value)
    await dns.setCname(v[2].instructions.record_name, 'wrong.certdesk.invalid')
    const partial = await get(`/ssl/${id}`)
    expect(partial.body.status).toBe('validation_pending')
    expect(validations(partial.body).map((x) => x.status)).toEqual(['valid', 'valid', 'pending', 'pending'])
    expect(validations(partial.body)[2].detail).toMatch(/holds wrong\.certdesk\.invalid/)
    expect(validations(partial.body)[3].detail).toMatch(/no CNAME or TXT record/)

    await dns.clear(v[2].instructions.record_name)
    await dns.setCname(v[2].instructions.record_name, value)
    await dns.setTxt(v[3].instructions.record_name, value)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status).toBe('completed')
    const c = await verifyDownload(id)
    expect(opensslText(c.certificate_pem as string)).toMatch(
      /DNS:multi\.example\.com, DNS:api\.example\.net, DNS:shop\.example\.org, DNS:\*\.example\.org/
    )
  })
})

describe('email validation', () => {
  it('mails a code through SMTP, records the approval and issues; resend sends a new code', async () => {
    await s.service.settings.set(DCV_SETTINGS.smtpUrl, smtp.url)
    try {
      const id = await order({ product_id: 3, domain: '*.mail.example.com' })
      const conf = await post('/ssl/configure', {
        order_id: id,
        csr: opensslCsr(['*.mail.example.com', 'mail.example.com'], 'ec:P-256'),
        approver_email: 'admin@mail.example.com'
      })
      expect(conf.status).toBe(200)
      expect(conf.body).toMatchObject({
        dcv_method: 'email',
        approver_email: 'admin@mail.example.com',
        status: 'validation_pending'
      })
      expect(validations(conf.body).map((v) => v.instructions.approver_email)).toEqual([
        'admin@mail.example.com',
        'admin@mail.example.com'
      ])
      const mine = () =>
        smtp.messages.filter(
          (m) =>
            m.raw.includes(`order ${conf.body.order_number as string}`) ||
            m.raw.includes(conf.body.order_number as string)
        )
      expect(mine().length).toBe(2)
      expect(mine()[0].to).toEqual(['admin@mail.example.com'])
      const codes = mine().map((m) => /^\s{4}([A-Z2-9]{10})\s*$/m.exec(m.raw)?.[1])
      expect(codes.every(Boolean)).toBe(true)

      const wrong = await post('/ssl/approve', { order_id: id, code: 'AAAAAAAAAA' })
      expect(wrong.status).toBe(400)
      expect(wrong.body.error).toMatch(/code does not match/)

      const resent = await post('/ssl/resend-validation', { order_id: id })
      expect(resent.status).toBe(200)
      expect(mine().length).toBe(4)
      // the old codes no longer work once new ones were sent
      expect((await post('/ssl/approve', { order_id: id, code: codes[0] as string })).status).toBe(400)
      const fresh = mine()
        .slice(2)
        .map((m) => /^\s{4}([A-Z2-9]{10})\s*$/m.exec(m.raw)?.[1] as string)
      const one = await post('/ssl/approve', { order_id: id, code: fresh[0].toLowerCase() })
      expect(one.status).toBe(200)
      expect(one.body.status).toBe('validation_pending')
      const two = await post('/ssl/approve', { order_id: id, code: fresh[1] })
      expect(two.body.status).toBe('completed')
      const c = await verifyDownload(id)
      expect(opensslText(c.certificate_pem as string)).toMatch(/DNS:\*\.mail\.example\.com, DNS:mail\.example\.com/)
    } finally {
      await s.service.settings.set(DCV_SETTINGS.smtpUrl, '')
    }
  })

  it('keeps the order configured when the SMTP server refuses, and says so; resend then answers 503', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as AddressInfo
        srv.close(() => resolve(port))
      })
    })
    await s.service.settings.set(DCV_SETTINGS.smtpUrl, `smtp://127.0.0.1:${closed}`)
    try {
      const id = await order({ product_id: 2, domain: 'nomail.example.com' })
      const conf = await post('/ssl/configure', {
        order_id: id,
        csr: opensslCsr(['nomail.example.com']),
        approver_email: 'webmaster@nomail.example.com'
      })
      expect(conf.status).toBe(200)
      expect(conf.body.status).toBe('validation_pending')
      expect(validations(conf.body)[0]).toMatchObject({
        status: 'pending',
        detail: expect.stringMatching(/could not send the approval email to webmaster@nomail\.example\.com/),
        instructions: { method: 'email', approver_email: 'webmaster@nomail.example.com', sent_at: null }
      })
      const resend = await post('/ssl/resend-validation', { order_id: id })
      expect(resend.status).toBe(503)
      expect(resend.body.error).toMatch(/could not send the approval email/)
    } finally {
      await s.service.settings.set(DCV_SETTINGS.smtpUrl, '')
    }
  })

  it('keeps the message in the outbox when no SMTP server is configured', async () => {
    const id = await order({ product_id: 2, domain: 'outbox.example.com' })
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['outbox.example.com']),
      dcv_method: 'email',
      approver_email: 'hostmaster@example.com'
    })
    expect(conf.status).toBe(200)
    const box = await s.service.certificates.outbox(id)
    expect(box).toHaveLength(1)
    expect(box[0]).toMatchObject({ to: 'hostmaster@example.com', delivery: 'outbox' })
    expect(validations(conf.body)[0].detail).toMatch(/outbox/)
  })
})

describe('spec defaults: email validation to admin@ when no approver is named', () => {
  // Reseller API v3.0, POST /ssl/configure: only order_id and csr are required, dcv_method
  // defaults to email and approver_email is optional.
  it('configures a multi-domain order from order_id and csr alone, mailing admin@ at each base domain', async () => {
    const id = await order({ product_id: 4, domain: 'bare.example.com', san_wildcard_count: 1 })
    const res = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['bare.example.com', 'shop.example.net', '*.example.org'], 'ec:P-256')
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      status: 'validation_pending',
      dcv_method: 'email',
      approver_email: 'admin@bare.example.com'
    })
    expect(validations(res.body).map((v) => [v.name, v.method, v.instructions.approver_email])).toEqual([
      ['bare.example.com', 'email', 'admin@bare.example.com'],
      ['shop.example.net', 'email', 'admin@shop.example.net'],
      ['*.example.org', 'email', 'admin@example.org']
    ])
    expect((await s.service.certificates.outbox(id)).map((m) => m.to).sort()).toEqual([
      'admin@bare.example.com',
      'admin@example.org',
      'admin@shop.example.net'
    ])
  })

  it('changes to email with only order_id and dcv_method; dcv_method itself stays required', async () => {
    const id = await order({ product_id: 4, domain: 'switch.example.com' })
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['switch.example.com', 'api.switch.example.com']),
      dcv_method: 'dns'
    })
    expect(conf.status).toBe(200)
    const missing = await post('/ssl/change-dcv', { order_id: id })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ success: false, error: expect.stringMatching(/dcv_method is required/) })
    const changed = await post('/ssl/change-dcv', { order_id: id, dcv_method: 'email' })
    expect(changed.status, JSON.stringify(changed.body)).toBe(200)
    expect(validations(changed.body).map((v) => [v.method, v.instructions.approver_email])).toEqual([
      ['email', 'admin@switch.example.com'],
      ['email', 'admin@api.switch.example.com']
    ])
    // One approver named: the same mailbox at each name's own domain.
    const named = await post('/ssl/change-dcv', {
      order_id: id,
      dcv_method: 'email',
      approver_email: 'Webmaster@Switch.Example.com'
    })
    expect(named.status).toBe(200)
    expect(validations(named.body).map((v) => v.instructions.approver_email)).toEqual([
      'webmaster@switch.example.com',
      'webmaster@api.switch.example.com'
    ])
    // Another reseller's order is 404, with or without an approver.
    const other = await s.reseller({ credit: 10 })
    for (const body of [
      { order_id: id, dcv_method: 'email' },
      { order_id: id, csr: opensslCsr(['switch.example.com']) }
    ]) {
      const path = 'csr' in body ? '/ssl/configure' : '/ssl/change-dcv'
      const res = await post(path, body, other.key)
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/not found/) })
    }
  })
})

describe('refusals: 400 and 409, nothing changed', () => {
  it('refuses CSRs and validation choices that do not fit, with the reason', async () => {
    const id = await order({ product_id: 2, domain: 'fit.example.com' })
    const badSig = (() => {
      const pem = opensslCsr(['fit.example.com'])
      const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')
      der[der.length - 12] ^= 0x01
      return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
    })()
    const cases: [Body, RegExp][] = [
      [{ csr: badSig, dcv_method: 'http' }, /signature does not verify/],
      [{ csr: opensslCsr(['fit.example.com'], 'rsa:1024'), dcv_method: 'http' }, /1024 bits; at least 2048/],
      [{ csr: opensslCsr(['fit.example.com'], 'ec:P-521'), dcv_method: 'http' }, /curve P-521 is not supported/],
      [
        { csr: opensslCsr(['other.example.com']), dcv_method: 'http' },
        /does not name the order domain fit\.example\.com/
      ],
      [
        { csr: opensslCsr(['fit.example.com', 'api.fit.example.com']), dcv_method: 'http' },
        /api\.fit\.example\.com is not covered by this order/
      ],
      [{ csr: opensslCsr(['fit.example.com', '*.fit.example.com']), dcv_method: 'dns' }, /not covered by this order/],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'ceo@fit.example.com' },
        /not an approver address; use one of admin@/
      ],
      // Hostile approver addresses: a second recipient, header injection, look-alike letters,
      // a top-level label, a trailing dot, a longer name that merely ends like the domain.
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@fit.example.com, root@evil.test' },
        /not an approver address/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@fit.example.com\r\nBcc: root@evil.test' },
        /not an approver address/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@evil.test@fit.example.com' },
        /not an approver address/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@fit.ex\u0430mple.com' },
        /not an approver address/
      ],
      [{ csr: opensslCsr(['fit.example.com']), approver_email: 'admin@com' }, /not at fit\.example\.com or a parent/],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@fit.example.com.' },
        /not at fit\.example\.com or a parent/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@t.example.com' },
        /not at fit\.example\.com or a parent/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: `admin@${'a'.repeat(250)}.fit.example.com` },
        /approver_email must NOT have more than 254 characters/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), approver_email: 'admin@elsewhere.com' },
        /not at fit\.example\.com or a parent/
      ],
      [
        { csr: opensslCsr(['fit.example.com']), dcv_method: 'http', approver_email: 'admin@fit.example.com' },
        /only for email validation/
      ],
      [{ csr: opensslCsr(['fit.example.com']), dcv_method: 'ftp' }, /dcv_method must be one of email, http, https, dns/]
    ]
    for (const [body, message] of cases) {
      const res = await post('/ssl/configure', { order_id: id, ...body })
      expect(res.status, String(message)).toBe(400)
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(message) })
    }
    expect((await get(`/orders/${id}`)).body.order).toMatchObject({ status: 'pending' })
    expect((await get(`/ssl/${id}`)).body).toMatchObject({ csr: null, validation: [] })
  })

  it('counts SANs against what the multi-domain order paid for and refuses http for wildcards', async () => {
    // PositiveSSL Multi-Domain includes 2 SANs; this order buys 1 more and no wildcard SAN.
    const id = await order({ product_id: 4, domain: 'md.example.com', san_count: 1 })
    const four = opensslCsr(['md.example.com', 'a.example.net', 'b.example.net', 'c.example.net', 'd.example.net'])
    expect((await post('/ssl/configure', { order_id: id, csr: four, dcv_method: 'dns' })).body.error).toMatch(
      /asks for 4 additional name\(s\) but the order covers 3 \(2 included \+ 1 bought\)/
    )
    const wild = opensslCsr(['md.example.com', '*.example.net'])
    expect((await post('/ssl/configure', { order_id: id, csr: wild, dcv_method: 'dns' })).body.error).toMatch(
      /paid for 0 wildcard SAN/
    )
    const wc = await order({ product_id: 3, domain: '*.wild.example.com' })
    const res = await post('/ssl/configure', {
      order_id: wc,
      csr: opensslCsr(['*.wild.example.com']),
      dcv_method: 'http'
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatch(/cannot validate the wildcard name \*\.wild\.example\.com/)
  })

  it('refuses email validation on and after 2028-03-15 (constructed email sunset)', async () => {
    const id = await order({ product_id: 2, domain: 'sunset.example.com' })
    const before = clock.now()
    clock.set('2028-03-15T00:00:00Z')
    try {
      const res = await post('/ssl/configure', {
        order_id: id,
        csr: opensslCsr(['sunset.example.com']),
        approver_email: 'admin@sunset.example.com'
      })
      expect(res.status).toBe(400)
      expect(res.body.error).toMatch(/no longer allowed.*2028-03-15; use http, https or dns/)
      clock.set('2028-03-14T23:59:59Z')
      const ok = await post('/ssl/configure', {
        order_id: id,
        csr: opensslCsr(['sunset.example.com']),
        approver_email: 'admin@sunset.example.com'
      })
      expect(ok.status).toBe(200)
      // A code mailed the second before the sunset no longer validates after it.
      const code = /^\s{4}([A-Z2-9]{10})\s*$/m.exec((await s.service.certificates.outbox(id))[0].body)?.[1] as string
      clock.set('2028-03-15T00:00:01Z')
      const late = await post('/ssl/approve', { order_id: id, code })
      expect(late.status).toBe(400)
      expect(late.body.error).toMatch(/no longer allowed/)
      expect((await post('/ssl/resend-validation', { order_id: id })).status).toBe(400)
    } finally {
      clock.set(before)
    }
  })

  it('answers 409 for actions the order state forbids and 404 for another reseller', async () => {
    const id = await order({ product_id: 2, domain: 'state.example.com' })
    expect((await post('/ssl/change-dcv', { order_id: id, dcv_method: 'dns' })).status).toBe(409)
    expect((await post('/ssl/resend-validation', { order_id: id })).status).toBe(409)
    expect((await post('/ssl/reissue', { order_id: id })).body).toEqual({
      success: false,
      error: expect.stringMatching(/no active certificate/)
    })
    const csr = opensslCsr(['state.example.com'])
    expect((await post('/ssl/configure', { order_id: id, csr, dcv_method: 'http' })).status).toBe(200)
    const again = await post('/ssl/configure', { order_id: id, csr, dcv_method: 'http' })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/it is validation_pending; only a pending order takes a CSR/)
    const resend = await post('/ssl/resend-validation', { order_id: id })
    expect(resend.status).toBe(409)
    expect(resend.body.error).toMatch(/its method is http, not email/)
    expect((await post('/ssl/reissue', { order_id: id })).status).toBe(409)

    // change-dcv moves the pending names to dns, with new instructions
    const changed = await post('/ssl/change-dcv', { order_id: id, dcv_method: 'dns' })
    expect(changed.status).toBe(200)
    expect(validations(changed.body)[0].instructions.method).toBe('dns')

    const cancelled = await order({ product_id: 2, domain: 'gone.example.com' })
    expect((await s.request('PUT', `/orders/${cancelled}`, { key: r.key, body: { action: 'cancel' } })).status).toBe(
      200
    )
    expect(
      (await post('/ssl/configure', { order_id: cancelled, csr: opensslCsr(['gone.example.com']), dcv_method: 'http' }))
        .status
    ).toBe(409)

    // An on-invoice order takes no CSR until it is paid.
    const reseller = await s.service.resellers.get(r.id)
    const unpaid = (await s.service.orders.create(reseller, { productId: 2, domain: 'unpaid.example.com' }, 'invoice'))
      .order.id
    const res = await post('/ssl/configure', {
      order_id: unpaid,
      csr: opensslCsr(['unpaid.example.com']),
      dcv_method: 'http'
    })
    expect(res.status).toBe(409)
    expect(res.body.error).toMatch(/it is unpaid; pay it first/)

    const other = await s.reseller({ credit: 10 })
    for (const [m, p, body] of [
      ['GET', `/ssl/${id}`, undefined],
      ['GET', `/certificate/${id}`, undefined],
      ['GET', `/certificate/${id}/download`, undefined],
      ['POST', '/ssl/change-dcv', { order_id: id, dcv_method: 'http' }],
      ['POST', '/ssl/configure', { order_id: id, csr, dcv_method: 'http' }]
    ] as const) {
      const res = await s.request<Body>(m, p, { key: other.key, body })
      expect(res.status, `${m} ${p}`).toBe(404)
    }
  })
})

describe('reissue', () => {
  it('reissues at once with fresh validation, and asks for validation when the names change', async () => {
    const id = await order({ product_id: 2, domain: 're.example.com', period: 24 })
    const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr(['re.example.com']), dcv_method: 'http' })
    serveFiles(conf.body)
    expect((await get(`/ssl/${id}`)).body.status).toBe('completed')
    const first = (await get(`/certificate/${id}`)).body.certificate as Body

    clock.advanceDays(3)
    const same = await post('/ssl/reissue', { order_id: id })
    expect(same.status).toBe(200)
    expect(same.body).toMatchObject({ status: 'completed', valid_from: '2026-11-24', reissue_count: 0 })
    const second = (await get(`/certificate/${id}`)).body.certificate as Body
    expect(second.serial_number).not.toBe(first.serial_number)
    await verifyDownload(id)

    // A new key and the www name: www needs validating; the old certificate stays downloadable.
    const grown = await post('/ssl/reissue', {
      order_id: id,
      csr: await x509Csr(['re.example.com', 'www.re.example.com'], 'P-256')
    })
    expect(grown.status).toBe(200)
    expect(grown.body.status).toBe('validation_pending')
    expect(validations(grown.body).map((v) => [v.name, v.status])).toEqual([
      ['re.example.com', 'valid'],
      ['www.re.example.com', 'pending']
    ])
    expect((await get(`/certificate/${id}/download`)).status).toBe(200)
    serveFiles(grown.body)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status).toBe('completed')
    const c = await verifyDownload(id)
    expect(opensslText(c.certificate_pem as string)).toMatch(/DNS:re\.example\.com, DNS:www\.re\.example\.com/)
    expect(opensslText(c.certificate_pem as string)).toMatch(/ASN1 OID: prime256v1|NIST CURVE: P-256/)

    // Another method means validating again with it, for every name.
    const viaDns = await post('/ssl/reissue', { order_id: id, dcv_method: 'dns' })
    expect(viaDns.body.status).toBe('validation_pending')
    expect(validations(viaDns.body).map((v) => [v.method, v.status])).toEqual([
      ['dns', 'pending'],
      ['dns', 'pending']
    ])
    for (const v of validations(viaDns.body)) await dns.setTxt(v.instructions.record_name, v.instructions.record_value)
    const viaDnsDone = await get(`/ssl/${id}`)
    expect(viaDnsDone.body).toMatchObject({ status: 'completed', dcv_method: 'dns', reissue_count: 0 })
    expect((await s.service.certificates.history(r.id, id)).map((x) => x.reason)).toEqual([
      'reissue',
      'reissue',
      'reissue',
      'initial'
    ])
  })
})

describe('code signing', () => {
  it('issues from the CSR with no domain validation, codeSigning EKU, and no automatic reissue', async () => {
    const id = await order({ product_id: 10 })
    const weak = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr([], 'rsa:2048', '/C=US/O=Contoso Ltd/CN=Contoso Ltd')
    })
    expect(weak.status).toBe(400)
    expect(weak.body.error).toMatch(/at least 3072/)
    const res = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr([], 'rsa:3072', '/C=US/O=Contoso Ltd/CN=Contoso Ltd')
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'completed', dcv_method: 'none', validation: [], next_reissue_at: null })
    const cs = (await get(`/certificate/${id}`)).body.certificate as Body
    expect(cs).toMatchObject({ auto_reissue_enabled: false, next_reissue_at: null, has_certificate: true })
    const dl = (await get(`/certificate/${id}/download`)).body.certificate as Body
    const text = opensslText(dl.certificate_pem as string)
    expect(text).toMatch(/Code Signing/)
    expect(text).toMatch(/O\s?=\s?Contoso Ltd/)
  })
})
