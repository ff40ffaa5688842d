import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { certdesk, serve } from '../support/cli'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

/**
 * `certdesk serve` runs a scheduler pass on start: an order whose reissue fell due while the
 * app was closed is caught up at once.
 */
let dataDir: string
let service: Service
let web: WebServer
let dns: DnsServer
let orderId: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-serve-'))
  // Ordered 210 days before today, so its reissue fell due about three weeks ago.
  const clock = manualClock(new Date(Date.now() - 210 * 86_400_000))
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const r = await service.resellers.create({ name: 'Sleepy', email: 'sleepy@example.test', groupId: 1 })
  await service.ledger.topUp(r.id, 50_000)
  orderId = (
    await service.orders.create(await service.resellers.get(r.id), {
      productId: 2,
      domain: 'sleepy.example.com',
      period: 24
    })
  ).order.id
  ;(await configureOverHttp(service, web, r.id, orderId, 'sleepy.example.com'))()
  expect((await service.certificates.status(r.id, orderId)).order.status).toBe('completed')
})
afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close()])
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('certdesk admin settings', () => {
  it('sets and reads the DCV settings, refusing unknown keys and credentials in the SMTP URL', () => {
    // (beforeAll set the same values through the core; the CLI writes them again)
    const set = (k: string, v: string) => certdesk(['admin', '--data-dir', dataDir, 'settings', 'set', k, v])
    expect(set(DCV_SETTINGS.resolver, dns.address).code).toBe(0)
    expect(set(DCV_SETTINGS.httpPort, String(web.httpPort)).code).toBe(0)
    const got = certdesk(['admin', '--data-dir', dataDir, 'settings', 'get'])
    expect(got.json.settings).toMatchObject({
      'dcv.dns_resolver': dns.address,
      'dcv.http_port': String(web.httpPort),
      'smtp.url': null
    })
    const typo = set('dcv.http_prot', '80')
    // A refused value is the core's answer (exit 1, as every refused admin command), not a usage error.
    expect(typo.code).toBe(1)
    expect(typo.stderr).toMatch(/could not save setting dcv\.http_prot: it is not a setting/)
    const secret = set(DCV_SETTINGS.smtpUrl, 'smtp://user:pw@127.0.0.1:25')
    expect(secret.code).toBe(1)
    expect(secret.stderr).toMatch(/must not carry a user or password/)
    expect(set(DCV_SETTINGS.resolver, 'nonsense').code).toBe(1)
  })
})

describe('certdesk serve', () => {
  it('reissues an overdue certificate on start, re-checking the domain past the reuse period', async () => {
    const before = (await service.ctx.store.get(
      'SELECT reissue_count, next_reissue_at FROM orders WHERE id = ?',
      orderId
    )) as { reissue_count: number; next_reissue_at: string }
    const today = new Date().toISOString().slice(0, 10)
    expect(before.reissue_count).toBe(0)
    expect(before.next_reissue_at < today).toBe(true)
    const seen = web.hostsSeen.length
    const s = await serve(dataDir)
    try {
      const deadline = Date.now() + 30_000
      let row = before
      while (Date.now() < deadline) {
        row = (await service.ctx.store.get(
          'SELECT reissue_count, next_reissue_at FROM orders WHERE id = ?',
          orderId
        )) as typeof before
        if (row.reissue_count === 1) break
        await new Promise((r) => setTimeout(r, 200))
      }
      expect(row.reissue_count, JSON.stringify(row)).toBe(1)
      expect(row.next_reissue_at > today).toBe(true)
      // The validation is 210 days old, past every reuse period: the file was fetched again.
      expect(web.hostsSeen.slice(seen)).toContain('sleepy.example.com')
    } finally {
      s.child.kill('SIGTERM')
      expect(await s.exited).toBe(0)
    }
  })
})
