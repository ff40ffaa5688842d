/**
 * A SQLite store another process holds locked: CertDesk's write waits for the lock on timers,
 * never freezing the event loop, while reads go on answering; when the lock stays past the
 * wait, the caller hears 503 with Retry-After and nothing is written.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DB_FILE } from '../../../src-main/core/store/db'
import type { Store } from '../../../src-main/core/store'
import { RetryLaterError } from '../../../src-main/core/store/store-faults'
import { createTables, engineFixture, type EngineFixture } from './engines'

/** Another process (as the admin CLI or a backup tool would be) holding the write lock until told. */
async function holdWriteLock(file: string): Promise<ChildProcess> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    db.prepare("INSERT INTO jobs (name) VALUES ('from the other process')").run();
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0) });`
  const child = spawn(process.execPath, ['-e', script, file], {
    cwd: process.cwd(),
    stdio: ['pipe', 'pipe', 'inherit']
  })
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer]
  expect(chunk.toString()).toContain('locked')
  return child
}

/** The longest pause between ticks of a 10 ms timer while `during` runs. */
async function longestPause<T>(during: Promise<T>): Promise<number> {
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 10)
  try {
    await during
  } finally {
    clearInterval(timer)
  }
  return longest
}

describe('a SQLite store another process holds locked', () => {
  let fx: EngineFixture
  let store: Store
  let child: ChildProcess | undefined

  beforeAll(async () => {
    fx = await engineFixture('sqlite')
    store = await fx.open({ busyBudgetMs: 60_000 })
    await createTables(store, 'CREATE TABLE jobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL) STRICT;')
    await store.run(`INSERT INTO jobs (name) VALUES ('before')`)
  })
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL')
  })
  afterAll(async () => fx?.dispose())

  it('answers reads and keeps the event loop running while a write waits, then writes once the lock is free', async () => {
    child = await holdWriteLock(join(fx.where, DB_FILE))
    let written = false
    const write = store.run(`INSERT INTO jobs (name) VALUES ('ours')`).then(() => (written = true))
    const reads = (async () => {
      const seen: number[] = []
      for (let i = 0; i < 5; i++) {
        seen.push((await store.value<number>('SELECT COUNT(*) FROM jobs')) ?? -1)
        await new Promise((r) => setTimeout(r, 100))
      }
      return seen
    })()
    // The lock is held for the whole of the reads: every read answered from the last commit.
    const pause = await longestPause(reads)
    expect(await reads).toEqual([1, 1, 1, 1, 1])
    expect(written).toBe(false)
    // A blocking wait (busy_timeout) would stall the loop for the whole wait; generous margin.
    expect(pause).toBeLessThan(1000)
    child.stdin!.write('commit\n')
    await write
    expect(await store.all('SELECT name FROM jobs ORDER BY id')).toEqual([
      { name: 'before' },
      { name: 'from the other process' },
      { name: 'ours' }
    ])
  })

  it('answers 503 with Retry-After when the lock outlasts the wait, and writes nothing', async () => {
    const impatient = await fx.open({ busyBudgetMs: 300 })
    child = await holdWriteLock(join(fx.where, DB_FILE))
    const err = await impatient.run(`INSERT INTO jobs (name) VALUES ('too late')`).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RetryLaterError)
    expect((err as RetryLaterError).kind).toBe('unavailable')
    expect((err as RetryLaterError).retryAfterSeconds).toBeGreaterThan(0)
    expect((err as Error).message).toMatch(/^could not save the change: another process holds the store locked/)
    child.stdin!.write('commit\n')
    await once(child, 'exit')
    expect(await store.value('SELECT COUNT(*) FROM jobs WHERE name = ?', 'too late')).toBe(0)
  })

  it('lets background work given a longer budget wait past the store’s default', async () => {
    const impatient = await fx.open({ busyBudgetMs: 300 })
    child = await holdWriteLock(join(fx.where, DB_FILE))
    const write = impatient.tx(async (t) => t.run(`INSERT INTO jobs (name) VALUES ('scheduler pass')`), {
      budgetMs: 60_000
    })
    // Held twice as long as the store's default wait: only the transaction's own budget lets it through.
    await new Promise((r) => setTimeout(r, 600))
    child.stdin!.write('commit\n')
    await expect(write).resolves.toEqual({ changes: 1 })
    expect(await store.value('SELECT COUNT(*) FROM jobs WHERE name = ?', 'scheduler pass')).toBe(1)
  })
})
