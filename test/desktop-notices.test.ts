/**
 * The Electron window's desktop notifications, without Electron: each expiring certificate and
 * each stuck validation is told once, and again only when its end date or last change moves.
 * Real SQLite and the core's Watchlist, a manual clock.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Service } from '../src-main/core/service'
import { openService } from './support/engine'
import { noticeFeed } from '../src-main/desktop-notices'
import { manualClock } from './support/clock'

const clock = manualClock('2026-11-21T10:00:00Z')
let dir: string
let service: Service

const order = async (resellerId: number, domain: string, fields: Record<string, string | null>): Promise<number> => {
  const id = (await service.orders.create(await service.resellers.get(resellerId), { productId: 2, domain })).order.id
  await set(id, fields)
  return id
}
const set = async (id: number, fields: Record<string, string | null>): Promise<void> => {
  const cols = Object.keys(fields)
  await service.ctx.store.run(
    `UPDATE orders SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`,
    ...Object.values(fields),
    id
  )
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-notices-'))
  service = await openService({ dataDir: dir, clock: clock.clock })
})
afterAll(async () => {
  await service.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('desktop notices', () => {
  it('tells each expiring certificate and stuck validation once, and again when it changes', async () => {
    const r = (await service.resellers.create({ name: 'Notice', email: 'notice@example.test', groupId: 1 })).id
    await service.ledger.topUp(r, 1000_00)
    const ending = await order(r, 'ending.example.test', {
      status: 'completed',
      cert_valid_till: '2026-12-10',
      next_reissue_at: null
    })
    await order(r, 'renewing.example.test', {
      status: 'completed',
      cert_valid_till: '2026-12-01',
      next_reissue_at: '2026-11-17'
    })
    await order(r, 'stuck.example.test', { status: 'validation_pending', updated_at: '2026-11-17 08:00:00' })
    const next = noticeFeed(service.watchlist)

    const first = await next()
    expect(first).toEqual([
      {
        title: 'Certificate expiring without renewal',
        body: expect.stringMatching(
          /^ending\.example\.test \(ORD-\d{4}-\d{6}\) ends on 2026-12-10; its subscription does not renew it\.$/
        )
      },
      {
        title: 'Validation waiting',
        body: expect.stringMatching(
          /^stuck\.example\.test \(ORD-\d{4}-\d{6}\) has waited for domain validation since 2026-11-17 08:00:00\.$/
        )
      }
    ])
    expect(await next()).toEqual([])
    // A reissue moved the end date, still without renewal after it: that is news again.
    await set(ending, { cert_valid_till: '2026-12-15' })
    expect((await next()).map((n) => n.body)).toEqual([expect.stringContaining('ends on 2026-12-15')])
    expect(await next()).toEqual([])
  })
})
