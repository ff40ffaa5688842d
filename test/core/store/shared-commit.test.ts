/**
 * SQLite's shared COMMIT (TxOptions.shareCommit): write transactions that arrive together (in
 * one turn of the event loop, or in turns that follow one another while they keep coming) run
 * one after another in one SQLite transaction and are answered together after its COMMIT. What a caller must be able to count on: no answer before the COMMIT, a
 * refused one undone alone, a failed COMMIT heard by all and writing nothing, and what is open
 * committed before any other write or a close.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DB_FILE } from '../../../src-main/core/store/db'
import type { Store } from '../../../src-main/core/store'
import { createTables, engineFixture, type EngineFixture } from './engines'

describe('a shared COMMIT on SQLite', () => {
  let fx: EngineFixture
  let store: Store
  /** Another connection to the file: it sees committed rows only. */
  let outside: Database.Database

  beforeEach(async () => {
    fx = await engineFixture('sqlite')
    store = await fx.open()
    await createTables(store, 'CREATE TABLE jobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT;')
    outside = new Database(join(fx.where, DB_FILE), { readonly: true })
  })
  afterEach(async () => {
    outside.close()
    await fx.dispose()
  })

  const committed = (): string[] => outside.prepare('SELECT name FROM jobs ORDER BY id').pluck().all() as string[]

  /** A transaction that shares its COMMIT and writes `name`; notes what was committed while it ran. */
  const job = (name: string, seen: Record<string, string[]>, fail?: Error) =>
    store.tx(
      async () => {
        await store.run('INSERT INTO jobs (name) VALUES (?)', name)
        seen[name] = committed()
        if (fail) throw fail
        return name
      },
      { shareCommit: true }
    )

  it('writes those started together in one transaction and answers none before its COMMIT', async () => {
    const seen: Record<string, string[]> = {}
    const answeredAt: string[][] = []
    const all = ['a', 'b', 'c', 'd', 'e'].map((n) =>
      job(n, seen).then((r) => {
        answeredAt.push(committed())
        return r
      })
    )
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c', 'd', 'e'])
    // While the last one ran, nothing of the first four was committed yet: one transaction.
    expect(seen.e).toEqual([])
    // Every answer came after all five were committed.
    for (const rows of answeredAt) expect(rows).toEqual(['a', 'b', 'c', 'd', 'e'])
  })

  it('undoes a refused one alone: the others are written and it hears its own error', async () => {
    const seen: Record<string, string[]> = {}
    const results = await Promise.allSettled([
      job('first', seen),
      job('refused', seen, new Error('insufficient credit')),
      job('third', seen)
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('insufficient credit')
    expect(committed()).toEqual(['first', 'third'])
  })

  it('fails every one waiting on it, writing nothing, when SQLite rolls the whole transaction back', async () => {
    const seen: Record<string, string[]> = {}
    const first = job('first', seen)
    const second = job('second', seen)
    // The third's statement fails in a way after which SQLite keeps no transaction open.
    const third = store.tx(
      async () => {
        await store.run('INSERT INTO jobs (name) VALUES (?)', 'third')
        await store.run('ROLLBACK')
        return 'third'
      },
      { shareCommit: true }
    )
    const results = await Promise.allSettled([first, second, third])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(committed()).toEqual([])
    // The store goes on: the next write is its own transaction again.
    expect(await job('after', seen)).toBe('after')
    expect(committed()).toEqual(['after'])
  })

  it('commits what is open before a write that does not share it, and that write sees it committed', async () => {
    const seen: Record<string, string[]> = {}
    const shared = job('shared', seen)
    let before: string[] = []
    const alone = store.tx(async () => {
      before = committed()
      await store.run('INSERT INTO jobs (name) VALUES (?)', 'alone')
    })
    await Promise.all([shared, alone])
    expect(before).toEqual(['shared'])
    expect(committed()).toEqual(['shared', 'alone'])
  })

  it('a duplicate in the same transaction is refused alone, as it would be in its own', async () => {
    const seen: Record<string, string[]> = {}
    const results = await Promise.allSettled([job('same', seen), job('same', seen), job('other', seen)])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/)
    expect(committed()).toEqual(['same', 'other'])
  })

  it('commits what is open when the store closes, and answers those waiting on it', async () => {
    const seen: Record<string, string[]> = {}
    let closing: Promise<void> | undefined
    const x = job('x', seen)
    // The store is closed while the second runs: the close waits for it, then commits both.
    const y = store.tx(
      async () => {
        await store.run('INSERT INTO jobs (name) VALUES (?)', 'y')
        closing = store.close()
        return 'y'
      },
      { shareCommit: true }
    )
    expect(await Promise.all([x, y])).toEqual(['x', 'y'])
    await closing
    expect(committed()).toEqual(['x', 'y'])
    await expect(job('late', seen)).rejects.toThrow(/closed/)
  })

  it('shares one COMMIT among at most 32, however many arrive at once', async () => {
    const seen: Record<string, string[]> = {}
    const names = Array.from({ length: 100 }, (_, i) => `n${i}`)
    await Promise.all(names.map((n) => job(n, seen)))
    expect(committed()).toEqual(names)
    // The 33rd ran after the first 32 were committed, the 65th after 64.
    expect(seen.n32).toHaveLength(32)
    expect(seen.n64).toHaveLength(64)
  })

  /** Resolves at the end of the current turn of the event loop. */
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

  it('waits for the ones that keep arriving in the turns after the first, and then commits them together', async () => {
    const seen: Record<string, string[]> = {}
    const all = [job('a', seen)]
    await nextTurn()
    all.push(job('b', seen))
    await nextTurn()
    all.push(job('c', seen))
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c'])
    // c arrived two turns after a, and a was still not committed when c ran.
    expect(seen.c).toEqual([])
    expect(committed()).toEqual(['a', 'b', 'c'])
  })

  it('commits a lone one at the end of its turn, and one that keeps being joined within 20 ms', async () => {
    const seen: Record<string, string[]> = {}
    const lone = job('lone', seen)
    await nextTurn()
    await nextTurn()
    expect(committed()).toEqual(['lone'])
    await lone
    // One arrives in every turn for 80 ms: none of them waits on a COMMIT that never comes.
    const stream: Promise<string>[] = []
    const t0 = performance.now()
    for (let i = 0; performance.now() - t0 < 80; i++) {
      stream.push(job(`s${i}`, seen))
      await nextTurn()
    }
    const names = await Promise.all(stream)
    expect(committed()).toEqual(['lone', ...names])
    // Some ran after earlier ones were already committed: the stream did not hold one open throughout.
    const commitsSeen = new Set(names.map((n) => seen[n].length))
    expect(commitsSeen.size).toBeGreaterThan(2)
  })
})
