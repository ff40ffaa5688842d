/**
 * The substring index of migration 0013 (FTS5 trigram, SQLite) is built for the orders a store
 * held before it: a store at schema 12 migrated now finds what LIKE finds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, migrations } from '../../src-main/core/store/db'
import { sqliteOf } from '../support/engine'
import { expectSameAsLike, search, startSearchWorld, type SearchWorld } from './order-search-world'

let world: SearchWorld
beforeAll(async () => {
  world = await startSearchWorld()
})
afterAll(() => world.s.close())

describe('GET /orders?domain= on a store from before the index', () => {
  it('is built for orders placed before migration 0013', async () => {
    // The store as schema 12 left it: no search index, nor anything a later migration made.
    // Migrating must index the orders it holds.
    const db = sqliteOf(world.s.service)
    // Undone newest first, each migration's statements last to first (a column goes after its indexes).
    for (const m of migrations.filter((x) => x.version > 12).reverse()) {
      const made = m.sql.matchAll(
        /CREATE\s+(?:VIRTUAL\s+)?(TABLE|INDEX|TRIGGER)\s+(\w+)|ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)/gi
      )
      for (const [, kind, name, table, column] of [...made].reverse())
        db.exec(kind ? `DROP ${kind} IF EXISTS ${name}` : `ALTER TABLE ${table} DROP COLUMN ${column}`)
    }
    expect(db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'orders_search'`).pluck().get()).toBe(0)
    db.pragma('user_version = 12')
    migrate(db)
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(13)
    await expectSameAsLike(world)
    expect((await search(world.s, world.b, 'nimbus')).total).toBe(2)
  })
})
