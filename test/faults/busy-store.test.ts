/**
 * A busy store: another process (a second node holding `BEGIN IMMEDIATE`, as the admin CLI or a
 * long backup might) owns the write lock. API writes wait their bounded budget for it without
 * holding up the server, then answer 503 with Retry-After, never 500; reads keep answering from
 * the WAL snapshot all the while, also while a write waits; once the lock is gone the same
 * orders go through, each once. The admin CLI next to `serve` waits for the lock and succeeds.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli'
import {
  audit,
  call,
  DB_FILE,
  isRetryLater,
  makeReseller,
  orderStorm,
  report,
  retryFailed,
  sleep,
  startServe,
  Database,
  holdWriteLock,
  type Served
} from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-busy-'))
let server: Served | undefined
afterAll(async () => {
  await server?.kill9()
  rmSync(base, { recursive: true, force: true })
})

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

/** `certdesk admin …` as its own process, without holding up this test's event loop. */
function adminAsync(dataDir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })))
}

describe('a write waiting for the lock', () => {
  it('holds up no one: every read answers at once from the WAL snapshot while the order waits, then 503 and nothing written', async () => {
    const dataDir = join(base, 'reads')
    const r = makeReseller(dataDir, 'Reads Hosting', 1_000)
    const served = await startServe(dataDir)
    try {
      const balance = (await call(served.url, 'GET', '/balance', { key: r.key })).body?.balance
      const lock = await holdWriteLock(join(dataDir, DB_FILE), 10_000)

      let orderAnswered = false
      const order = call(served.url, 'POST', '/orders', {
        key: r.key,
        body: { product_id: 1, domain: 'waits.example.com' }
      }).then((a) => {
        orderAnswered = true
        return { ...a, lockHeld: lock.held() }
      })
      // The order is in the server and waiting for the lock before the reads go out.
      await sleep(300)
      const paths = ['/products', '/products?type=ssl', '/products/2', '/balance', '/orders', '/account', '/stats']
      const reads = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const path = paths[i % paths.length]
          const a = await call(served.url, 'GET', path, { key: r.key })
          return { path, status: a.status, beforeOrder: !orderAnswered, lockHeld: lock.held() }
        })
      )
      // Every read answered while the order was still waiting and the other process held the lock.
      expect(reads.filter((x) => x.status !== 200)).toEqual([])
      expect(reads.filter((x) => !x.beforeOrder || !x.lockHeld)).toEqual([])

      // The order gives up within its budget, before the lock is released: 503, Retry-After.
      const refused = await order
      expect(isRetryLater(refused)).toBe(true)
      expect(refused.lockHeld).toBe(true)
      expect(refused.body?.error).toBe(
        'could not save the change: another process holds the store locked; nothing was changed, try again in 5 s'
      )
      // Reads still answer after the refusal, while the lock is held.
      expect((await call(served.url, 'GET', '/orders', { key: r.key })).status).toBe(200)
      expect(lock.held()).toBe(true)

      await lock.released
      // Nothing of the refused order was written; the same order goes through now.
      expect((await call(served.url, 'GET', '/balance', { key: r.key })).body?.balance).toBe(balance)
      const db = new Database(join(dataDir, DB_FILE), { readonly: true })
      try {
        expect(db.prepare('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ?').get(r.id)).toEqual({ n: 0 })
      } finally {
        db.close()
      }
      const placed = await call(served.url, 'POST', '/orders', {
        key: r.key,
        body: { product_id: 1, domain: 'waits.example.com' }
      })
      expect(placed.status).toBe(200)
      expect(audit(dataDir, new Map([['one', placed.body?.order_id as number]]), r.id)).toEqual([])
      expect(served.alive()).toBe(true)
    } finally {
      await served.kill9()
    }
  }, 120_000)

  it('the admin CLI next to serve waits for a lock another process holds, then writes', async () => {
    const dataDir = join(base, 'cli')
    const r = makeReseller(dataDir, 'Cli Hosting', 0)
    const served = await startServe(dataDir)
    try {
      const lock = await holdWriteLock(join(dataDir, DB_FILE), 2_000)
      const topUp = adminAsync(dataDir, ['credit', 'add', '--reseller', String(r.id), '--amount', '25'])
      // The server answers while the CLI waits.
      expect((await call(served.url, 'GET', '/balance', { key: r.key })).status).toBe(200)
      const done = await topUp
      expect(done.code, done.stderr).toBe(0)
      expect(lock.held()).toBe(false)
      expect((await call(served.url, 'GET', '/balance', { key: r.key })).body?.balance).toBe(25)
    } finally {
      await served.kill9()
    }
  }, 120_000)
})
