/**
 * Real ACME clients against the embedded server: certbot and lego (Debian packages) register
 * with the EAB values of GET /orders/{id}/acme, prove control over http-01 with their own
 * loopback responders, and download a chain that `openssl verify` accepts. DNS for the checks
 * is pebble-challtestsrv on loopback.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { x509 } from '../../src-main/core/certificates/x509'
import { ACME_SETTINGS, startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { freePort, run, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import {
  certbot as runCertbot,
  lego as runLego,
  opensslVerify as verifyWithRoot,
  type AcmeClientRun
} from '../support/acme-clients'
import { startServer, type TestServer, type TestReseller } from '../support/server'

type Acme = {
  domains: { id: string; name: string }[]
  account: {
    eab_kid: string
    eab_hmac_key: string
    server_url: string
    status: string
    accounts: { url: string; status: string }[]
  }
}

let s: TestServer
let acme: RunningAcmeServer
let dns: ChallTestSrv
let work: string
let rootPath: string
let httpPort: number
let reseller: TestReseller

beforeAll(async () => {
  s = await startServer()
  dns = await startChallTestSrv()
  httpPort = await freePort()
  await s.service.settings.set(ACME_SETTINGS.resolver, dns.dns)
  await s.service.settings.set(ACME_SETTINGS.http01Port, String(httpPort))
  // certbot and lego answer on loopback: a lab, so validation may reach it.
  await s.service.settings.set(ACME_SETTINGS.allowPrivateAddresses, 'true')
  acme = await startAcmeServer(s.service, { port: 0 })
  work = mkdtempSync(join(tmpdir(), 'certdesk-acme-clients-'))
  rootPath = join(work, 'root.pem')
  // The root as a user gets it: from the local listener, without an API key.
  const root = await fetch(`${s.url}/acme/root-ca.pem`)
  expect(root.status).toBe(200)
  writeFileSync(rootPath, await root.text())
  reseller = await s.reseller({ credit: 500 })
})

afterAll(async () => {
  await acme?.close()
  await dns?.stop()
  await s?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

async function subscribe(domain: string): Promise<{ orderId: number; acme: Acme }> {
  const created = await s.request<Record<string, unknown>>('POST', '/orders', {
    key: reseller.key,
    body: { product_id: 12, domain }
  })
  expect(created.status).toBe(200)
  const orderId = created.body.order_id as number
  const res = await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })
  expect(res.status).toBe(200)
  return { orderId, acme: res.body.acme }
}

const client = (a: Acme, names: string[], hmac = a.account.eab_hmac_key): AcmeClientRun => ({
  server: a.account.server_url,
  eabKid: a.account.eab_kid,
  eabHmacKey: hmac,
  names,
  email: 'ops@example.com',
  httpPort,
  rootPath
})

const certbot = (dir: string, a: Acme, names: string[], hmac?: string) => runCertbot(dir, client(a, names, hmac))
const lego = (dir: string, a: Acme, names: string[], command?: string[]) => runLego(dir, client(a, names), command)
const opensslVerify = (chainPem: string, dir: string) => verifyWithRoot(chainPem, dir, rootPath)

const dnsNames = (c: InstanceType<typeof x509.X509Certificate>): string[] =>
  (c.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? []).map((n) => n.value).sort()

describe('certbot against the embedded ACME server', () => {
  it('obtains a certificate for the subscription names over http-01, and the chain verifies', async () => {
    const { orderId, acme: a } = await subscribe('shop.example.com')
    expect(a.account.server_url).toBe(acme.directoryUrl)
    const dir = join(work, 'certbot-ok')
    const r = await certbot(dir, a, ['shop.example.com', 'www.shop.example.com'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const chain = readFileSync(join(dir, 'config', 'live', 'shop.example.com', 'fullchain.pem'), 'utf8')
    const v = await opensslVerify(chain, dir)
    expect(v.out).toContain(': OK')
    expect(v.code).toBe(0)
    expect(v.count).toBe(2)
    expect(dnsNames(v.leaf)).toEqual(['shop.example.com', 'www.shop.example.com'])
    // BR §6.3.2 as of today (SC-081): at most 200 days, counted inclusively.
    const days = (v.leaf.notAfter.getTime() - v.leaf.notBefore.getTime() + 1000) / 86_400_000
    expect(days).toBeLessThanOrEqual(200)
    expect(days).toBeGreaterThan(199)

    // The subscription now shows the bound account and its URL.
    const after = (await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })).body.acme
    expect(after.account.status).toBe('valid')
    expect(after.account.accounts).toHaveLength(1)
    expect(after.account.accounts[0].url).toMatch(new RegExp(`^${acme.baseUrl}/acme/acct/\\d+$`))
    const accountFiles = await run('find', [
      join(dir, 'config', 'accounts'),
      '-name',
      'regr.json',
      '-exec',
      'cat',
      '{}',
      ';'
    ])
    expect(accountFiles.stdout).toContain(after.account.accounts[0].url)

    // RFC 9773: renewal information for this certificate, inside its lifetime.
    const aki = v.leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId as string
    let serial = v.leaf.serialNumber
    if (Number.parseInt(serial.slice(0, 2), 16) >= 0x80) serial = `00${serial}`
    const certId = `${Buffer.from(aki, 'hex').toString('base64url')}.${Buffer.from(serial, 'hex').toString('base64url')}`
    const ari = await run('curl', ['-s', '-D-', '--cacert', rootPath, `${acme.baseUrl}/acme/renewal-info/${certId}`])
    expect(ari.stdout).toMatch(/retry-after: 21600/i)
    const window = JSON.parse(ari.stdout.slice(ari.stdout.indexOf('{'))).suggestedWindow as {
      start: string
      end: string
    }
    expect(new Date(window.start).getTime()).toBeGreaterThan(v.leaf.notBefore.getTime())
    expect(new Date(window.end).getTime()).toBeLessThanOrEqual(v.leaf.notAfter.getTime() - 14 * 86_400_000)
    expect(new Date(window.start).getTime()).toBeLessThan(new Date(window.end).getTime())

    // certbot revokes with its account key (RFC 8555 §7.6); ARI then says: renew now.
    const revoked = await run(
      'certbot',
      [
        'revoke',
        '--non-interactive',
        '--cert-name',
        'shop.example.com',
        '--reason',
        'superseded',
        '--no-delete-after-revoke',
        '--server',
        a.account.server_url,
        '--config-dir',
        join(dir, 'config'),
        '--work-dir',
        join(dir, 'work'),
        '--logs-dir',
        join(dir, 'logs')
      ],
      { env: { REQUESTS_CA_BUNDLE: rootPath }, seconds: 60 }
    )
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0)
    expect(revoked.stdout + revoked.stderr).toContain('Congratulations! You have successfully revoked the certificate')
    const after2 = await run('curl', ['-s', '--cacert', rootPath, `${acme.baseUrl}/acme/renewal-info/${certId}`])
    expect(new Date(JSON.parse(after2.stdout).suggestedWindow.end).getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })

  it('fails cleanly with a wrong HMAC key and binds no account', async () => {
    const { orderId, acme: a } = await subscribe('wrong-hmac.example.com')
    const wrong = Buffer.alloc(32, 7).toString('base64url')
    const r = await certbot(join(work, 'certbot-wrong'), a, ['wrong-hmac.example.com'], wrong)
    expect(r.code).not.toBe(0)
    expect(r.stdout + r.stderr).toContain('could not bind the account: the EAB MAC does not match the key id')
    const after = (await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })).body.acme
    expect(after.account.status).toBe('pending')
    expect(after.account.accounts).toHaveLength(0)
  })

  it('refuses names the subscription does not cover', async () => {
    const { acme: a } = await subscribe('covered.example.com')
    const dir = join(work, 'certbot-outside')
    const r = await certbot(dir, a, ['covered.example.com', 'other.example.com'])
    expect(r.code).not.toBe(0)
    // certbot 2.1 on Python 3.11 hides an ACME error of newOrder behind its own AttributeError
    // (josepy's immutable Error); the problem document it received is in its log.
    const logged = readFileSync(join(dir, 'logs', 'letsencrypt.log'), 'utf8')
    expect(logged).toContain('urn:ietf:params:acme:error:rejectedIdentifier')
    expect(logged).toContain(
      'other.example.com is not covered by this subscription (it covers covered.example.com, www.covered.example.com)'
    )
    const viaLego = await lego(join(work, 'lego-outside'), a, ['covered.example.com', 'other.example.com'])
    expect(viaLego.code).not.toBe(0)
    expect(viaLego.stdout + viaLego.stderr).toContain('other.example.com is not covered by this subscription')
  })
})

describe('lego against the embedded ACME server', () => {
  it('obtains a certificate with the same EAB as a second account, then revokes it', async () => {
    const { orderId, acme: a } = await subscribe('lego.example.com')
    const first = await certbot(join(work, 'certbot-first'), a, ['lego.example.com'])
    expect(first.code, first.stdout + first.stderr).toBe(0)

    const dir = join(work, 'lego')
    const r = await lego(dir, a, ['lego.example.com', 'www.lego.example.com'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const chain = readFileSync(join(dir, 'certificates', 'lego.example.com.crt'), 'utf8')
    const v = await opensslVerify(chain, dir)
    expect(v.code, v.out).toBe(0)
    expect(dnsNames(v.leaf)).toEqual(['lego.example.com', 'www.lego.example.com'])

    // One subscription, two ACME accounts bound with the same EAB credentials.
    const after = (await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })).body.acme
    expect(after.account.accounts).toHaveLength(2)
    expect(new Set(after.account.accounts.map((x) => x.url)).size).toBe(2)

    const revoked = await lego(dir, a, ['lego.example.com'], ['revoke', '--reason', '4'])
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0)
    const row = (await s.service.ctx.store.get(
      'SELECT revoked_at, revocation_reason FROM acme_certificates WHERE serial_hex = ?',
      v.leaf.serialNumber.toLowerCase()
    )) as { revoked_at: string | null; revocation_reason: number } | undefined
    expect(row?.revoked_at).not.toBeNull()
    expect(row?.revocation_reason).toBe(4)
  })
})
