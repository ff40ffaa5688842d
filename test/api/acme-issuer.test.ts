/**
 * The ACME issuer towards an external RFC 8555 CA: Pebble (Debian package) on loopback with
 * EAB required and pebble-challtestsrv as its DNS, reached through the normal order →
 * POST /ssl/configure → GET /ssl/{id} → download flow. The "customer web server" that serves
 * the http-01 answer is a real HTTP server on loopback, the port Pebble validates against.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACME_ISSUER_SETTINGS } from '../../src-main/core/acme-client/acme-issuer'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { freePort, run, setTxt, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { opensslCsr, opensslVerify } from '../support/csr'
import { startWeb, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Validation = { name: string; status: string; detail: string | null; instructions: Record<string, string> }

const EAB_KID = 'certdesk-test'
const EAB_HMAC = Buffer.from('a 32-byte key for the pebble EAB').toString('base64url')
/** Pebble's leaf lifetime, set to stay inside the CA/B Forum 200 days. */
const PEBBLE_VALIDITY_DAYS = 199

let s: TestServer
let dns: ChallTestSrv
let web: WebServer
let pebble: ChildProcess
let pebbleExited: Promise<void>
let work: string
let mgmt: string
let reseller: TestReseller

/** The test CA for Pebble's own HTTPS listener (Pebble ships none in Debian). */
async function pebbleTls(dir: string): Promise<void> {
  const o = (args: string[]) => run('openssl', args, { seconds: 30 })
  await o([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Pebble test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
    '-keyout',
    join(dir, 'ca.key'),
    '-out',
    join(dir, 'ca.pem')
  ])
  await o([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'req.pem')
  ])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
  await o([
    'x509',
    '-req',
    '-in',
    join(dir, 'req.pem'),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'ext.cnf'),
    '-out',
    join(dir, 'cert.pem')
  ])
}

function getText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: new Agent({ ca }), timeout: 10_000 }, (res) => {
      let t = ''
      res.on('data', (d) => (t += d))
      res.on('end', () => resolve(t))
    })
    req.on('error', reject)
    req.end()
  })
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'certdesk-pebble-'))
  ;[s, dns, web] = (await Promise.all([startServer(), startChallTestSrv(), startWeb(), pebbleTls(work)])) as [
    TestServer,
    ChallTestSrv,
    WebServer,
    void
  ]
  const [port, mgmtPort, tlsPort] = [await freePort(), await freePort(), await freePort()]
  writeFileSync(
    join(work, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: join(work, 'cert.pem'),
        privateKey: join(work, 'key.pem'),
        httpPort: web.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: true,
        externalAccountMACKeys: { [EAB_KID]: EAB_HMAC },
        certificateValidityPeriod: PEBBLE_VALIDITY_DAYS * 86_400
      }
    })
  )
  pebble = spawn('timeout', ['-k', '5', '600', 'pebble', '-config', join(work, 'pebble.json'), '-dnsserver', dns.dns], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let log = ''
  pebble.stdout?.on('data', (d) => (log += d))
  pebble.stderr?.on('data', (d) => (log += d))
  pebbleExited = new Promise((resolve) => pebble.on('close', () => resolve()))
  const ca = (await import('node:fs')).readFileSync(join(work, 'ca.pem'), 'utf8')
  for (let i = 0; ; i++) {
    try {
      await getText(`https://localhost:${port}/dir`, ca)
      break
    } catch {
      if (i > 100 || pebble.exitCode !== null) throw new Error(`could not start pebble: ${log}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  mgmt = `https://localhost:${mgmtPort}`
  // What the admin sets: the directory, EAB from the CA, and the private root its HTTPS uses.
  await s.service.acmeIssuer.configure(`https://localhost:${port}/dir`, EAB_KID, EAB_HMAC, join(work, 'ca.pem'))
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.dns)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  reseller = await s.reseller({ credit: 1000 })
})

afterAll(async () => {
  if (pebble && pebble.exitCode === null) pebble.kill('SIGTERM')
  await pebbleExited
  await Promise.all([web?.close(), dns?.stop()])
  await s?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const post = async (path: string, body: Body) => await s.request<Body>('POST', path, { key: reseller.key, body })
const get = async (path: string) => await s.request<Body>('GET', path, { key: reseller.key })
const validations = (b: Body): Validation[] => b.validation as Validation[]

async function order(domain: string): Promise<number> {
  const res = await post('/orders', { product_id: 2, domain })
  expect(res.status).toBe(200)
  return res.body.order_id as number
}

describe('the ACME issuer with Pebble', () => {
  it("shows the CA's http-01 challenge as the instructions and does not spend it before it is published", async () => {
    const id = await order('shop.pebble.test')
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['shop.pebble.test', 'www.shop.pebble.test'], 'ec:P-256'),
      dcv_method: 'http'
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    expect(conf.body.status).toBe('validation_pending')
    const v = validations(conf.body)
    expect(v.map((x) => x.name)).toEqual(['shop.pebble.test', 'www.shop.pebble.test'])
    // The instructions are the CA's http-01 challenge (RFC 8555 §8.3), not the CertDesk file.
    for (const x of v) {
      expect(x.instructions.url).toMatch(
        new RegExp(`^http://${x.name.replace(/\./g, '\\.')}/\\.well-known/acme-challenge/[A-Za-z0-9_-]{43}$`)
      )
      expect(x.instructions.file_content.startsWith(`${x.instructions.file_name}.`)).toBe(true)
    }
    // Nothing published yet: CertDesk looks first and does not ask the CA, the order waits.
    const early = await get(`/ssl/${id}`)
    expect(early.status, JSON.stringify(early.body)).toBe(200)
    expect(early.body.status).toBe('validation_pending')
    expect(validations(early.body)[0].detail).toMatch(
      /^not published yet, the ACME CA was not asked: could not validate shop\.pebble\.test: http:\/\/shop\.pebble\.test\/\.well-known\/acme-challenge\/\S+ answered 404$/
    )
    expect(validations(early.body)[0].status).toBe('pending')
    // Published later, the same challenge still works.
    for (const x of v) web.put(x.name, new URL(x.instructions.url).pathname, x.instructions.file_content)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    expect(validations(done.body).map((x) => x.status)).toEqual(['valid', 'valid'])
    expect(validations(done.body)[0].detail).toBe('validated by the ACME CA (http-01)')
  })

  it('issues once the customer publishes the challenge answers, and the chain verifies against the CA root', async () => {
    const id = await order('www2.pebble.test')
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['www2.pebble.test'], 'rsa:2048'),
      dcv_method: 'http'
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    for (const x of validations(conf.body))
      web.put(x.name, new URL(x.instructions.url).pathname, x.instructions.file_content)
    const done = await get(`/ssl/${id}`)
    expect(done.status).toBe(200)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    const dl = await get(`/certificate/${id}/download`)
    expect(dl.status).toBe(200)
    const cert = dl.body.certificate as Body
    const caPem = (await import('node:fs')).readFileSync(join(work, 'ca.pem'), 'utf8')
    const root = await getText(`${mgmt}/roots/0`, caPem)
    const verified = opensslVerify(root, cert.ca_bundle as string, cert.certificate_pem as string, new Date())
    expect(verified.out).toContain(': OK')
    expect(verified.ok).toBe(true)
    const status = await get(`/certificate/${id}`)
    expect((status.body.certificate as Body).has_certificate).toBe(true)
    const days =
      (new Date(cert.valid_till as string).getTime() - new Date(cert.valid_from as string).getTime()) / 86_400_000
    expect(days).toBeLessThanOrEqual(200)
    const stored = (await s.service.ctx.store.get('SELECT issuer FROM certificates WHERE order_id = ?', id)) as {
      issuer: string
    }
    expect(stored.issuer).toBe(`acme:${await s.service.settings.get(ACME_ISSUER_SETTINGS.directoryUrl)}`)
  })

  it('validates dns → dns-01 through the CA', async () => {
    const id = await order('dns.pebble.test')
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['dns.pebble.test'], 'ec:P-256'),
      dcv_method: 'dns'
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    const [x] = validations(conf.body)
    expect(x.instructions).toMatchObject({
      method: 'dns',
      record_name: '_acme-challenge.dns.pebble.test',
      record_type: 'TXT'
    })
    expect(x.instructions.record_value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    await setTxt(dns, x.instructions.record_name, x.instructions.record_value)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
  })

  it('validates the host by http-01 and the wildcard by dns-01 in one order, and revokes at the CA (RFC 8555 §7.6)', async () => {
    const created = await post('/orders', { product_id: 3, domain: '*.mixed.pebble.test' })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.order_id as number
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['*.mixed.pebble.test', 'mixed.pebble.test'], 'ec:P-256'),
      dcv_method: 'http',
      dcv_per_name: [{ name: '*.mixed.pebble.test', dcv_method: 'dns' }]
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    const v = validations(conf.body)
    expect(v.map((x) => [x.name, x.instructions.method])).toEqual([
      ['*.mixed.pebble.test', 'dns'],
      ['mixed.pebble.test', 'http']
    ])
    await setTxt(dns, v[0].instructions.record_name, v[0].instructions.record_value)
    web.put('mixed.pebble.test', new URL(v[1].instructions.url).pathname, v[1].instructions.file_content)
    const done = await get(`/ssl/${id}`)
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
    const serial = (((await get(`/certificate/${id}`)).body.certificate as Body).serial_number as string).toLowerCase()

    expect(await s.service.acmeIssuer.windows.get(id)).not.toBeNull()
    const revoked = await post('/ssl/revoke', { order_id: id, reason: 'keyCompromise' })
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    expect(revoked.body.certificate).toMatchObject({ revoked: true, revocation_reason: 'keyCompromise' })
    // Nothing renews it by itself any more, not even the CA's renewal window (RFC 9773).
    expect(await s.service.acmeIssuer.windows.get(id)).toBeNull()
    expect((await get(`/ssl/${id}`)).body).toMatchObject({ certificate_revoked: true, next_reissue_at: null })
    // The CA itself holds it revoked, with the reason sent (its management interface says so).
    const caPem = (await import('node:fs')).readFileSync(join(work, 'ca.pem'), 'utf8')
    const status = JSON.parse(
      await getText(`${mgmt}/cert-status-by-serial/${serial.replace(/^0+/, '')}`, caPem)
    ) as Body
    expect(status).toMatchObject({ Status: 'Revoked', Reason: 1 })
    expect((await post('/ssl/revoke', { order_id: id, reason: 'keyCompromise' })).status).toBe(409)
  })

  it('refuses email validation with a clear message and changes nothing', async () => {
    const id = await order('mail.pebble.test')
    const res = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(['mail.pebble.test']),
      dcv_method: 'email',
      approver_email: 'admin@mail.pebble.test'
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe(
      'email validation is not available for certificates from the external ACME CA: RFC 8555 validates with http-01 (dcv_method http) or dns-01 (dcv_method dns); choose one of those'
    )
    // The default method (email) is refused the same way, before any approver question.
    const byDefault = await post('/ssl/configure', { order_id: id, csr: opensslCsr(['mail.pebble.test']) })
    expect(byDefault.status).toBe(400)
    expect(byDefault.body.error).toMatch(
      /^email validation is not available for certificates from the external ACME CA/
    )
    const after = await get(`/orders/${id}`)
    expect((after.body.order as Body).status).toBe('pending')
    expect(await s.service.ctx.secrets.get('issuer.acme/eab-hmac')).toBe(EAB_HMAC)
    expect(await s.service.settings.get('issuer.acme.eab_kid')).toBe(EAB_KID)
  })
})
