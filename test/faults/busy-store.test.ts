/**
 * A busy store: another process (a second node holding `BEGIN IMMEDIATE`, as the admin CLI or a
 * long backup might) owns the write lock. API writes wait the bounded busy timeout, then answer
 * 503 with Retry-After, never 500; reads keep answering (WAL); once the lock is gone the same
 * orders go through, each once.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../support/cli'
import {
  audit,
  call,
  DB_FILE,
  isRetryLater,
  makeReseller,
  orderStorm,
  report,
  retryFailed,
  startServe,
  type Served
} from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-busy-'))
let server: Served | undefined
afterAll(async () => {
  await server?.kill9()
  rmSync(base, { recursive: true, force: true })
})

/** A second process that takes the write lock, says so, and holds it for `ms`. */
function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<void> }> {
  const script = `
    const Database = require(${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3'))})
    const db = new Database(${JSON.stringify(file)})
    db.exec('BEGIN IMMEDIATE')
    process.stdout.write('locked\\n')
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); process.exit(0) }, ${ms})`
  const child = spawn('timeout', ['--signal=KILL', '60', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const released = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (String(d).includes('locked')) resolve({ released })
    })
    child.on('exit', (c) => reject(new Error(`the lock holder exited with ${c}`)))
  })
}

describe('a store another process holds locked', () => {
  it('answers writes 503 with Retry-After after the busy timeout, keeps reads answering, and takes the writes after', async () => {
    const dataDir = join(base, 'data')
    const r = makeReseller(dataDir, 'Busy Hosting', 10_000)
    server = await startServe(dataDir)
    const lock = await holdWriteLock(join(dataDir, DB_FILE), 12_000)

    const t0 = Date.now()
    const read = await call(server.url, 'GET', '/balance', { key: r.key })
    // Readers never wait for a writer in WAL mode.
    expect(read.status).toBe(200)
    expect(Date.now() - t0).toBeLessThan(2_000)

    // One write at a time: better-sqlite3 waits for the lock on the server's only thread.
    const storm = await orderStorm(server.url, r.key, 'busy', 1, 1)
    const waited = Date.now() - t0
    const answers = [...storm.failed.values()]
    expect(answers.length).toBe(1)
    expect(answers.filter((a) => !isRetryLater(a))).toEqual([])
    expect(answers[0].body?.error).toBe(
      'could not save the change: another process holds the store locked; nothing was changed, try again in 5 s'
    )
    // Bounded: the busy timeout (5 s), not forever.
    expect(waited).toBeGreaterThanOrEqual(4_500)
    expect(waited).toBeLessThan(11_500)

    await lock.released
    const errors = storm.failed.size
    expect(await retryFailed(server.url, r.key, storm)).toEqual([])
    expect(server.alive()).toBe(true)
    const lost = audit(dataDir, storm.ok, r.id)
    expect(lost).toEqual([])
    report({
      fault: 'busy store (BEGIN IMMEDIATE in another process)',
      tried: storm.tried + 1,
      errors,
      lost: lost.length
    })
  }, 120_000)
})
