/**
 * Reading a large result in batches (a CSV export of every order) on both engines: every row
 * once, in order, from one snapshot taken when the read began, while writes go on beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../../src-main/core/store'
import { createTables, ENGINES, engineFixture, type EngineFixture } from './engines'

const ROWS = 1234

describe.each(ENGINES)('reading in batches on %s', (engine) => {
  let fx: EngineFixture
  let store: Store

  beforeAll(async () => {
    fx = await engineFixture(engine)
    store = await fx.open()
    await createTables(store, 'CREATE TABLE lines (id INTEGER PRIMARY KEY, label TEXT NOT NULL) STRICT;')
    await store.tx(async (t) => {
      for (let i = 1; i <= ROWS; i++) await t.run('INSERT INTO lines (id, label) VALUES (?, ?)', i, `line ${i}`)
    })
  })
  afterAll(async () => fx?.dispose())

  it('hands every row once, in order, in batches no larger than asked', async () => {
    const sizes: number[] = []
    const ids: number[] = []
    const n = await store.each<{ id: number; label: string }>(
      'SELECT id, label FROM lines WHERE id > ? ORDER BY id',
      [0],
      (rows) => {
        sizes.push(rows.length)
        ids.push(...rows.map((r) => r.id))
      },
      500
    )
    expect(n).toBe(ROWS)
    expect(sizes).toEqual([500, 500, 234])
    expect(ids).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
  })

  it('reads one snapshot while another connection writes between batches, and holds none of them up', async () => {
    const other = await fx.open()
    let seen = 0
    let batches = 0
    const n = await store.each<{ id: number }>('SELECT id FROM lines ORDER BY id', [], async (rows) => {
      seen += rows.length
      // A write and a read on the same book between two batches: neither waits for the export.
      await other.run('INSERT INTO lines (label) VALUES (?)', `written during batch ${++batches}`)
      expect(await store.value('SELECT COUNT(*) FROM lines')).toBe(ROWS + batches)
    })
    expect(n).toBe(ROWS)
    expect(seen).toBe(ROWS)
    expect(await store.value('SELECT COUNT(*) FROM lines')).toBe(ROWS + batches)
  })

  it('inside a transaction, reads that transaction’s rows', async () => {
    const n = await store
      .tx(async (t) => {
        await t.run('DELETE FROM lines WHERE id > ?', 10)
        const ids: number[] = []
        const count = await store.each<{ id: number }>(
          'SELECT id FROM lines ORDER BY id',
          [],
          (rows) => {
            ids.push(...rows.map((r) => r.id))
          },
          4
        )
        expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        throw Object.assign(new Error('undo'), { count })
      })
      .catch((e: { count?: number }) => e.count)
    expect(n).toBe(10)
    expect(await store.value('SELECT COUNT(*) FROM lines WHERE id <= ?', ROWS)).toBe(ROWS)
  })
})

describe('a PostgreSQL connection lost in the middle of a transaction', () => {
  let fx: EngineFixture
  beforeAll(async () => (fx = await engineFixture('postgres')))
  afterAll(async () => fx?.dispose())

  it('answers 503 with Retry-After, changes nothing, and the next statement runs on a new connection', async () => {
    const store = await fx.open()
    await createTables(store, 'CREATE TABLE marks (id INTEGER PRIMARY KEY, note TEXT NOT NULL) STRICT;')
    const err = await store
      .tx(async (t) => {
        await t.run(`INSERT INTO marks (note) VALUES ('half')`)
        // The server ends this session, as a restart or a failover would.
        await t.run('SELECT pg_terminate_backend(pg_backend_pid())')
      })
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ kind: 'unavailable', retryAfterSeconds: 5 })
    expect((err as Error).message).toMatch(/^could not save the change: /)
    expect(await store.value('SELECT COUNT(*) FROM marks')).toBe(0)
  })
})
