/**
 * Money and idempotency across connections, on both engines: 40 orders race for the last
 * dollars through several stores on one book (as several processes or nodes would), each
 * written the way the core writes a debit (read the balance, check it, write the new balance
 * and its ledger row). None may overspend, and the balance must equal the ledger. Then 40
 * requests with one Idempotency-Key: one order, one charge, the same answer for all.
 *
 * The debit writes the balance it computed (`SET balance = ?`), not `balance - ?`: under a
 * weaker isolation two debits that read the same balance would both pass and one would be
 * lost. Only the engine's transactions keep it right.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../../src-main/core/store'
import { createTables, ENGINES, engineFixture, type EngineFixture } from './engines'

const PRICE = 100

async function debit(store: Store, account: number): Promise<'paid' | 'short'> {
  return store.tx(async (t) => {
    const balance = await t.value<number>('SELECT balance_cents FROM race_accounts WHERE id = ?', account)
    if (balance === undefined || balance < PRICE) return 'short'
    await t.run('UPDATE race_accounts SET balance_cents = ? WHERE id = ?', balance - PRICE, account)
    await t.insert(
      'INSERT INTO race_ledger (account_id, amount_cents, balance_after_cents) VALUES (?, ?, ?)',
      account,
      -PRICE,
      balance - PRICE
    )
    return 'paid'
  })
}

/** The Idempotency-Key rule: the first answer is kept with the order, in its transaction. */
async function orderOnce(store: Store, account: number, key: string): Promise<string> {
  return store.tx(async (t) => {
    const kept = await t.value<string>('SELECT answer FROM race_keys WHERE account_id = ? AND key = ?', account, key)
    if (kept !== undefined) return kept
    const balance = (await t.value<number>('SELECT balance_cents FROM race_accounts WHERE id = ?', account)) ?? 0
    if (balance < PRICE) return 'short'
    await t.run('UPDATE race_accounts SET balance_cents = ? WHERE id = ?', balance - PRICE, account)
    const id = await t.insert(
      'INSERT INTO race_ledger (account_id, amount_cents, balance_after_cents) VALUES (?, ?, ?)',
      account,
      -PRICE,
      balance - PRICE
    )
    const answer = `order for ledger row ${id}`
    await t.run('INSERT INTO race_keys (account_id, key, answer) VALUES (?, ?, ?)', account, key, answer)
    return answer
  })
}

describe.each(ENGINES)('concurrent orders on %s', (engine) => {
  let fx: EngineFixture
  let stores: Store[]

  beforeAll(async () => {
    fx = await engineFixture(engine)
    stores = [await fx.open(), await fx.open(), await fx.open(), await fx.open()]
    await createTables(
      stores[0],
      `CREATE TABLE race_accounts (id INTEGER PRIMARY KEY, balance_cents INTEGER NOT NULL) STRICT;
       CREATE TABLE race_ledger (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL,
         balance_after_cents INTEGER NOT NULL) STRICT;
       CREATE TABLE race_keys (account_id INTEGER NOT NULL, key TEXT NOT NULL, answer TEXT NOT NULL,
         PRIMARY KEY (account_id, key)) STRICT;`
    )
    await stores[0].run('INSERT INTO race_accounts (id, balance_cents) VALUES (1, ?), (2, ?)', 10 * PRICE, 10 * PRICE)
  })
  afterAll(async () => fx?.dispose())

  it('40 orders racing for the last 10 dollars on 4 connections: 10 paid, never overspent, balance = ledger', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => debit(stores[i % 4], 1)))
    expect(results.filter((r) => r === 'paid')).toHaveLength(10)
    expect(results.filter((r) => r === 'short')).toHaveLength(30)
    expect(await stores[1].value('SELECT balance_cents FROM race_accounts WHERE id = 1')).toBe(0)
    const ledger = await stores[2].all<{ amount_cents: number; balance_after_cents: number }>(
      'SELECT amount_cents, balance_after_cents FROM race_ledger WHERE account_id = 1 ORDER BY id'
    )
    expect(ledger.reduce((s, r) => s + r.amount_cents, 0)).toBe(-10 * PRICE)
    // Each debit saw the balance the previous one left: 900, 800, … 0, each exactly once.
    expect(ledger.map((r) => r.balance_after_cents).sort((a, b) => b - a)).toEqual(
      Array.from({ length: 10 }, (_, i) => (9 - i) * PRICE)
    )
  })

  it('40 requests with one Idempotency-Key on 4 connections: one order, one charge, one answer', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => orderOnce(stores[i % 4], 2, 'key-1')))
    expect(new Set(answers).size).toBe(1)
    expect(answers[0]).toMatch(/^order for ledger row \d+$/)
    expect(await stores[3].value('SELECT balance_cents FROM race_accounts WHERE id = 2')).toBe(9 * PRICE)
    expect(await stores[3].value('SELECT COUNT(*) FROM race_ledger WHERE account_id = 2')).toBe(1)
    expect(await stores[3].value('SELECT COUNT(*) FROM race_keys WHERE account_id = 2')).toBe(1)
  })
})

describe.each(ENGINES)('leadership on %s', (engine) => {
  let fx: EngineFixture
  beforeAll(async () => (fx = await engineFixture(engine)))
  afterAll(async () => fx?.dispose())

  it('is held by one store at a time and passes on when released', async () => {
    const [a, b] = [await fx.open(), await fx.open()]
    const first = await a.tryLeadership('scheduler')
    expect(first?.held).toBe(true)
    expect(await b.tryLeadership('scheduler')).toBeNull()
    const other = await b.tryLeadership('deploys')
    expect(other?.held).toBe(true)
    await first!.release()
    const second = await b.tryLeadership('scheduler')
    expect(second?.held).toBe(true)
    await second!.release()
    await other!.release()
  })
})

describe('leadership on postgres when the leader dies', () => {
  let fx: EngineFixture
  beforeAll(async () => (fx = await engineFixture('postgres')))
  afterAll(async () => fx?.dispose())

  it('passes to another node once the leader’s connection is gone', async () => {
    const [a, b] = [await fx.open(), await fx.open()]
    const leader = await a.tryLeadership('scheduler')
    expect(await b.tryLeadership('scheduler')).toBeNull()
    // The node dies: the server ends its session, and with it the advisory lock.
    await b.run(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()`
    )
    await expect.poll(() => leader!.held).toBe(false)
    await expect.poll(async () => (await b.tryLeadership('scheduler'))?.held ?? false).toBe(true)
  })
})
