/**
 * The Electron window's desktop notifications, without Electron: each expiring certificate and
 * each stuck validation is told once, and again only when its end date or last change moves.
 * Real SQLite and the core's Watchlist, a manual clock.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openService, type Service } from '../src-main/core/service'
import { noticeFeed } from '../src-main/desktop-notices'
import { manualClock } from './support/clock'

const clock = manualClock('2026-11-21T10:00:00Z')
let dir: string
let service: Service

const order = (resellerId: number, domain: string, fields: Record<string, string | null>): number => {
  const id = service.orders.create(service.resellers.get(resellerId), { productId: 2, domain }).order.id
  set(id, fields)
  return id
}
const set = (id: number, fields: Record<string, string | null>): void => {
  const cols = Object.keys(fields)
  service.ctx.db
    .prepare(`UPDATE orders SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
    .run(...Object.values(fields), id)
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-notices-'))
  service = openService({ dataDir: dir, clock: clock.clock })
})
afterAll(() => {
  service.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('desktop notices', () => {
  it('tells each expiring certificate and stuck validation once, and again when it changes', () => {
    const r = service.resellers.create({ name: 'Notice', email: 'notice@example.test', groupId: 1 }).id
    service.ledger.topUp(r, 1000_00)
    const ending = order(r, 'ending.example.test', {
      status: 'completed',
      cert_valid_till: '2026-12-10',
      next_reissue_at: null
    })
    order(r, 'renewing.example.test', {
      status: 'completed',
      cert_valid_till: '2026-12-01',
      next_reissue_at: '2026-11-17'
    })
    order(r, 'stuck.example.test', { status: 'validation_pending', updated_at: '2026-11-17 08:00:00' })
    const next = noticeFeed(service.watchlist)

    const first = next()
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
    expect(next()).toEqual([])
    // A reissue moved the end date, still without renewal after it: that is news again.
    set(ending, { cert_valid_till: '2026-12-15' })
    expect(next().map((n) => n.body)).toEqual([expect.stringContaining('ends on 2026-12-15')])
    expect(next()).toEqual([])
  })
})
