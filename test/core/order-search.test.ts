import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestReseller } from '../support/server'
import {
  expectSameAsLike as sameAsLike,
  search as searchIn,
  startSearchWorld,
  type SearchWorld
} from './order-search-world'

// GET /orders?domain= answers from migration 0013's trigram index (terms of 3+ printable ASCII
// characters) or a LIKE scan (the others) on SQLite, from the pg_trgm index on PostgreSQL.
// Either way a user must see exactly what a LIKE over every row of theirs finds, whatever the
// term holds, after any kind of write.
let world: SearchWorld
let a: TestReseller
let b: TestReseller

beforeAll(async () => {
  world = await startSearchWorld()
  ;({ a, b } = world)
})
afterAll(() => world.s.close())

const db = () => world.s.service.ctx.store
const search = (who: TestReseller, term: string) => searchIn(world.s, who, term)
const expectSameAsLike = () => sameAsLike(world)

describe('GET /orders?domain= through the trigram index', () => {
  it('finds what LIKE finds, and takes every term as text, never as FTS or LIKE syntax', async () => {
    await expectSameAsLike()
    // Spot checks of what a user would expect, beside the comparison with LIKE.
    expect((await search(a, 'NIMBUS-12')).domains).toEqual(['shop.nimbus-123.net', 'www.nimbus-12.com'])
    expect((await search(a, 'nimbus OR shop')).domains).toEqual([])
    expect((await search(a, '#1#')).domains).toEqual([])
    expect((await search(b, 'nimbus')).domains).toEqual(['nimbus.example.net', 'www.nimbus-12.com'])
  })

  it('stays in step after domain edits and deletes by another writer, totals included', async () => {
    const ids = (
      (await db().all('SELECT id FROM orders WHERE reseller_id = ? ORDER BY id', a.id)) as { id: number }[]
    ).map((r) => r.id)
    // Warm the kept totals first: they must not outlive the edits.
    expect((await search(a, 'nimbus')).total).toBe(3)
    // A repair by hand writes text the API would refuse: the index must still match it literally.
    const editSql = 'UPDATE orders SET domain = ? WHERE id = ?'
    await db().run(editSql, 'weird"nimbus*or%_\\.example', ids[0])
    await db().run(editSql, 'NEAR(or "x") nimbus', ids[3])
    // Deleted with the rows that name it, as a repair by hand would.
    await db().tx(async () => {
      for (const t of ['invoices', 'credit_transactions', 'events'])
        await db().run(`DELETE FROM ${t} WHERE order_id = ?`, ids[1])
      await db().run('DELETE FROM orders WHERE id = ?', ids[1])
    })
    // Moving an order to another reseller moves it out of the first one's results.
    await db().run('UPDATE orders SET reseller_id = ? WHERE id = ?', b.id, ids[2])
    await expectSameAsLike()
    expect((await search(a, 'nimbus')).total).toBe(2)
    expect((await search(a, 'd"nimbus*or%_')).domains).toEqual(['weird"nimbus*or%_\\.example'])
    expect((await search(a, 'near(or "x")')).domains).toEqual(['NEAR(or "x") nimbus'])
    expect((await search(b, 'nimbus.example.org')).domains).toEqual(['nimbus.example.org'])
  })
})
