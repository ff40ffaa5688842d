/**
 * The wall clock stepping back and forward by days (an injected clock): the scheduler never
 * reissues one due certificate twice, never skips a reissue that is due, and never issues with
 * the longer CA/B validity of a date the clock wrongly went back to (Baseline Requirements
 * §6.3.2, ballot SC-081: the cap depends on the issue date).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { DAY_MS, parseDate } from '../../src-main/core/time'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { report } from '../faults/support'

const clock = manualClock('2026-11-21T09:00:00Z')
let dataDir: string
let service: Service
let web: WebServer
let dns: DnsServer
let orderId: number
let resellerId: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-clock-'))
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const r = await service.resellers.create({ name: 'Clock Hosting', email: 'clock@example.test', groupId: 1 })
  resellerId = r.id
  await service.ledger.topUp(r.id, 100_000)
  orderId = (
    await service.orders.create(await service.resellers.get(r.id), {
      productId: 2,
      domain: 'clock.example.com',
      period: 36
    })
  ).order.id
  ;(await configureOverHttp(service, web, r.id, orderId, 'clock.example.com'))()
  expect((await service.certificates.status(r.id, orderId)).order.status).toBe('completed')
})
afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close()])
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

const certs = async (id: number) =>
  (await service.ctx.store.all(
    'SELECT valid_from, valid_till, reason FROM certificates WHERE order_id = ? ORDER BY id',
    id
  )) as { valid_from: string; valid_till: string; reason: string }[]
const nextReissue = async (id: number) =>
  ((await service.ctx.store.get('SELECT next_reissue_at AS n FROM orders WHERE id = ?', id)) as { n: string }).n
const days = (c: { valid_from: string; valid_till: string }) =>
  Math.round((parseDate(c.valid_till).getTime() + 1000 - parseDate(c.valid_from).getTime()) / DAY_MS)

describe('the scheduler under clock jumps', () => {
  it('reissues a due certificate once however the clock steps, and not before it is due', async () => {
    let passes = 0
    const pass = async () => {
      passes++
      return service.scheduler.run()
    }
    const due = parseDate(await nextReissue(orderId))
    // Forward by days, past the due date: one reissue, and a second pass at that time adds none.
    clock.set(new Date(due.getTime() + 5 * DAY_MS))
    expect((await pass()).issued).toHaveLength(1)
    expect((await pass()).issued).toHaveLength(0)
    const afterFirst = await nextReissue(orderId)

    // Back by days, to before the first due date: nothing is issued again, nothing moves.
    clock.set(new Date(due.getTime() - 3 * DAY_MS))
    const back = await pass()
    expect(back.issued).toHaveLength(0)
    expect(await nextReissue(orderId)).toBe(afterFirst)
    // Forward again to where it was: still the one reissue.
    clock.set(new Date(due.getTime() + 6 * DAY_MS))
    expect((await pass()).issued).toHaveLength(0)

    // The next due date is not skipped: a day before it nothing, on it one reissue.
    const second = parseDate(afterFirst)
    clock.set(new Date(second.getTime() - DAY_MS))
    expect((await pass()).issued).toHaveLength(0)
    clock.set(new Date(second.getTime() + 9 * 3_600_000))
    expect((await pass()).issued).toHaveLength(1)
    expect((await certs(orderId)).map((c) => c.reason)).toEqual(['initial', 'auto_reissue', 'auto_reissue'])
    report({ fault: 'clock stepping back and forward by days (scheduler)', tried: passes, errors: 0, lost: 0 })
  })

  it('issues nothing while the clock is behind the newest certificate, so no longer cap of an earlier date applies', async () => {
    const newest = (await certs(orderId)).at(-1)!
    // A new order validated while the clock has gone back to before 2027-03-15 (200 days then,
    // 100 on the real date).
    const o = (
      await service.orders.create(await service.resellers.get(resellerId), {
        productId: 2,
        domain: 'late.example.com',
        period: 24
      })
    ).order.id
    const put = await configureOverHttp(service, web, resellerId, o, 'late.example.com')
    put()
    const now = clock.now()
    clock.set('2027-03-10T09:00:00Z')
    const back = await service.scheduler.run()
    expect(back.issued).toHaveLength(0)
    expect(back.errors.map((e) => e.error)).toContain(
      `could not issue certificates: the clock (2027-03-10 09:00:00) is behind the newest certificate (issued ${newest.valid_from}); set the system clock right`
    )
    expect(await certs(o)).toHaveLength(0)
    // The clock is right again: the order is issued with the cap of the real date.
    clock.set(now)
    const right = await service.scheduler.run()
    expect(right.issued.map((i) => i.order_id)).toContain(o)
    expect(days((await certs(o))[0])).toBeLessThanOrEqual(100)
  })
})
