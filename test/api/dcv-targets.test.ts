/**
 * Domain validation refuses names that resolve to loopback, private and other special-purpose
 * addresses, as public CAs do: the http/https DCV check of an order (GET /ssl/{id}) and the
 * http-01 check of the embedded ACME server. Names resolve through pebble-challtestsrv on
 * loopback; the validation file is published on the loopback web server, so a check that did
 * connect would pass. A network fence stops (and records) any connection off loopback: the
 * refusal must come before any connection. The admin's lab setting, set with the CLI, lets the
 * same loopback servers validate.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent } from 'node:https'
import * as acme from 'acme-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { certdesk } from '../support/cli'
import { opensslCsr } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { fenceToLoopback, type NetworkFence } from '../support/network-fence'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
interface Validation {
  name: string
  status: string
  detail: string | null
  instructions: Record<string, string>
}
type Challenge = { type: string; status: string; error?: { type: string; detail: string } }

let fence: NetworkFence
let s: TestServer
let dns: DnsServer
let web: WebServer
let acmeServer: RunningAcmeServer
let r: TestReseller
/** A loopback server that counts requests: where a followed redirect would land. */
let elsewhere: Server
let elsewhereHits = 0
let elsewherePort: number

beforeAll(async () => {
  fence = fenceToLoopback()
  // No default answers: each name resolves only to the records a test gives it.
  ;[s, dns, web] = await Promise.all([startServer(), startDns({ ipv4: '', ipv6: '' }), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.httpsPort, String(web.httpsPort))
  acmeServer = await startAcmeServer(s.service, { port: 0 })
  acme.axios.defaults.httpsAgent = new Agent({ ca: acmeServer.rootPem })
  r = await s.reseller({ credit: 20_000 })
  elsewhere = createServer((_req, res) => {
    elsewhereHits++
    res.end('redirected')
  })
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
  elsewherePort = (elsewhere.address() as AddressInfo).port
})
afterAll(async () => {
  await acmeServer?.close()
  await new Promise((resolve) => elsewhere?.close(resolve))
  await Promise.all([s?.close(), dns?.close(), web?.close()])
  fence?.restore()
})

const get = async (path: string) => await s.request<Body>('GET', path, { key: r.key })
const setLab = (value: string) =>
  certdesk(['admin', '--data-dir', s.dataDir, 'settings', 'set', DCV_SETTINGS.allowPrivateAddresses, value])

/** An order for `domain` configured for `method` validation, with its file published on the web server. */
async function published(domain: string, method: 'http' | 'https'): Promise<{ id: number; url: string }> {
  const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain, period: 12 } })
  expect(created.status).toBe(200)
  const id = created.body.order_id as number
  const conf = await s.request<Body>('POST', '/ssl/configure', {
    key: r.key,
    body: { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: method }
  })
  expect(conf.status).toBe(200)
  const v = (conf.body.validation as Validation[])[0]
  const url = new URL(v.instructions.url)
  web.put(domain, url.pathname, v.instructions.file_content)
  return { id, url: v.instructions.url }
}

const LAB_HINT =
  'domain validation never connects to loopback, private or other special-purpose addresses, as public CAs do not (for a lab, turn on lab use in Settings, under Domain validation)'
const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('with the lab setting off (the default)', () => {
  it.each([
    ['loop4.example.test', 'http', { a: ['127.0.0.1'] }, '127.0.0.1, a loopback address (RFC 1122 §3.2.1.3)'],
    ['loop6.example.test', 'https', { aaaa: ['::1'] }, '::1, the loopback address (RFC 4291 §2.5.3)'],
    ['ten.example.test', 'http', { a: ['10.1.2.3'] }, '10.1.2.3, a private-use address (RFC 1918)'],
    ['meta.example.test', 'http', { a: ['169.254.169.254'] }, '169.254.169.254, a link-local address (RFC 3927)'],
    [
      'cgnat.example.test',
      'https',
      { a: ['100.64.0.9'] },
      '100.64.0.9, a shared (carrier-grade NAT) address (RFC 6598)'
    ],
    ['ula.example.test', 'https', { aaaa: ['fd00::1'] }, 'fd00::1, a unique-local address (RFC 4193)'],
    ['zero.example.test', 'http', { a: ['0.0.0.0'] }, '0.0.0.0, an unspecified or "this network" address']
  ] as const)(
    'refuses the %s check over %s before connecting, saying why and naming the setting',
    async (domain, method, records, why) => {
      if ('a' in records) await dns.setA(domain, [...records.a])
      if ('aaaa' in records) await dns.setAaaa(domain, [...records.aaaa])
      const { id, url } = await published(domain, method)
      const status = await get(`/ssl/${id}`)
      expect(status.status).toBe(200)
      expect(status.body.status).toBe('validation_pending')
      const [v] = status.body.validation as Validation[]
      // Not a final failure: the owner may still point the name at a public address, and the
      // next check passes; until then the name waits and says why it was refused.
      expect(v.status).toBe('pending')
      expect(v.detail).toMatch(
        new RegExp(`^${escape(`could not fetch ${url}: ${domain} resolves to ${why}`)}.*; ${escape(LAB_HINT)}$`)
      )
      expect(web.hostsSeen).not.toContain(domain)
      expect(fence.attempts).toEqual([])
    }
  )

  it('refuses an ACME http-01 check of the embedded server before connecting', async () => {
    await dns.setA('acme-ten.example.test', ['10.9.8.7'])
    await dns.setA('acme-loop.example.test', ['127.0.0.1'])
    for (const [domain, why] of [
      ['acme-ten.example.test', '10.9.8.7, a private-use address (RFC 1918)'],
      ['acme-loop.example.test', '127.0.0.1, a loopback address (RFC 1122 §3.2.1.3)']
    ]) {
      const ch = await http01(domain)
      expect(ch.status).toBe('invalid')
      expect(ch.error?.type).toBe('urn:ietf:params:acme:error:connection')
      expect(ch.error?.detail).toBe(`could not validate ${domain}: ${domain} resolves to ${why}; ${LAB_HINT}`)
      expect(web.hostsSeen).not.toContain(domain)
    }
    expect(fence.attempts).toEqual([])
  })
})

/**
 * Orders `domain` on the embedded ACME server, publishes the http-01 answer on the web server
 * (or a redirect to `redirectTo`), and asks for the check.
 */
async function http01(domain: string, redirectTo?: string): Promise<Challenge> {
  const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 12, domain } })
  expect(created.status).toBe(200)
  const details = await s.request<{ acme: { account: { eab_kid: string; eab_hmac_key: string; server_url: string } } }>(
    'GET',
    `/orders/${created.body.order_id as number}/acme`,
    { key: r.key }
  )
  const account = details.body.acme.account
  const c = new acme.Client({
    directoryUrl: account.server_url,
    accountKey: await acme.crypto.createPrivateEcdsaKey(),
    externalAccountBinding: { kid: account.eab_kid, hmacKey: account.eab_hmac_key }
  })
  await c.createAccount({ termsOfServiceAgreed: true })
  const order = await c.createOrder({ identifiers: [{ type: 'dns', value: domain }] })
  const [authz] = await c.getAuthorizations(order)
  const ch = authz.challenges.find((x) => x.type === 'http-01') as acme.Authorization['challenges'][number]
  const path = `/.well-known/acme-challenge/${ch.token}`
  if (redirectTo) web.redirect(domain, path, redirectTo)
  else web.put(domain, path, await c.getChallengeKeyAuthorization(ch))
  await c.completeChallenge(ch)
  await acmeServer.idle()
  const [after] = await c.getAuthorizations(order)
  return after.challenges.find((x) => x.type === 'http-01') as unknown as Challenge
}

describe('with the lab setting on', () => {
  it('is set with the CLI as true or false, nothing else', () => {
    const typo = setLab('yes')
    expect(typo.code).toBe(1)
    expect(typo.stderr).toMatch(/could not save setting dcv\.allow_private_addresses: must be true or false/)
    expect(setLab('true').code).toBe(0)
    const got = certdesk(['admin', '--data-dir', s.dataDir, 'settings', 'get', DCV_SETTINGS.allowPrivateAddresses])
    expect(got.json.settings).toEqual({ 'dcv.allow_private_addresses': 'true' })
  })

  it('validates a name on the loopback web server, over DCV and ACME http-01', async () => {
    await dns.setA('lab.example.test', ['127.0.0.1'])
    const { id } = await published('lab.example.test', 'http')
    const done = await get(`/ssl/${id}`)
    expect(done.body.status).toBe('completed')
    expect(web.hostsSeen).toContain('lab.example.test')

    await dns.setA('acme-lab.example.test', ['127.0.0.1'])
    const ch = await http01('acme-lab.example.test')
    expect(ch).toMatchObject({ status: 'valid' })
    expect(fence.attempts).toEqual([])
  })

  it('does not follow a redirect, so a redirect cannot lead a check to another target', async () => {
    await dns.setA('hop.example.test', ['127.0.0.1'])
    const { id, url } = await published('hop.example.test', 'http')
    web.redirect('hop.example.test', new URL(url).pathname, `http://127.0.0.1:${elsewherePort}/file`)
    const status = await get(`/ssl/${id}`)
    expect((status.body.validation as Validation[])[0].detail).toBe(`could not fetch ${url}: HTTP 302`)

    await dns.setA('acme-hop.example.test', ['127.0.0.1'])
    const ch = await http01('acme-hop.example.test', `http://127.0.0.1:${elsewherePort}/file`)
    expect(ch.status).toBe('invalid')
    expect(ch.error?.detail).toMatch(
      /^could not validate acme-hop\.example\.test: http:\/\/acme-hop\.example\.test\/.* answered 302$/
    )
    expect(elsewhereHits).toBe(0)
  })

  it('still refuses IP literals and numeric spellings: they are not domain names', async () => {
    const { checkHttp, dcvNetwork } = await import('../../src-main/core/dcv/dcv')
    const t = { md5: 'A'.repeat(32), sha256: 'B'.repeat(64), unique: 'c'.repeat(20) }
    for (const name of ['127.0.0.1', '2130706433', '0x7f.1', '[::1]']) {
      const res = await checkHttp('http', name, t, await dcvNetwork(s.service.settings))
      expect(res.ok).toBe(false)
      expect(res.detail).toMatch(/is an IP address, not a domain name|reads as a numeric IPv4 address/)
    }
    expect(fence.attempts).toEqual([])
  })
})
