/**
 * What the dashboard and the desktop notifications report: certificates ending within 30 days
 * that no automatic reissue replaces, and validations untouched for 3 days. Real SQLite, a
 * manual clock; order states are set the way issuance and validation leave them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openService, type Service } from '../../src-main/core/service'
import { Watchlist } from '../../src-main/core/watchlist'
import { manualClock } from '../support/clock'

const clock = manualClock('2026-11-21T10:00:00Z')
let dir: string
let service: Service
let watch: Watchlist
let resellerId: number

const order = (domain: string): number => {
  const r = service.resellers.get(resellerId)
  return service.orders.create(r, { productId: 2, domain }).order.id
}
const set = (id: number, fields: Record<string, string | null>): void => {
  const cols = Object.keys(fields)
  service.ctx.db
    .prepare(`UPDATE orders SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
    .run(...Object.values(fields), id)
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-watch-'))
  service = openService({ dataDir: dir, clock: clock.clock })
  resellerId = service.resellers.create({ name: 'Watch', email: 'watch@example.test', groupId: 1 }).id
  service.ledger.topUp(resellerId, 1000_00)
  watch = new Watchlist(service.ctx, service.orders)
})
afterAll(() => {
  service.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('expiring soon', () => {
  it('lists issued certificates ending within 30 days without a planned reissue, soonest first', () => {
    const last = order('last.example.test')
    set(last, { status: 'completed', cert_valid_till: '2026-12-10', next_reissue_at: null })
    const renews = order('renews.example.test')
    set(renews, { status: 'completed', cert_valid_till: '2026-12-01', next_reissue_at: '2026-11-17' })
    const later = order('later.example.test')
    set(later, { status: 'completed', cert_valid_till: '2026-12-22', next_reissue_at: null })
    const soon = order('soon.example.test')
    set(soon, { status: 'completed', cert_valid_till: '2026-11-25', next_reissue_at: null })
    const gone = order('gone.example.test')
    set(gone, { status: 'completed', cert_valid_till: '2026-11-20', next_reissue_at: null })
    expect(watch.expiringSoon(resellerId).map((o) => o.domain)).toEqual(['soon.example.test', 'last.example.test'])
    expect(watch.expiringAll().map((o) => o.domain)).toEqual(['soon.example.test', 'last.example.test'])
    // Day 30 is the last day included.
    clock.set('2026-11-22T10:00:00Z')
    expect(watch.expiringSoon(resellerId).map((o) => o.domain)).toEqual([
      'soon.example.test',
      'last.example.test',
      'later.example.test'
    ])
    clock.set('2026-11-21T10:00:00Z')
  })
})

describe('waiting and stuck validations', () => {
  it('lists orders waiting for a CSR or validation oldest first, and reports those untouched for 3 days', () => {
    const waiting = watch.waitingForValidation(resellerId).map((o) => o.domain)
    expect(waiting).toEqual([])
    const a = order('a.example.test')
    const b = order('b.example.test')
    set(b, { status: 'validation_pending', updated_at: '2026-11-18 09:00:00' })
    const c = order('c.example.test')
    set(c, { status: 'validation_pending', updated_at: '2026-11-19 09:00:00' })
    expect(watch.waitingForValidation(resellerId).map((o) => o.id)).toEqual([a, b, c])
    expect(watch.stuckValidations().map((o) => o.domain)).toEqual(['b.example.test'])
    clock.advanceDays(1)
    expect(watch.stuckValidations().map((o) => o.domain)).toEqual(['b.example.test', 'c.example.test'])
  })
})
