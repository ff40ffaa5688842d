import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

/**
 * The last certificate of a subscription is not renewed (spec, "Certificate lifecycle rule" 3),
 * so the scheduler announces it once as `certificate.expiring` 30 days before it ends.
 */
const clock = manualClock('2026-06-01T09:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-expiring-'))
let service: Service
let web: WebServer
let dns: DnsServer
let orderId: number
let resellerId: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  resellerId = (await service.resellers.create({ name: 'Expiring', email: 'ops@expiring.test', groupId: 1 })).id
  await service.ledger.topUp(resellerId, 100_000)
  orderId = (
    await service.orders.create(await service.resellers.get(resellerId), {
      productId: 2,
      domain: 'last.example.com',
      period: 12
    })
  ).order.id
  const publish = await configureOverHttp(service, web, resellerId, orderId, 'last.example.com')
  // Two polls before the file is up: the name waits, which logs nothing; then it passes.
  await service.certificates.status(resellerId, orderId)
  await service.certificates.status(resellerId, orderId)
  publish()
  await service.certificates.status(resellerId, orderId)
})
afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

const expiring = async () =>
  await service.events.list(resellerId, { type: 'certificate.expiring' }, { limit: 10, offset: 0 })

describe('validation events', () => {
  it('records the pass, and nothing for the looks before the file was published', async () => {
    const types = (await service.events.list(resellerId, { orderId }, { limit: 10, offset: 0 })).items
      .map((e) => e.type)
      .reverse()
    expect(types).toEqual(['order.created', 'order.paid', 'validation.passed', 'certificate.issued'])
    const passed = (await service.events.list(resellerId, { type: 'validation.passed' }, { limit: 1, offset: 0 }))
      .items[0]
    expect(passed.message).toMatch(/^Domain validation of last\.example\.com by http passed: found the validation file/)
  })
})

describe('certificate.expiring', () => {
  it('is announced once, 30 days before the last certificate of the subscription ends, and never for one that will be reissued', async () => {
    // The first certificate will be reissued: no notice even in its last 30 days.
    clock.set('2026-11-20T00:00:00Z')
    expect((await service.scheduler.run()).expiring).toEqual([])
    clock.set('2026-12-04T00:00:00Z')
    const reissue = await service.scheduler.run()
    expect(reissue.issued).toEqual([expect.objectContaining({ order_id: orderId, reason: 'auto_reissue' })])
    const order = await service.orders.get(resellerId, orderId)
    expect(order).toMatchObject({ nextReissueAt: null, certValidTill: '2027-05-31' })

    clock.set('2027-04-30T00:00:00Z')
    expect((await service.scheduler.run()).expiring).toEqual([])
    clock.set('2027-05-01T00:00:00Z')
    expect((await service.scheduler.run()).expiring).toEqual([orderId])
    clock.set('2027-05-02T00:00:00Z')
    expect((await service.scheduler.run()).expiring).toEqual([])
    const list = await expiring()
    expect(list.total).toBe(1)
    expect(list.items[0]).toMatchObject({
      orderId,
      createdAt: '2027-05-01 00:00:00',
      data: { valid_till: '2027-05-31', purchase_end_date: '2027-06-01' }
    })
    expect(list.items[0].message).toMatch(
      /^Certificate of order ORD-2026-\d{6} \(last\.example\.com\) expires on 2027-05-31 and will not be renewed: the subscription ends on 2027-06-01$/
    )
  })
})
