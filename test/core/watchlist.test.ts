/**
 * What the dashboard and the desktop notifications report: certificates ending within 30 days
 * that no automatic reissue replaces, and validations untouched for 3 days. Real SQLite, a
 * manual clock; order states are set the way issuance and validation leave them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { Watchlist } from '../../src-main/core/certificates/watchlist'
import { manualClock } from '../support/clock'

const clock = manualClock('2026-11-21T10:00:00Z')
let dir: string
let service: Service
let watch: Watchlist
let resellerId: number

const order = async (domain: string): Promise<number> => {
  const r = await service.resellers.get(resellerId)
  return (await service.orders.create(r, { productId: 2, domain })).order.id
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
  dir = mkdtempSync(join(tmpdir(), 'certdesk-watch-'))
  service = await openService({ dataDir: dir, clock: clock.clock })
  resellerId = (await service.resellers.create({ name: 'Watch', email: 'watch@example.test', groupId: 1 })).id
  await service.ledger.topUp(resellerId, 1000_00)
  watch = new Watchlist(service.ctx, service.orders)
})
afterAll(async () => {
  await service.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('expiring soon', () => {
  it('lists issued certificates ending within 30 days without a planned reissue, soonest first', async () => {
    const last = await order('last.example.test')
    await set(last, { status: 'completed', cert_valid_till: '2026-12-10', next_reissue_at: null })
    const renews = await order('renews.example.test')
    await set(renews, { status: 'completed', cert_valid_till: '2026-12-01', next_reissue_at: '2026-11-17' })
    const later = await order('later.example.test')
    await set(later, { status: 'completed', cert_valid_till: '2026-12-22', next_reissue_at: null })
    const soon = await order('soon.example.test')
    await set(soon, { status: 'completed', cert_valid_till: '2026-11-25', next_reissue_at: null })
    const gone = await order('gone.example.test')
    await set(gone, { status: 'completed', cert_valid_till: '2026-11-20', next_reissue_at: null })
    expect((await watch.expiringSoon(resellerId)).map((o) => o.domain)).toEqual([
      'soon.example.test',
      'last.example.test'
    ])
    expect((await watch.expiringAll()).map((o) => o.domain)).toEqual(['soon.example.test', 'last.example.test'])
    // Day 30 is the last day included.
    clock.set('2026-11-22T10:00:00Z')
    expect((await watch.expiringSoon(resellerId)).map((o) => o.domain)).toEqual([
      'soon.example.test',
      'last.example.test',
      'later.example.test'
    ])
    clock.set('2026-11-21T10:00:00Z')
  })
})

describe('waiting and stuck validations', () => {
  it('lists orders waiting for a CSR or validation oldest first, and reports those untouched for 3 days', async () => {
    const waiting = (await watch.waitingForValidation(resellerId)).map((o) => o.domain)
    expect(waiting).toEqual([])
    const a = await order('a.example.test')
    const b = await order('b.example.test')
    await set(b, { status: 'validation_pending', updated_at: '2026-11-18 09:00:00' })
    const c = await order('c.example.test')
    await set(c, { status: 'validation_pending', updated_at: '2026-11-19 09:00:00' })
    expect((await watch.waitingForValidation(resellerId)).map((o) => o.id)).toEqual([a, b, c])
    expect((await watch.stuckValidations()).map((o) => o.domain)).toEqual(['b.example.test'])
    clock.advanceDays(1)
    expect((await watch.stuckValidations()).map((o) => o.domain)).toEqual(['b.example.test', 'c.example.test'])
  })
})
