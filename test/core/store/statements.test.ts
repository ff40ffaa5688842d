/**
 * The port answers the same on both engines: rows in the same shapes (integers and sums as
 * numbers, blobs as Buffers, NULL as null), the common SQL meaning the same (LIKE ignores ASCII
 * case, IFNULL, null-safe IS, INSERT OR IGNORE, camelCase names), transactions that commit or
 * roll back whole, savepoints for nested ones, and notifications after commit only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../../src-main/core/store'
import { createTables, ENGINES, engineFixture, type EngineFixture } from './engines'

describe.each(ENGINES)('the store port on %s', (engine) => {
  let fx: EngineFixture
  let store: Store

  beforeAll(async () => {
    fx = await engineFixture(engine)
    store = await fx.open()
    await createTables(
      store,
      `CREATE TABLE notes (id INTEGER PRIMARY KEY, reseller_id INTEGER NOT NULL, title TEXT NOT NULL,
         amount_cents INTEGER NOT NULL DEFAULT 0, body BLOB, tag TEXT) STRICT;
       CREATE UNIQUE INDEX notes_title ON notes(reseller_id, title);`
    )
  })
  afterAll(async () => fx?.dispose())

  it('inserts, answers the new ids, and reads rows back in the same shapes', async () => {
    const a = await store.insert(
      'INSERT INTO notes (reseller_id, title, amount_cents, body) VALUES (?, ?, ?, ?)',
      7,
      'First',
      1250,
      Buffer.from([0, 1, 255])
    )
    const b = await store.insert(
      'INSERT INTO notes (reseller_id, title, amount_cents) VALUES (?, ?, ?)',
      7,
      'Second',
      9_007_199_254
    )
    expect(b).toBe(a + 1)
    const row = await store.get<Record<string, unknown>>(
      'SELECT id, reseller_id, title, amount_cents, body, tag FROM notes WHERE id = ?',
      a
    )
    expect(row).toEqual({
      id: a,
      reseller_id: 7,
      title: 'First',
      amount_cents: 1250,
      body: Buffer.from([0, 1, 255]),
      tag: null
    })
    expect(await store.value('SELECT COUNT(*) FROM notes')).toBe(2)
    expect(await store.value('SELECT SUM(amount_cents) FROM notes')).toBe(9_007_199_254 + 1250)
    expect(await store.value('SELECT id FROM notes WHERE title = ?', 'nobody')).toBeUndefined()
    expect(await store.column('SELECT title FROM notes ORDER BY id DESC')).toEqual(['Second', 'First'])
    expect(await store.all('SELECT title AS noteTitle FROM notes ORDER BY id')).toEqual([
      { noteTitle: 'First' },
      { noteTitle: 'Second' }
    ])
  })

  it('reads the common SQL the same: LIKE ignores ASCII case, IFNULL, null-safe IS, a ? inside a string is text', async () => {
    expect(await store.all('SELECT title FROM notes WHERE title LIKE ? ORDER BY id', '%IRS%')).toEqual([
      { title: 'First' }
    ])
    expect(await store.value(`SELECT IFNULL(tag, 'none') FROM notes WHERE title = 'First'`)).toBe('none')
    expect(await store.value('SELECT COUNT(*) FROM notes WHERE tag IS ?', null)).toBe(2)
    expect(await store.value(`SELECT COUNT(*) FROM notes WHERE tag IS NOT ?`, 'x')).toBe(2)
    expect(await store.value(`SELECT '?' || title FROM notes WHERE title = ?`, 'First')).toBe('?First')
    // Text compares byte by byte on both: upper case sorts before lower case.
    expect(await store.all(`SELECT title FROM notes WHERE title < ? ORDER BY title`, 'a')).toEqual([
      { title: 'First' },
      { title: 'Second' }
    ])
  })

  it('ignores a duplicate with INSERT OR IGNORE and refuses it without', async () => {
    const r = await store.run('INSERT OR IGNORE INTO notes (reseller_id, title) VALUES (?, ?)', 7, 'First')
    expect(r.changes).toBe(0)
    await expect(store.run('INSERT INTO notes (reseller_id, title) VALUES (?, ?)', 7, 'First')).rejects.toThrow()
    expect(await store.value('SELECT COUNT(*) FROM notes')).toBe(2)
  })

  it('commits a transaction whole, and rolls it back whole when its function throws', async () => {
    const id = await store.tx(async (t) => {
      const id = await t.insert('INSERT INTO notes (reseller_id, title) VALUES (?, ?)', 8, 'kept')
      await t.run('UPDATE notes SET amount_cents = ? WHERE id = ?', 5, id)
      return id
    })
    expect(await store.get('SELECT amount_cents FROM notes WHERE id = ?', id)).toEqual({ amount_cents: 5 })
    await expect(
      store.tx(async (t) => {
        await t.insert('INSERT INTO notes (reseller_id, title) VALUES (?, ?)', 8, 'lost')
        await store.run('UPDATE notes SET amount_cents = 0 WHERE id = ?', id)
        throw new Error('refused by a rule')
      })
    ).rejects.toThrow('refused by a rule')
    expect(await store.value('SELECT COUNT(*) FROM notes WHERE title = ?', 'lost')).toBe(0)
    expect(await store.value('SELECT amount_cents FROM notes WHERE id = ?', id)).toBe(5)
  })

  it('rolls a nested transaction back to its savepoint and keeps the rest', async () => {
    const after: string[] = []
    await store.tx(async (t) => {
      await t.insert('INSERT INTO notes (reseller_id, title) VALUES (?, ?)', 9, 'outer')
      await expect(
        store.tx(async () => {
          await store.insert('INSERT INTO notes (reseller_id, title) VALUES (?, ?)', 9, 'inner')
          throw new Error('inner refused')
        })
      ).rejects.toThrow('inner refused')
      expect(await store.value('SELECT COUNT(*) FROM notes WHERE reseller_id = 9')).toBe(1)
      t.afterCommit(() => after.push('committed'))
    })
    expect(await store.all('SELECT title FROM notes WHERE reseller_id = 9')).toEqual([{ title: 'outer' }])
    expect(after).toEqual(['committed'])
  })

  it('runs afterCommit and delivers notifications only when the transaction commits', async () => {
    const heard: string[] = []
    const stop = await store.listen('notes', (p) => heard.push(p))
    const after: string[] = []
    await store
      .tx(async (t) => {
        t.notify('notes', 'rolled back')
        t.afterCommit(() => after.push('rolled back'))
        throw new Error('no')
      })
      .catch(() => undefined)
    await store.tx(async (t) => {
      t.notify('notes', 'committed')
      t.afterCommit(() => after.push('committed'))
    })
    await expect.poll(() => heard).toEqual(['committed'])
    expect(after).toEqual(['committed'])
    await stop()
  })

  it('refuses a write inside a read-only transaction and sees one snapshot there', async () => {
    await expect(store.tx(async (t) => t.run('DELETE FROM notes'), { readOnly: true })).rejects.toThrow(/read-only/)
    const n = await store.tx(async (t) => t.value<number>('SELECT COUNT(*) FROM notes'), { readOnly: true })
    expect(n).toBeGreaterThan(0)
  })

  it('hands out ids before the insert that are unique across connections (order numbers)', async () => {
    const other = await fx.open()
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? other : store).tx(async (t) => {
          const id = await t.nextId('notes')
          await t.run('INSERT INTO notes (id, reseller_id, title) VALUES (?, ?, ?)', id, 10, `n${i}`)
          return id
        })
      )
    )
    expect(new Set(ids).size).toBe(20)
    expect(await store.value('SELECT COUNT(*) FROM notes WHERE reseller_id = 10')).toBe(20)
  })
})
