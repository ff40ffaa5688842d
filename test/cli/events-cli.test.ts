/**
 * The admin's event log carries the admin's own alert events, as docs/alerts.md says:
 * `certdesk admin events list` lists `alert.raised` and `alert.cleared` and its `--type` filter
 * takes them, and the desktop app's event log (the bridge's `listEvents`) shows them for the
 * acting reseller's orders only. The reseller API's GET /events still never carries them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../support/engine'
import { API_VERSION, buildServer, listen, type Listening } from '../../src-main/http/server'
import { certdesk } from '../support/cli'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

type Body = Record<string, unknown>
type Event = { type: string; order_id: number | null; message: string; reseller_id: number | null }

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-events-cli-'))
const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])
let web: WebServer
let dns: DnsServer
let waitingId: number
let otherId: number
let resellerA: number
let resellerB: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  const clock = manualClock('2027-03-01T09:00:00Z')
  const service = await openService({ dataDir, clock: clock.clock })
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    resellerA = (await service.resellers.create({ name: 'A', email: 'a@events.test', groupId: 1 })).id
    resellerB = (await service.resellers.create({ name: 'B', email: 'b@events.test', groupId: 1 })).id
    for (const r of [resellerA, resellerB]) await service.ledger.topUp(r, 100_000)
    const order = async (r: number, domain: string) =>
      (await service.orders.create(await service.resellers.get(r), { productId: 2, domain, period: 12 })).order.id
    waitingId = await order(resellerA, 'waiting.events.example')
    otherId = await order(resellerB, 'other.events.example')
    // Both wait for validation; nobody publishes the file.
    await configureOverHttp(service, web, resellerA, waitingId, 'waiting.events.example')
    await configureOverHttp(service, web, resellerB, otherId, 'other.events.example')
    // The first pass sees them wait; past the 48-hour wait, one validation_waiting alert per order.
    await service.scheduler.run()
    clock.set('2027-03-03T10:00:00Z')
    await service.scheduler.run()
    // Reseller A's validation is cancelled: its alert clears.
    await service.certificates.cancelValidation(resellerA, waitingId)
    clock.set('2027-03-03T11:00:00Z')
    await service.scheduler.run()
  } finally {
    await service.close()
  }
})
afterAll(async () => {
  await Promise.all([web?.close(), dns?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

describe('certdesk admin events list', () => {
  it('lists alert.raised and alert.cleared, and --type takes them', () => {
    const raised = admin('events', 'list', '--type', 'alert.raised')
    expect(raised.code, raised.stderr).toBe(0)
    const items = raised.json.events as Event[]
    expect(items.map((e) => [e.type, e.order_id]).sort()).toEqual(
      [
        ['alert.raised', otherId],
        ['alert.raised', waitingId]
      ].sort()
    )
    expect(items.every((e) => /^Validation waiting over 48 h: ORD-\d{4}-\d{6} /.test(e.message))).toBe(true)
    expect(raised.json.pagination).toMatchObject({ total: 2 })

    const cleared = admin('events', 'list', '--type', 'alert.cleared')
    expect(cleared.code, cleared.stderr).toBe(0)
    expect((cleared.json.events as Event[]).map((e) => [e.type, e.order_id])).toEqual([['alert.cleared', waitingId]])

    // Unfiltered, the log holds them among the orders' own events, newest first.
    const all = admin('events', 'list', '--order', String(waitingId))
    expect(all.code, all.stderr).toBe(0)
    const types = (all.json.events as Event[]).map((e) => e.type)
    expect(types.slice(0, 2)).toEqual(['alert.cleared', 'alert.raised'])
    expect(types).toContain('order.created')
  })

  it('refuses an unknown --type with the list of types, alert types included', () => {
    const bad = admin('events', 'list', '--type', 'alert.bogus')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--type must be one of .*alert\.raised, alert\.cleared/)
  })
})

describe("the desktop app's event log", () => {
  it("shows the alert events of the acting reseller's orders, and the reseller API never does", async () => {
    const service = await openService({ dataDir })
    let listening: Listening | null = null
    try {
      const app = createHandlers(service, { transport: 'electron', listenerUrl: () => '', apiVersion: API_VERSION })
      const list = async (reseller: number, filter: Body) => {
        const r = await callHandler(app, 'listEvents', [reseller, filter, { limit: 100, offset: 0 }])
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return (r.body as { result: { items: { type: string; orderId: number | null }[]; total: number } }).result
      }
      const a = await list(resellerA, { type: 'alert.raised' })
      expect(a.items.map((e) => [e.type, e.orderId])).toEqual([['alert.raised', waitingId]])
      expect(a.total).toBe(1)
      expect((await list(resellerA, { type: 'alert.cleared' })).items).toHaveLength(1)
      const b = await list(resellerB, {})
      expect(b.items.filter((e) => e.type.startsWith('alert.')).map((e) => [e.type, e.orderId])).toEqual([
        ['alert.raised', otherId]
      ])
      // The unfiltered page counts both sets: every event of A plus its two alert events.
      const allA = await list(resellerA, {})
      expect(allA.items.filter((e) => e.type.startsWith('alert.'))).toHaveLength(2)
      expect(allA.total).toBe(allA.items.length)

      // GET /events: the reseller's own log, without alerts, and the filter does not take them.
      listening = await listen(await buildServer(service))
      const key = (await service.resellers.createApiKey(resellerA)).key
      const get = async (path: string) => {
        const res = await fetch(listening!.url + path, { headers: { 'x-api-key': key } })
        return { status: res.status, body: (await res.json()) as Body }
      }
      const events = await get('/events?limit=100')
      expect(events.status).toBe(200)
      expect((events.body.events as Event[]).some((e) => e.type.startsWith('alert.'))).toBe(false)
      expect((await get('/events?type=alert.raised')).status).toBe(400)
    } finally {
      await listening?.app.close()
      await service.close()
    }
  })
})
