/**
 * The copy between the two engines, at the level of the store port: a book written through the
 * real service on one engine arrives row for row on the other, read in small batches; a
 * certificate that names a later one as its replacement (a reference forward within one table)
 * arrives intact; and the copy is one snapshot of its source: a top-up committed on the source
 * while the copy runs is either wholly in it or wholly out, so the books still balance.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EngineName, Store } from '../../../src-main/core/store'
import { copyPlan } from '../../../src-main/core/store/copy-plan'
import { copyStore, type CopyProgress } from '../../../src-main/core/store/copy'
import { openPostgresStore } from '../../../src-main/core/store/postgres-open'
import { openSqliteStore } from '../../../src-main/core/store/sqlite-engine'
import { createTestDatabase, type TestDatabase } from '../../support/postgres'
import {
  postgresContents,
  seedDesktopBook,
  sqliteContents,
  type Contents,
  type SeededBook
} from '../../support/store-copy'
import { engineFixture, type EngineFixture } from './engines'

const PAIRS: [EngineName, EngineName][] = [
  ['sqlite', 'postgres'],
  ['postgres', 'sqlite']
]

describe.each(PAIRS)('copying a book from %s to %s', (from, to) => {
  let sourceDb: TestDatabase | undefined
  let book: SeededBook
  let source: Store
  const targets: EngineFixture[] = []

  const contentsOf = async (engine: EngineName, where: string): Promise<Contents> =>
    engine === 'sqlite' ? sqliteContents(join(where, 'certdesk.sqlite')) : await postgresContents(where)
  const sourceWhere = () => (from === 'sqlite' ? book.dataDir : (sourceDb as TestDatabase).url)

  beforeAll(async () => {
    if (from === 'postgres') sourceDb = await createTestDatabase({ empty: true })
    book = await seedDesktopBook(sourceDb?.url)
    source = from === 'sqlite' ? openSqliteStore(book.dataDir) : await openPostgresStore((sourceDb as TestDatabase).url)
    // Two certificates of the embedded ACME server, the first replaced by the second: a
    // reference to a row that comes later in the same table.
    const subscription = await source.value<number>('SELECT id FROM acme_subscriptions')
    await source.tx(async (t) => {
      await t.run(
        `INSERT INTO acme_accounts (id, subscription_id, thumbprint, jwk, status, created_at)
         VALUES (1, ?, 'thumb', '{}', 'valid', '2026-11-21 10:00:00')`,
        subscription as number
      )
      for (const id of [1, 2]) {
        await t.run(
          `INSERT INTO acme_orders (id, public_id, account_id, status, identifiers, expires_at, created_at)
           VALUES (?, ?, 1, 'valid', '[]', '2026-11-28 10:00:00', '2026-11-21 10:00:00')`,
          id,
          `order-${id}`
        )
        await t.run(
          `INSERT INTO acme_certificates (id, public_id, order_id, account_id, serial_hex, ari_id, spki_sha256,
             chain_pem, not_before, not_after)
           VALUES (?, ?, ?, 1, ?, ?, 'spki', 'pem', '2026-11-21 10:00:00', '2027-02-19 10:00:00')`,
          id,
          `cert-${id}`,
          id,
          `0${id}`,
          `aki.0${id}`
        )
      }
      await t.run('UPDATE acme_certificates SET replaced_by = 2 WHERE id = 1')
    })
  })
  afterAll(async () => {
    await source?.close()
    for (const t of targets) await t.dispose()
    await sourceDb?.drop()
  })

  it('carries every row of every table, reading a few rows at a time', async () => {
    const fx = await engineFixture(to)
    targets.push(fx)
    const target = await fx.open()
    const seen = new Map<string, number[]>()
    const result = await copyStore(source, target, {
      targetName: fx.where,
      batch: 3,
      onProgress: (p: CopyProgress) => void seen.set(p.table, [...(seen.get(p.table) ?? []), p.rows])
    })
    const want = await contentsOf(from, sourceWhere())
    const got = await contentsOf(to, fx.where)
    for (const t of copyPlan().tables) expect(got.get(t.name), t.name).toEqual(want.get(t.name))
    expect(result.tables.find((t) => t.name === 'acme_certificates')?.rows).toBe(2)
    expect(await target.value('SELECT replaced_by FROM acme_certificates WHERE id = 1')).toBe(2)
    // Batches of three: the catalogue's prices came in many steps, never more than three rows apart.
    const prices = seen.get('product_prices') ?? []
    expect(prices.length).toBeGreaterThan(10)
    expect(prices.every((n, i) => i === 0 || n - prices[i - 1] <= 3)).toBe(true)
    // The next row the target numbers follows the copied ones.
    const next = await target.tx((t) => t.nextId('orders'))
    expect(next).toBe(book.maxOrderId + 1)
    // Every trigger that keeps tallies and cache versions is in force again (PostgreSQL loads
    // with them off): otherwise no kept answer could ever be served from the copy.
    expect(await target.catalogueVersion()).not.toContain('!')
    const tallies = await target.value<number>('SELECT n FROM ledger_tallies WHERE reseller_id = ?', book.resellerId)
    await target.run(
      `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, created_at)
       VALUES (?, 1, 'credit', 'after the copy', 1, '2026-11-21 10:00:00')`,
      book.resellerId
    )
    expect(await target.value('SELECT n FROM ledger_tallies WHERE reseller_id = ?', book.resellerId)).toBe(
      (tallies ?? 0) + 1
    )
  })

  it('copies one snapshot: a top-up committed on the source mid-copy is not half in the copy', async () => {
    const fx = await engineFixture(to)
    targets.push(fx)
    const target = await fx.open()
    const writer =
      from === 'sqlite' ? openSqliteStore(book.dataDir) : await openPostgresStore((sourceDb as TestDatabase).url)
    const before = await source.value<number>(
      'SELECT credit_balance_cents FROM resellers WHERE id = ?',
      book.resellerId
    )
    const ledgerBefore = await source.value<number>('SELECT COUNT(*) FROM credit_transactions')
    let wrote = false
    try {
      await copyStore(source, target, {
        targetName: fx.where,
        onProgress: async (p) => {
          // The resellers are in the copy, the ledger not yet: a top-up now, in one transaction.
          if (p.table !== 'resellers' || p.rows !== p.total || wrote) return
          wrote = true
          await writer.tx(async (t) => {
            await t.run(
              'UPDATE resellers SET credit_balance_cents = credit_balance_cents + 500 WHERE id = ?',
              book.resellerId
            )
            await t.run(
              `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, created_at)
               VALUES (?, 500, 'credit', 'mid-copy top-up', ?, '2026-11-21 10:00:00')`,
              book.resellerId,
              (before as number) + 500
            )
          })
        }
      })
    } finally {
      await writer.close()
    }
    expect(wrote).toBe(true)
    // The source moved on; the copy is the book as it was when the copy began, and balances.
    expect(await source.value('SELECT COUNT(*) FROM credit_transactions')).toBe((ledgerBefore as number) + 1)
    expect(await target.value('SELECT COUNT(*) FROM credit_transactions')).toBe(ledgerBefore)
    expect(await target.value('SELECT credit_balance_cents FROM resellers WHERE id = ?', book.resellerId)).toBe(before)
  })
})
