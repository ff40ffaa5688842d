/**
 * The orders list as a worklist, over the bridge: each saved view's count is what counting the
 * rows says after every kind of write (orders placed, cancelled, paid, issued, reissued, a
 * verdict changing, a writer that knows nothing of the tallies), and paging a view gives its
 * rows and nothing else; a row carries its validation progress, next renewal and verdict; a
 * name is found in the form the list shows it and in its A-label form.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { openService, type Service } from '../../src-main/core/service'
import { ORDER_VIEWS, type OrderListView } from '../../src-shared/list-records'
import { sqliteOf } from '../support/engine'

let dataDir: string
let service: Service
let h: AppHandlers
let a: number
let b: number
let now = new Date('2026-11-20T10:00:00Z')

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-worklist-'))
  service = await openService({ dataDir, clock: () => now })
  const mk = async (name: string) =>
    (await service.resellers.create({ name, email: `${name.toLowerCase()}@example.test`, company: name })).id
  a = await mk('Alpha')
  b = await mk('Bravo')
  await service.ledger.topUp(a, 1_000_000)
  await service.ledger.topUp(b, 1_000_000)
  h = createHandlers(service, { transport: 'browser', listenerUrl: () => 'http://127.0.0.1:1', apiVersion: '3.0' })
})
afterAll(async () => {
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const db = () => service.ctx.store
const place = async (who: number, domain: string, payment: 'credit' | 'invoice' = 'credit') =>
  (await service.orders.create(await service.resellers.get(who), { productId: 2, domain }, payment)).order.id

/** What each view means, written out over the rows themselves, for the reseller and today. */
const PLAIN: Record<OrderListView, string> = {
  needs_validation: `status = 'validation_pending'`,
  renewal_due: `status NOT IN ('cancelled', 'expired') AND (
      (next_reissue_at IS NOT NULL AND cert_valid_till IS NOT NULL AND next_reissue_at <= :horizon)
      OR ((next_reissue_at IS NULL OR cert_valid_till IS NULL) AND status = 'completed'
          -- the earlier of the certificate's end and the subscription's is within the horizon
          AND (cert_valid_till <= :horizon OR purchase_end_date <= :horizon)))`,
  installation_problems: `status = 'completed' AND id IN (SELECT order_id FROM installation_status
      WHERE verdict NOT IN ('ok', 'unchecked'))`,
  unpaid: `payment_status = 'unpaid' AND status != 'cancelled'`
}
const horizon = () => new Date(now.getTime() + 30 * 86_400_000).toISOString().slice(0, 10)

async function plainIds(who: number, view: OrderListView): Promise<number[]> {
  return (
    // The day is a literal of this test: written into the statement, as every engine takes it.
    (
      (await db().all(
        `SELECT id FROM orders WHERE reseller_id = ? AND ${PLAIN[view].replaceAll(':horizon', `'${horizon()}'`)} ORDER BY id DESC`,
        who
      )) as { id: number }[]
    ).map((r) => r.id)
  )
}

async function viewIds(who: number, view: OrderListView): Promise<{ ids: number[]; total: number }> {
  const ids: number[] = []
  let total: number
  let after
  for (;;) {
    const p = await h.orderPage(who, { filter: { view }, sort: 'date', position: ids.length, limit: 3, after })
    total = p.total
    ids.push(...p.items.map((o) => o.id))
    if (p.items.length < 3) break
    after = p.keys.at(-1)
  }
  return { ids, total }
}

async function expectViewsMatchRows(): Promise<void> {
  for (const who of [a, b]) {
    const counts = await h.orderViewCounts(who)
    for (const view of ORDER_VIEWS) {
      const want = await plainIds(who, view)
      expect(counts[view], `${view} count of reseller ${who}`).toBe(want.length)
      const got = await viewIds(who, view)
      expect(got.ids, `${view} rows of reseller ${who}`).toEqual(want)
      expect(got.total, `${view} total of reseller ${who}`).toBe(want.length)
    }
  }
}

/** What issuing a certificate writes to the order (core/certificates/issuance.ts), as any writer may. */
async function issue(id: number, from: string, till: string, nextReissue: string | null): Promise<void> {
  await db().run(
    `UPDATE orders SET status = 'completed', cert_valid_from = ?, cert_valid_till = ?, next_reissue_at = ? WHERE id = ?`,
    from,
    till,
    nextReissue,
    id
  )
  await db().run(
    `INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at) VALUES (?, 'unchecked', ?, ?)
       ON CONFLICT(order_id) DO NOTHING`,
    id,
    `${from} 10:00:00`,
    `${from} 11:00:00`
  )
}
const verdict = async (id: number, v: string) =>
  await db().run('UPDATE installation_status SET verdict = ? WHERE order_id = ?', v, id)

describe('saved views of the orders list', () => {
  it('count and list exactly the rows they describe after every kind of write', async () => {
    const ids: number[] = []
    for (let i = 0; i < 14; i++)
      ids.push(await place(i % 4 === 3 ? b : a, `site${i}.example.test`, i % 3 === 0 ? 'invoice' : 'credit'))
    await expectViewsMatchRows()
    // Validation under way for two orders, one of them unpaid.
    await db().run(`UPDATE orders SET status = 'validation_pending' WHERE id IN (?, ?)`, ids[1], ids[3])
    // Issued: one renews automatically within the horizon, one later, one ends without a reissue.
    await issue(ids[2], '2026-11-01', '2027-05-20', '2026-12-10')
    await issue(ids[4], '2026-11-01', '2027-05-20', '2027-05-06')
    await issue(ids[5], '2026-11-01', '2026-12-05', null)
    await issue(ids[7], '2026-11-01', '2027-05-20', '2026-12-01')
    await verdict(ids[2], 'unreachable')
    await verdict(ids[4], 'ok')
    await verdict(ids[7], 'chain_incomplete')
    await expectViewsMatchRows()
    // Cancelled: an unpaid order stops being unpaid; a paid one stops needing anything.
    await service.orders.cancel(a, ids[6])
    await service.orders.cancel(a, ids[0])
    await service.orders.payFromCredit(a, ids[9])
    // The verdict mends, another breaks, an order expires, one moves to the other reseller.
    await verdict(ids[2], 'ok')
    await verdict(ids[5], 'old_certificate')
    await db().run(`UPDATE orders SET status = 'expired', next_reissue_at = NULL WHERE id = ?`, ids[4])
    await db().run('UPDATE orders SET reseller_id = ? WHERE id = ?', b, ids[7])
    await expectViewsMatchRows()
    // Time passes: a renewal 40 days out comes inside the horizon without any write.
    await issue(ids[8], '2026-11-01', '2027-05-20', '2027-01-01')
    expect(await plainIds(a, 'renewal_due')).not.toContain(ids[8])
    now = new Date('2026-12-10T10:00:00Z')
    expect(await plainIds(a, 'renewal_due')).toContain(ids[8])
    await expectViewsMatchRows()
    // A deleted order leaves every view (a repair by hand).
    sqliteOf(service).pragma('foreign_keys = OFF')
    try {
      for (const t of ['installation_status', 'invoices', 'credit_transactions'])
        await db().run(`DELETE FROM ${t} WHERE order_id = ?`, ids[5])
      await db().run('DELETE FROM orders WHERE id = ?', ids[5])
    } finally {
      sqliteOf(service).pragma('foreign_keys = ON')
    }
    await expectViewsMatchRows()
  })

  it('combine with the status filter and a search, and sort by the next renewal', async () => {
    const due = await h.orderPage(a, {
      filter: { view: 'renewal_due' },
      sort: 'renewal',
      position: 0,
      limit: 100
    })
    const days = due.items.map((o) => o.worklist.renewalDue ?? '~')
    expect(days).toEqual([...days].sort())
    expect(due.items.every((o) => (o.worklist.renewalDue ?? '~') <= horizon())).toBe(true)
    const searched = await h.orderPage(a, {
      filter: { view: 'renewal_due', search: 'site8.' },
      position: 0,
      limit: 100
    })
    expect(searched.items.map((o) => o.domain)).toEqual(['site8.example.test'])
    expect(searched.total).toBe(1)
    const none = await h.orderPage(a, {
      filter: { view: 'renewal_due', status: 'pending' },
      position: 0,
      limit: 100
    })
    expect(none.total).toBe(0)
    await expect(
      h.orderPage(a, { filter: { view: 'everything' as OrderListView }, position: 0, limit: 10 })
    ).rejects.toThrow(/view must be needs_validation, renewal_due, installation_problems or unpaid/)
  })
})

describe('a row of the orders list', () => {
  it('shows validation progress per name, the next renewal and the verdict', async () => {
    const id = await place(a, 'progress.example.test')
    await db().run(`UPDATE orders SET status = 'validation_pending' WHERE id = ?`, id)
    const checkSql = `INSERT INTO dcv_checks (order_id, name, method, status) VALUES (?, ?, ?, ?)`
    await db().run(checkSql, id, 'progress.example.test', 'http', 'valid')
    await db().run(checkSql, id, 'www.progress.example.test', 'http', 'valid')
    await db().run(checkSql, id, '*.progress.example.test', 'dns', 'pending')
    const page = await h.orderPage(a, { filter: { search: 'progress.example' }, position: 0, limit: 10 })
    expect(page.items[0].worklist).toEqual({
      namesTotal: 3,
      namesValid: 2,
      methods: ['dns', 'http'],
      renewalDue: null,
      renewalKind: null,
      installVerdict: null,
      installLabel: null
    })
    await issue(id, '2026-12-01', '2027-06-10', '2027-05-27')
    await verdict(id, 'hostname_mismatch')
    const after = await h.orderPage(a, { filter: { search: 'progress.example' }, position: 0, limit: 10 })
    expect(after.items[0].worklist).toMatchObject({
      renewalDue: '2027-05-27',
      renewalKind: 'reissue',
      installVerdict: 'hostname_mismatch',
      installLabel: 'certificate not valid for this name'
    })
    // The last certificate of the paid period: a renewal is due when it ends.
    await db().run('UPDATE orders SET next_reissue_at = NULL WHERE id = ?', id)
    const last = await h.orderPage(a, { filter: { search: 'progress.example' }, position: 0, limit: 10 })
    expect(last.items[0].worklist).toMatchObject({ renewalDue: '2027-06-10', renewalKind: 'renewal' })
  })
})

describe('search', () => {
  it('finds an internationalised name as shown and as its A-label, never another reseller’s', async () => {
    const mine = await place(a, 'xn--bcher-kva.example')
    await place(b, 'xn--bcher-kva.example')
    for (const term of ['bücher.example', 'BÜCHER', 'bücher', 'xn--bcher-kva', 'xn--bcher-kva.example']) {
      const page = await h.orderPage(a, { filter: { search: term }, position: 0, limit: 10 })
      expect(
        page.items.map((o) => o.id),
        term
      ).toEqual([mine])
      expect(page.total, term).toBe(1)
    }
    const other = await h.orderPage(a, { filter: { search: 'bucher' }, position: 0, limit: 10 })
    expect(other.total).toBe(0)
  })
})
