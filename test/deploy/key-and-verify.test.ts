/**
 * The values a deploy target takes from the admin (folder path, key file, servers to verify)
 * tried with hostile input, and verify-after-reload against real TLS listeners: a server that
 * serves the deployed certificate, one that still serves the old one, one that never finishes
 * a handshake and one that answers garbage. The CLI's `deploy set` and `deploy keep-key`.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createTcpServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer as createTlsServer } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openService, type Service } from '../../src-main/core/service'
import { STAGING } from '../../src-main/core/deploy/folder'
import { verifyServed } from '../../src-main/core/deploy/verify'
import { certdesk } from '../support/cli'
import { manualClock } from '../support/clock'
import { startServer, type TestReseller, type TestServer } from '../support/server'
import { createTestCa, type TestCa, type TestLeaf } from '../support/test-ca'

type Body = Record<string, unknown>
const clock = manualClock(new Date())
let s: TestServer
let ca: TestCa
let r: TestReseller
const work = mkdtempSync(join(tmpdir(), 'certdesk-key-verify-'))
const listeners: Server[] = []

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
  ca = await createTestCa()
  r = s.reseller({ credit: 500 })
})
afterAll(async () => {
  for (const l of listeners) l.close()
  await s.service.deploys.idle()
  await s.close()
  rmSync(work, { recursive: true, force: true })
})

const placeOrder = async (domain: string): Promise<number> =>
  (await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })).body.order_id as number

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => {
    listeners.push(server)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })

/** A TLS listener serving `leaf` (with its chain) on loopback. */
const tlsServing = (leaf: TestLeaf): Promise<number> =>
  listen(
    createTlsServer({ cert: leaf.certificatePem + leaf.chainPem, key: leaf.privateKeyPem }, (socket) => socket.end())
  )

describe('target values the admin types', () => {
  it('refuses . and .. segments, control characters, key files CertDesk would overwrite, and a HAProxy key not at <crt>.key', async () => {
    const orderId = await placeOrder('paths.example.test')
    const d = s.service.deploys
    const count = (): number => d.targets(orderId).length
    const refusals: [Record<string, unknown>, string][] = [
      [{ path: '/srv/certs/../../etc/ssl' }, 'path must not contain . or .. segments'],
      [{ path: '/srv/./certs' }, 'path must not contain . or .. segments'],
      [{ path: '/srv/certs\n/x' }, 'path must not contain control characters'],
      [{ path: '/srv/certs', keyFile: 'customer.key' }, 'key file must be an absolute file path'],
      [{ path: '/srv/certs', keyFile: '/srv/keys/../../etc/shadow' }, 'key file must not contain . or .. segments'],
      [{ path: '/srv/certs', keyFile: '/srv/certs/fullchain.pem' }, 'the key file is one of the files CertDesk writes'],
      [
        { path: '/srv/certs', layout: 'haproxy', keyFile: '/srv/keys/site.key' },
        'HAProxy reads a separate key only from /srv/certs/haproxy.pem.key'
      ]
    ]
    for (const [input, message] of refusals) {
      expect(() => d.addTarget(orderId, { kind: 'folder', layout: 'nginx', ...input } as never)).toThrow(message)
    }
    expect(count()).toBe(0)
    const ok = d.addTarget(orderId, {
      kind: 'folder',
      path: '/srv/certs',
      layout: 'haproxy',
      keyFile: '/srv/certs/haproxy.pem.key'
    })
    expect(ok.target.config).toEqual({
      path: '/srv/certs',
      layout: 'haproxy',
      pfx: false,
      keyFile: '/srv/certs/haproxy.pem.key'
    })
  })

  it('refuses hostile verify hosts and more than 8, and keeps the ones that are host:port', async () => {
    const orderId = await placeOrder('verify.example.test')
    const d = s.service.deploys
    const bad: [string, RegExp][] = [
      ['$(reboot):443', /is not a host name or IP address/],
      ['evil host:443', /is not host:port/],
      ['a.example.test', /is not host:port/],
      ['a.example.test:0', /port 0 is not 1 to 65535/],
      ['a.example.test:70000', /port 70000 is not 1 to 65535/],
      [`${'a'.repeat(64)}.example.test:443`, /is not a host name or IP address/],
      ['a.example.test:443\nX-Injected: 1', /is not host:port/],
      ['::1:443', /is not host:port/],
      ['http://a.example.test:443', /is not host:port/]
    ]
    for (const [value, message] of bad) {
      expect(() => d.addTarget(orderId, { kind: 'command', command: 'true', verify: [value] })).toThrow(message)
    }
    expect(() =>
      d.addTarget(orderId, {
        kind: 'command',
        command: 'true',
        verify: Array.from({ length: 9 }, (_, i) => `h${i}.example.test:443`)
      })
    ).toThrow('at most 8 servers to verify')
    expect(d.targets(orderId)).toEqual([])
    const ok = d.addTarget(orderId, {
      kind: 'command',
      command: 'true',
      verify: ['127.0.0.1:8443', '[::1]:443', 'WWW.Example.test:443']
    })
    expect((ok.target.config as { verify: unknown }).verify).toEqual([
      { host: '127.0.0.1', port: 8443 },
      { host: '::1', port: 443 },
      { host: 'www.example.test', port: 443 }
    ])
  })
})

describe('verify after reload', () => {
  it('passes when the server serves the deployed certificate and names the served serial when it does not', async () => {
    const served = await ca.issue('tls.example.test', new Date(), 30)
    const other = await ca.issue('tls.example.test', new Date(), 30)
    const port = await tlsServing(served)
    expect(await verifyServed([{ host: '127.0.0.1', port }], served.certificatePem, 'tls.example.test', 2000)).toBe(
      null
    )
    expect(await verifyServed([{ host: '127.0.0.1', port }], other.certificatePem, 'tls.example.test', 600)).toBe(
      `127.0.0.1:${port} serves certificate ${served.serial.toUpperCase()}, not the deployed ${other.serial.toUpperCase()}`
    )
  })

  it('a server that never finishes the handshake, or answers garbage, fails within the deadline', async () => {
    const leaf = await ca.issue('tls.example.test', new Date(), 30)
    const silent = await listen(createTcpServer(() => undefined))
    const garbage = await listen(createTcpServer((socket) => socket.end(Buffer.alloc(64 * 1024, 0x41))))
    const started = performance.now()
    const a = await verifyServed([{ host: '127.0.0.1', port: silent }], leaf.certificatePem, 'tls.example.test', 1500)
    const b = await verifyServed([{ host: '127.0.0.1', port: garbage }], leaf.certificatePem, 'tls.example.test', 1500)
    expect(performance.now() - started).toBeLessThan(5000)
    expect(a).toMatch(new RegExp(`^could not read the certificate served at 127.0.0.1:${silent}: no TLS handshake`))
    expect(b).toMatch(new RegExp(`^could not read the certificate served at 127.0.0.1:${garbage}: `))
  })

  it('a reload that exits 0 while the server keeps the old certificate is a failed deploy with its reason', async () => {
    const domain = 'stale.example.test'
    const orderId = await placeOrder(domain)
    const old = await ca.issue(domain, new Date(), 30)
    const port = await tlsServing(old)
    const next = await ca.issue(domain, new Date(), 30)
    s.service.keyVault.store(r.id, orderId, next.privateKeyPem)
    const d = s.service.deploys
    d.setVerifyDeadline(800)
    d.addTarget(orderId, { kind: 'folder', path: join(work, 'stale'), layout: 'nginx' })
    d.addTarget(orderId, { kind: 'command', command: 'true', verify: [`127.0.0.1:${port}`] })
    d.certificateStored({ orderId, trigger: 'issued', certificatePem: next.certificatePem, chainPem: next.chainPem })
    await d.idle()
    const [command, folder] = d.runs(orderId, { limit: 2, offset: 0 }).items
    expect(folder.status).toBe('succeeded')
    expect(command).toMatchObject({
      status: 'pending',
      lastError:
        `command exited with 0, but 127.0.0.1:${port} serves certificate ${old.serial.toUpperCase()}, not the deployed ${next.serial.toUpperCase()}` +
        `; left the new files in ${join(work, 'stale')}: there were none before (a first deploy)`
    })
    const events = await s.request<{ events: Body[] }>('GET', `/events?type=deploy.failed&order_id=${orderId}`, {
      key: r.key
    })
    expect((events.body.events[0].data as Body).reason).toBe(
      'after the reload the server did not serve the new certificate'
    )
    expect(JSON.stringify(events.body)).not.toContain(String(port))
  })
})

describe('a set a crash left half renamed', () => {
  it('is finished by the next due pass of the deploy queue, before anything reloads', async () => {
    const domain = 'crash.example.test'
    const orderId = await placeOrder(domain)
    const first = await ca.issue(domain, new Date(), 30)
    const next = await ca.issue(domain, new Date(), 30)
    const folder = join(work, 'crash')
    const d = s.service.deploys
    d.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    s.service.keyVault.store(r.id, orderId, first.privateKeyPem)
    d.certificateStored({ orderId, trigger: 'issued', certificatePem: first.certificatePem, chainPem: first.chainPem })
    await d.idle()
    // What a crash after the first rename of the next set leaves: cert.pem new, the rest staged.
    const staging = join(folder, STAGING)
    mkdirSync(staging)
    writeFileSync(join(staging, 'fullchain.pem'), next.certificatePem + next.chainPem)
    writeFileSync(join(staging, 'privkey.pem'), next.privateKeyPem, { mode: 0o600 })
    writeFileSync(join(staging, '.complete'), JSON.stringify({ files: ['fullchain.pem', 'privkey.pem'], remove: [] }))
    writeFileSync(join(folder, 'cert.pem'), next.certificatePem)
    await d.runDue()
    expect(readFileSync(join(folder, 'fullchain.pem'), 'utf8')).toBe(next.certificatePem + next.chainPem)
    expect(readFileSync(join(folder, 'privkey.pem'), 'utf8')).toBe(next.privateKeyPem)
    expect(existsSync(staging)).toBe(false)
  })
})

describe('certdesk admin deploy set and keep-key', () => {
  it('names a key file, clears it, and keeps a key only when it belongs to the current certificate', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-keep-key-'))
    let service: Service | null = openService({ dataDir })
    try {
      const res = service.resellers.create({ name: 'Keys', email: 'ops@keys.test', groupId: 1 })
      service.ledger.topUp(res.id, 100_00)
      const orderId = service.orders.create(service.resellers.get(res.id), {
        productId: 2,
        domain: 'keys.example.test'
      }).order.id
      const leaf = await ca.issue('keys.example.test', new Date(), 30)
      const folder = join(work, 'cli-folder')
      const keyFile = join(work, 'cli-customer.key')
      writeFileSync(keyFile, leaf.privateKeyPem, { mode: 0o600 })
      const target = service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' }).target.id
      service.deploys.certificateStored({
        orderId,
        trigger: 'issued',
        certificatePem: leaf.certificatePem,
        chainPem: leaf.chainPem
      })
      await service.deploys.idle()
      service.close()
      service = null
      const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])

      // No key anywhere: the run failed, and its error says how to provide one.
      const failed = admin('deploy', 'run', '--order', String(orderId))
      expect(failed.code).toBe(1)
      expect(JSON.stringify(failed.json)).toContain('--key-file PATH')

      const fifo = join(work, 'cli.fifo')
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
      const refused = admin('deploy', 'keep-key', '--order', String(orderId), '--key-file', fifo)
      expect(refused.code).toBe(1)
      expect(refused.json.error).toMatch(
        /^could not keep the key of order ORD-[\d-]+: the key file .* is not a regular file$/
      )
      const stranger = join(work, 'cli-stranger.key')
      writeFileSync(stranger, (await ca.issue('keys.example.test', new Date(), 30)).privateKeyPem)
      expect(admin('deploy', 'keep-key', '--order', String(orderId), '--key-file', stranger).json.error).toMatch(
        /it does not belong to the order's current certificate$/
      )

      const set = admin('deploy', 'set', '--target', String(target), '--key-file', keyFile)
      expect(set.code, set.stderr).toBe(0)
      expect((set.json.target as Body).config).toMatchObject({ keyFile })
      const viaFile = admin('deploy', 'run', '--order', String(orderId))
      expect(viaFile.code, JSON.stringify(viaFile.json)).toBe(0)
      expect(readFileSync(join(folder, 'cert.pem'), 'utf8')).toBe(leaf.certificatePem)

      expect(admin('deploy', 'set', '--target', String(target), '--key-file', '').code).toBe(0)
      const kept = admin('deploy', 'keep-key', '--order', String(orderId), '--key-file', keyFile)
      expect(kept.code, JSON.stringify(kept.json)).toBe(0)
      const viaKept = admin('deploy', 'run', '--order', String(orderId))
      expect(viaKept.code, JSON.stringify(viaKept.json)).toBe(0)
      expect(readFileSync(join(folder, 'privkey.pem'), 'utf8').trim()).toBe(leaf.privateKeyPem.trim())
      expect(admin('deploy', 'set', '--target', String(target), '--verify', '127.0.0.1:443').json.error).toMatch(
        /a folder target takes a key file, a command target the servers to verify/
      )
    } finally {
      service?.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
