/**
 * One customer's slow web server must never hold up anyone else's renewals. Beside a good order
 * and a due reissue, a dozen orders wait on web servers that trickle one byte every two seconds
 * or never answer: the scheduler validates them side by side (never more at once than its bound),
 * each fails with the reason after the total deadline, and the good order and the reissue go
 * through in the same pass. A pass still busy with slow validations when the next one starts
 * does not hold that one's reissues back, and the next pass does not check those orders twice.
 *
 * Bounds are generous upper limits (the machine is shared and slow), never speed targets.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { VALIDATION_CONCURRENCY } from '../../src-main/core/scheduler'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { manualClock } from '../support/clock'
import { opensslCsr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { startSlowWeb, until, within, type Behaviour, type SlowWeb } from '../support/slow-peers'

/** Far above the 10 s deadline of a fetch, times the rounds the bound makes: a hung pass fails it. */
const BOUND_MS = 120_000
const clock = manualClock('2026-11-21T09:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-slow-peers-'))
let service: Service
let dns: DnsServer
let web: SlowWeb
let resellerId: number

/** Two that trickle (in the headers, in the body) and enough silent ones to fill the bound and more. */
const slow: { domain: string; behaviour: Behaviour }[] = [
  { domain: 'trickle-head.example.com', behaviour: 'trickle-head' },
  { domain: 'trickle-body.example.com', behaviour: 'trickle-body' },
  ...Array.from({ length: 10 }, (_, i) => ({ domain: `silent${i}.example.com`, behaviour: 'silent' as Behaviour }))
]
const ids = new Map<string, number>()

/** Orders `domain` and configures it for http validation; `publish` puts its file up. */
async function order(domain: string, publish: boolean): Promise<number> {
  const id = (
    await service.orders.create(await service.resellers.get(resellerId), { productId: 2, domain, period: 36 })
  ).order.id
  const conf = await service.certificates.configure(resellerId, {
    orderId: id,
    csr: opensslCsr([domain]),
    dcvMethod: 'http'
  })
  const i = conf.validation[0].instructions
  if (i.method !== 'http') throw new Error('expected http instructions')
  if (publish) {
    web.behave(domain, 'good')
    web.put(domain, new URL(i.url).pathname, i.fileContent)
  }
  ids.set(domain, id)
  return id
}

const row = async (id: number) =>
  (await service.ctx.store.get('SELECT order_number, status, next_reissue_at FROM orders WHERE id = ?', id)) as {
    order_number: string
    status: string
    next_reissue_at: string | null
  }
const checkDetail = async (id: number) =>
  ((await service.ctx.store.value('SELECT detail FROM dcv_checks WHERE order_id = ?', id)) as string | null) ?? ''

const bounded = <T>(p: Promise<T>): Promise<T> => within(p, BOUND_MS, 'the scheduler pass')

beforeAll(async () => {
  ;[dns, web] = await Promise.all([startDns(), startSlowWeb()])
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.port))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const r = await service.resellers.create({ name: 'Many Customers', email: 'many@example.test', groupId: 1 })
  resellerId = r.id
  await service.ledger.topUp(r.id, 10_000_000)
  // An order that is already issued, to come due for its automatic reissue.
  const renew = await order('renew.example.com', true)
  expect((await service.certificates.status(resellerId, renew)).order.status).toBe('completed')
  for (const s of slow) {
    web.behave(s.domain, s.behaviour)
    await order(s.domain, false)
  }
  await order('good.example.com', true)
}, 120_000)
afterAll(async () => {
  await service?.scheduler.idle()
  await service?.close()
  await Promise.all([dns?.close(), web?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

describe('a scheduler pass beside slow customers', () => {
  it(
    'issues the good order and the due reissue, and fails the slow ones with the reason',
    async () => {
      const renew = ids.get('renew.example.com') as number
      const good = ids.get('good.example.com') as number
      clock.set(`${(await row(renew)).next_reissue_at}T09:00:00Z`)
      const report = await bounded(service.scheduler.run())

      expect(report.issued.map((i) => i.order_id).sort()).toEqual([renew, good].sort())
      expect((await row(good)).status).toBe('completed')
      expect(report.errors).toEqual([])
      for (const s of slow) {
        const id = ids.get(s.domain) as number
        expect((await row(id)).status, s.domain).toBe('validation_pending')
        expect(await checkDetail(id), s.domain).toMatch(
          new RegExp(
            `^could not fetch http://${s.domain.replace(/\./g, '\\.')}/\\.well-known/pki-validation/[0-9A-F]{32}\\.txt: no complete answer within 10 s$`
          )
        )
        expect(web.stats(s.domain).connections, s.domain).toBe(1)
      }
      // Side by side, never more at once than the bound.
      expect(web.slow.maxOpen).toBeGreaterThan(1)
      expect(web.slow.maxOpen).toBeLessThanOrEqual(VALIDATION_CONCURRENCY)
      await until(() => web.slow.open === 0, 10_000, 'the slow connections to close')
    },
    BOUND_MS + 30_000
  )

  it(
    'a pass still busy with slow validations does not hold back the next pass, which checks nothing twice',
    async () => {
      const renew = ids.get('renew.example.com') as number
      // Issued in the same pass as the renewal, so due on the same day.
      const good = ids.get('good.example.com') as number
      const before = new Map(slow.map((s) => [s.domain, web.stats(s.domain).connections]))
      let firstDone = false
      const first = service.scheduler.run().finally(() => {
        firstDone = true
      })
      await until(() => web.slow.open > 0, 30_000, 'the first pass to reach the slow servers')

      // The timer fires again with the renewal now due.
      clock.set(`${(await row(renew)).next_reissue_at}T09:00:00Z`)
      const second = await bounded(service.scheduler.run())
      expect(firstDone).toBe(false)
      expect(second.issued.map((i) => i.order_id).sort()).toEqual([renew, good].sort())

      const firstReport = await bounded(first)
      expect(firstReport.issued).toEqual([])
      // Every slow order was checked once, by the first pass only.
      for (const s of slow) expect(web.stats(s.domain).connections - (before.get(s.domain) ?? 0), s.domain).toBe(1)
    },
    2 * BOUND_MS
  )
})
