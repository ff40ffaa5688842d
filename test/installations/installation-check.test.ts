/**
 * The installation checker against real TLS servers on loopback addresses: the current
 * certificate with its chain, an earlier certificate of the same order, the leaf without its
 * intermediate, a foreign CA's certificate, a mail server that starts TLS with STARTTLS, a port
 * that never answers and one that resets. Each verdict is what a reseller would read on the
 * order's badge, and a change of verdict is an event.
 */
import { generateKeyPairSync } from 'node:crypto'
import { createServer as netServer, type Server as NetServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createServer as tlsServer, type Server as TlsServer } from 'node:tls'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { INSTALLATION_SETTINGS } from '../../src-main/core/installations'
import { opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestServer } from '../support/server'
import { createTestCa } from '../support/test-ca'

type Body = Record<string, unknown>
type Result = {
  host: string
  port: number
  verdict: string
  label: string
  detail: string
  served_serial: string | null
}

let s: TestServer
let dns: DnsServer
let web: WebServer
const closers: (() => Promise<void>)[] = []
const NAMES = ['shop.example.test', 'www.shop.example.test']

beforeAll(async () => {
  s = await startServer()
  dns = await startDns()
  web = await startWeb()
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  await s.service.settings.set(INSTALLATION_SETTINGS.timeoutSeconds, '1')
})
afterAll(async () => {
  for (const c of closers) await c()
  await web?.close()
  await dns?.close()
  await s?.close()
})

function listenTls(address: string, key: string, certs: string): Promise<number> {
  const server: TlsServer = tlsServer({ key, cert: certs })
  const sockets = new Set<Socket>()
  server.on('connection', (c) => {
    sockets.add(c)
    c.on('close', () => sockets.delete(c))
  })
  server.on('tlsClientError', () => undefined)
  closers.push(
    () =>
      new Promise((r) => {
        sockets.forEach((c) => c.destroy())
        server.close(() => r())
      })
  )
  return new Promise((r) => server.listen(0, address, () => r((server.address() as AddressInfo).port)))
}

function listenPlain(address: string, onSocket: (c: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>()
  const server: NetServer = netServer((c) => {
    sockets.add(c)
    c.on('close', () => sockets.delete(c))
    c.on('error', () => undefined)
    onSocket(c)
  })
  closers.push(
    () =>
      new Promise((r) => {
        sockets.forEach((c) => c.destroy())
        server.close(() => r())
      })
  )
  return new Promise((r) => server.listen(0, address, () => r((server.address() as AddressInfo).port)))
}

async function issue(key: string, orderId: number, csr: string): Promise<void> {
  const res = await s.request<Body>('POST', '/ssl/configure', {
    key,
    body: { order_id: orderId, csr, dcv_method: 'http' }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  for (const v of res.body.validation as { instructions: { url: string; file_content: string } }[]) {
    const url = new URL(v.instructions.url)
    web.put(url.hostname, url.pathname, `${v.instructions.file_content}\n`)
  }
  expect(((await s.request<Body>('GET', `/ssl/${orderId}`, { key })).body as Body).status).toBe('completed')
}

async function certificates(
  orderId: number
): Promise<{ certificate_pem: string; chain_pem: string; serial: string }[]> {
  return (await s.service.ctx.store.all(
    'SELECT certificate_pem, chain_pem, serial FROM certificates WHERE order_id = ? ORDER BY id',
    orderId
  )) as { certificate_pem: string; chain_pem: string; serial: string }[]
}

describe('the installation checker', () => {
  it('tells the current certificate from the old one, a missing intermediate, a foreign one and a dead server', async () => {
    const r = await s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: NAMES[0] } })
    const orderId = created.body.order_id as number
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    await issue(r.key, orderId, opensslCsrForKey(NAMES, keyPem))
    // A reissue with the same key: the first certificate becomes "the old one".
    expect((await s.request<Body>('POST', '/ssl/reissue', { key: r.key, body: { order_id: orderId } })).status).toBe(
      200
    )
    const [old, current] = await certificates(orderId)
    expect(current.serial).not.toBe(old.serial)

    const foreign = await (await createTestCa()).issue(NAMES[0], new Date('2026-01-01T00:00:00Z'), 300)
    const good = await listenTls('127.0.0.1', keyPem, current.certificate_pem + current.chain_pem)
    const stale = await listenTls('127.0.0.3', keyPem, old.certificate_pem + old.chain_pem)
    const bare = await listenTls('127.0.0.4', keyPem, current.certificate_pem)
    const other = await listenTls('127.0.0.5', foreign.privateKeyPem, foreign.certificatePem + foreign.chainPem)
    const silent = await listenPlain('127.0.0.6', () => undefined)
    const reset = await listenPlain('127.0.0.7', (c) => c.resetAndDestroy())
    const smtp = new SMTPServer({
      secure: false,
      key: keyPem,
      cert: current.certificate_pem + current.chain_pem,
      disabledCommands: ['AUTH'],
      logger: false
    })
    const smtpPort = await new Promise<number>((res) =>
      smtp.listen(0, '127.0.0.8', () => res((smtp.server.address() as AddressInfo).port))
    )
    closers.push(() => new Promise((res) => smtp.close(() => res())))

    const app = s.service.installations
    // The name resolves through DNS (127.0.0.1 from the test DNS server); the others name an address.
    await app.addEndpoint(r.id, orderId, { host: NAMES[0], port: good })
    await app.addEndpoint(r.id, orderId, { host: NAMES[1], port: stale, address: '127.0.0.3' })
    await app.addEndpoint(r.id, orderId, {
      host: 'mail.shop.example.test',
      port: smtpPort,
      address: '127.0.0.8',
      starttls: 'smtp'
    })
    await app.addEndpoint(r.id, orderId, { host: NAMES[0], port: bare, address: '127.0.0.4' })
    await app.addEndpoint(r.id, orderId, { host: 'cdn.shop.example.test', port: other, address: '127.0.0.5' })
    await app.addEndpoint(r.id, orderId, { host: 'slow.shop.example.test', port: silent, address: '127.0.0.6' })
    await app.addEndpoint(r.id, orderId, { host: 'rst.shop.example.test', port: reset, address: '127.0.0.7' })

    const res = await s.request<Body>('POST', `/orders/${orderId}/installation/check`, { key: r.key })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const inst = res.body.installation as Body
    const byHost = Object.fromEntries(
      (inst.results as Result[]).filter((x) => x.port !== 443 && x.port !== bare).map((x) => [x.host, x])
    )
    const leafOnly = (inst.results as Result[]).find((x) => x.port === bare)
    expect(byHost[NAMES[0]]).toMatchObject({ verdict: 'ok', served_serial: current.serial.toUpperCase() })
    expect(byHost[NAMES[1]]).toMatchObject({ verdict: 'old_certificate', label: 'serving the old certificate' })
    expect(byHost[NAMES[1]].served_serial).toBe(old.serial.toUpperCase())
    // mail.shop… is not in the certificate: served right, but not valid for that name.
    expect(byHost['mail.shop.example.test'].verdict).toBe('hostname_mismatch')
    expect(leafOnly).toMatchObject({ verdict: 'chain_incomplete', label: 'chain incomplete' })
    expect(leafOnly?.detail).toMatch(/does not send .*CN=/)
    expect(byHost['cdn.shop.example.test'].verdict).toBe('other_certificate')
    expect(byHost['slow.shop.example.test']).toMatchObject({ verdict: 'unreachable' })
    expect(byHost['slow.shop.example.test'].detail).toMatch(/no answer within 1 s/)
    expect(byHost['rst.shop.example.test']).toMatchObject({ verdict: 'unreachable', detail: 'connection reset' })
    // The worst verdict is the order's badge, and it is an event.
    expect(inst).toMatchObject({ verdict: 'unreachable', label: 'unreachable' })
    expect((await app.badges(r.id, [orderId]))[orderId]).toMatchObject({ verdict: 'unreachable' })
    const events = await s.request<Body>('GET', `/events?order_id=${orderId}&type=installation.failed`, { key: r.key })
    expect((events.body.events as Body[]).length).toBe(1)

    // STARTTLS on a name the certificate carries: the mail server serves it right.
    await app.addEndpoint(r.id, orderId, { host: NAMES[1], port: smtpPort, address: '127.0.0.8', starttls: 'smtp' })
    for (const e of await app.endpoints(r.id, orderId)) {
      if (e.host !== NAMES[1] || e.port !== smtpPort) await app.removeEndpoint(r.id, orderId, e.id)
    }
    const mailOnly = await app.check(r.id, orderId)
    const mail = mailOnly.results.find((x) => x.port === smtpPort)
    expect(mail).toMatchObject({ verdict: 'ok' })

    // Checked again with nothing changed: no second event for the same verdict.
    const before = (await s.request<Body>('GET', `/events?order_id=${orderId}`, { key: r.key })).body.events as Body[]
    await app.check(r.id, orderId)
    const after = (await s.request<Body>('GET', `/events?order_id=${orderId}`, { key: r.key })).body.events as Body[]
    expect(after.length).toBe(before.length)

    // Another reseller's order is not found, and its results are not shown.
    const stranger = await s.reseller({ credit: 1 })
    for (const [m, p] of [
      ['GET', `/orders/${orderId}/installation`],
      ['POST', `/orders/${orderId}/installation/check`]
    ] as const) {
      expect((await s.request<Body>(m, p, { key: stranger.key })).status).toBe(404)
    }
    expect(await app.badges(stranger.id, [orderId])).toEqual({})
  })

  it('refuses bad endpoints and private addresses unless the lab switch is on', async () => {
    const r = await s.reseller({ credit: 100 })
    const orderId = (
      await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'lab.example.test' } })
    ).body.order_id as number
    const app = s.service.installations
    for (const bad of [
      { host: 'a;b.example.test' },
      { host: '../etc/passwd' },
      { host: 'x.example.test', port: 70000 },
      { host: 'x.example.test', address: '127.0.0.1; rm -rf /' },
      { host: 'x.example.test', starttls: 'ftp' as never }
    ]) {
      await expect(app.addEndpoint(r.id, orderId, bad)).rejects.toThrow(/could not add the endpoint/)
    }
    expect(await app.endpoints(r.id, orderId)).toEqual([])
    // No certificate yet: a clear refusal, not an empty success.
    const early = await s.request<Body>('POST', `/orders/${orderId}/installation/check`, { key: r.key })
    expect(early.status).toBe(400)
    expect(early.body.error).toMatch(/has no certificate yet/)

    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    await issue(r.key, orderId, opensslCsrForKey(['lab.example.test'], keyPem))
    const [cert] = await certificates(orderId)
    const port = await listenTls('127.0.0.1', keyPem, cert.certificate_pem + cert.chain_pem)
    await app.addEndpoint(r.id, orderId, { host: 'lab.example.test', port, address: '127.0.0.1' })
    await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'false')
    try {
      const refused = (await app.check(r.id, orderId)).results.find((x) => x.port === port)
      expect(refused).toMatchObject({ verdict: 'unreachable' })
      expect(refused?.detail).toMatch(/not checked: 127\.0\.0\.1 is .*loopback/i)
    } finally {
      await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    }
    expect((await app.check(r.id, orderId)).results.find((x) => x.port === port)).toMatchObject({ verdict: 'ok' })
  })

  it('checks due orders on the schedule, and an order right after a successful deploy', async () => {
    const r = await s.reseller({ credit: 100 })
    const orderId = (
      await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain: 'due.example.test' } })
    ).body.order_id as number
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    await issue(r.key, orderId, opensslCsrForKey(['due.example.test'], keyPem))
    const app = s.service.installations
    const [cert] = await certificates(orderId)
    const port = await listenTls('127.0.0.1', keyPem, cert.certificate_pem + cert.chain_pem)
    await app.addEndpoint(r.id, orderId, { host: 'due.example.test', port })
    const db = s.service.ctx.store
    const due = async () =>
      (await db.get('SELECT next_check_at FROM installation_status WHERE order_id = ?', orderId)) as {
        next_check_at: string
      }
    // A new certificate is due an hour after it was stored, not at once.
    expect((await app.report(r.id, orderId)).verdict).toBeNull()
    await db.run('UPDATE installation_status SET next_check_at = ? WHERE order_id = ?', '2000-01-01 00:00:00', orderId)
    expect(await app.checkDue(1000)).toBeGreaterThanOrEqual(1)
    expect((await app.report(r.id, orderId)).verdict).not.toBeNull()
    const next = (await due()).next_check_at
    expect(next > '2026-01-01').toBe(true)
    // A deploy that succeeded makes the order due at once.
    const target = (await s.service.deploys.addTarget(orderId, { kind: 'folder', path: '/srv/due' })).target
    await db.run(
      `INSERT INTO deploy_runs (target_id, order_id, serial, certificate_pem, chain_pem, valid_from, valid_till, trigger, status,
         attempts, created_at, updated_at) VALUES (?, ?, 'AA', '', '', '2026-01-01', '2027-01-01', 'manual', 'running', 1, ?, ?)`,
      target.id,
      orderId,
      '2026-01-01 00:00:00',
      '2026-01-01 00:00:00'
    )
    await db.run(
      "UPDATE deploy_runs SET status = 'succeeded', updated_at = '2026-01-01 00:00:05' WHERE order_id = ?",
      orderId
    )
    expect((await due()).next_check_at).toBe('2026-01-01 00:00:05')
  })
})
