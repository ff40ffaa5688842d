/**
 * The three installation-check settings docs/installations.md promises: set with
 * `certdesk admin settings set` like every other setting, refused outside their bounds with a
 * message that says the bounds, and used: the probes' time-out, how many run at once, and how
 * often the schedule checks an order again (0 turns the schedule off).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer as netServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../support/engine'
import { certdesk } from '../support/cli'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestServer } from '../support/server'

const KEYS = ['installations.timeout_seconds', 'installations.concurrency', 'installations.check_interval_hours']

describe('installation settings from the command line', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-inst-settings-'))
  const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])
  beforeAll(async () => (await openService({ dataDir })).close())
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('are listed, saved and read back', () => {
    const all = admin('settings', 'get')
    expect(all.code, all.stderr).toBe(0)
    for (const k of KEYS) expect(Object.keys(all.json.settings as object)).toContain(k)
    for (const [k, v] of [
      ['installations.timeout_seconds', '3'],
      ['installations.concurrency', '16'],
      ['installations.check_interval_hours', '0']
    ]) {
      const set = admin('settings', 'set', k, v)
      expect(set.code, set.stderr).toBe(0)
      expect(admin('settings', 'get', k).json.settings).toEqual({ [k]: v })
    }
  })

  it('refuse values outside their bounds, saying the bounds, and keep the old value', () => {
    const cases: [string, string, RegExp][] = [
      ['installations.timeout_seconds', '0', /from 1 to 60/],
      ['installations.timeout_seconds', '61', /from 1 to 60/],
      ['installations.timeout_seconds', '2.5', /whole number/],
      ['installations.timeout_seconds', '5; reboot', /whole number/],
      ['installations.concurrency', '0', /from 1 to 64/],
      ['installations.concurrency', '1000', /from 1 to 64/],
      ['installations.check_interval_hours', '+5', /whole number 0 \(off\) or from 1 to 720/],
      ['installations.check_interval_hours', '8761', /0 \(off\) or from 1 to 720/],
      ['installations.check_interval_hours', '1e3', /whole number/]
    ]
    for (const [k, v, why] of cases) {
      const r = admin('settings', 'set', k, v)
      expect(r.code, `${k}=${v}`).toBe(1)
      expect(r.json.error, `${k}=${v}`).toMatch(new RegExp(`could not save setting ${k.replace('.', '\\.')}: .*`))
      expect(r.json.error, `${k}=${v}`).toMatch(why)
    }
    expect(admin('settings', 'get', 'installations.timeout_seconds').json.settings).toEqual({
      'installations.timeout_seconds': '3'
    })
  })
})

describe('installation settings in use', () => {
  let s: TestServer
  let dns: DnsServer
  let web: WebServer
  const clock = manualClock(new Date())
  beforeAll(async () => {
    s = await startServer({ clock: clock.clock })
    dns = await startDns()
    web = await startWeb()
    await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  })
  afterAll(async () => {
    await web?.close()
    await dns?.close()
    await s?.close()
  })

  async function issuedOrder(domain: string): Promise<{ resellerId: number; orderId: number }> {
    const r = await s.reseller({ credit: 100 })
    const { order } = await s.service.orders.create(await s.service.resellers.get(r.id), { productId: 2, domain })
    const publish = await configureOverHttp(s.service, web, r.id, order.id, domain)
    publish()
    await s.service.certificates.status(r.id, order.id)
    expect((await s.service.orders.get(r.id, order.id)).status).toBe('completed')
    return { resellerId: r.id, orderId: order.id }
  }

  it('probes with the time-out set and at most the number set at once', async () => {
    const { resellerId, orderId } = await issuedOrder('many.example.test')
    let open = 0
    let most = 0
    const sockets = new Set<Socket>()
    // Accepts and never answers: every probe waits for its time-out.
    const silent = netServer((c) => {
      sockets.add(c)
      most = Math.max(most, ++open)
      c.on('error', () => undefined)
      c.resume()
      c.on('close', () => {
        open--
        sockets.delete(c)
      })
    })
    const port = await new Promise<number>((res) =>
      silent.listen(0, '127.0.0.9', () => res((silent.address() as AddressInfo).port))
    )
    try {
      for (let i = 0; i < 6; i++) {
        await s.service.installations.addEndpoint(resellerId, orderId, {
          host: `n${i}.example.test`,
          port,
          address: '127.0.0.9'
        })
      }
      await s.service.settings.update({ 'installations.timeout_seconds': '1', 'installations.concurrency': '2' })
      const report = await s.service.installations.check(resellerId, orderId)
      const slow = report.results.filter((x) => x.port === port)
      expect(slow).toHaveLength(6)
      for (const x of slow) expect(x.detail).toBe('no answer within 1 s')
      // Two at once; the server notices a closed connection a moment after the next one opens.
      expect(most).toBeGreaterThanOrEqual(2)
      expect(most).toBeLessThanOrEqual(3)
    } finally {
      sockets.forEach((c) => c.destroy())
      await new Promise((res) => silent.close(res))
    }
  })

  it('checks an order again after the interval set, follows a changed interval, and 0 turns the schedule off', async () => {
    const { resellerId, orderId } = await issuedOrder('interval.example.test')
    const inst = s.service.installations
    const nextCheck = async () =>
      (
        (await s.service.ctx.store.get(
          'SELECT next_check_at FROM installation_status WHERE order_id = ?',
          orderId
        )) as {
          next_check_at: string
        }
      ).next_check_at
    await s.service.settings.update({ 'installations.check_interval_hours': '6', 'installations.timeout_seconds': '1' })
    await inst.check(resellerId, orderId)
    const checkedAt = (await inst.report(resellerId, orderId)).checkedAt as string
    const hoursAfter = (h: number) =>
      new Date(Date.parse(`${checkedAt.replace(' ', 'T')}Z`) + h * 3_600_000)
        .toISOString()
        .slice(0, 19)
        .replace('T', ' ')
    expect(await nextCheck()).toBe(hoursAfter(6))
    // A longer interval moves the next check out; a shorter one brings it in.
    await s.service.settings.update({ 'installations.check_interval_hours': '48' })
    expect(await nextCheck()).toBe(hoursAfter(48))
    await s.service.settings.update({ 'installations.check_interval_hours': '2' })
    expect(await nextCheck()).toBe(hoursAfter(2))
    // 0: the schedule checks nothing, even when an order is due.
    clock.set(new Date(Date.parse(`${hoursAfter(3).replace(' ', 'T')}Z`)))
    await s.service.settings.update({ 'installations.check_interval_hours': '0' })
    expect(await inst.checkDue(1000)).toBe(0)
    // Back on: due again, and checked.
    await s.service.settings.update({ 'installations.check_interval_hours': '2' })
    expect(await nextCheck()).toBe(hoursAfter(2))
    expect(await inst.checkDue(1000)).toBeGreaterThanOrEqual(1)
    expect((await inst.report(resellerId, orderId)).checkedAt).toBe(hoursAfter(3))
  })
})
