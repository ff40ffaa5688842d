/**
 * A full disk and failing writes while CertDesk runs. ENOSPC is real: the data dir sits on a
 * size-limited tmpfs that the test fills (libfiu's ENOSPC where mounting is not allowed); EIO
 * comes from libfiu's POSIX preload (`fiu-run`), switched on and off in the running server with
 * `fiu-ctrl`. Every answer during the fault is a 503 in the envelope with Retry-After, never a
 * 500 or a dropped connection; the books stay whole; the same server works again afterwards.
 */
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  admin,
  audit,
  call,
  fiuCtrl,
  isRetryLater,
  makeReseller,
  orderStorm,
  report,
  retryFailed,
  startServe,
  type Answer,
  type Served
} from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-diskfull-'))
const mnt = join(base, 'mnt')
let mounted = false
const servers: Served[] = []

beforeAll(() => {
  mkdirSync(mnt)
  // A 24 MiB file system of its own: filling it fills nothing else on the machine.
  mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0700', 'tmpfs', mnt]).status === 0
})
afterAll(async () => {
  for (const s of servers) await s.kill9()
  if (mounted) spawnSync('umount', ['-l', mnt])
  rmSync(base, { recursive: true, force: true })
})

/** Fills the file system holding `dir` to the last block; returns the filler to remove. */
function fill(dir: string): string {
  const filler = join(dir, 'filler')
  const fd = openSync(filler, 'w')
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 512]) {
      const chunk = Buffer.alloc(size, 1)
      for (;;) {
        try {
          writeSync(fd, chunk)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break
          throw err
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return filler
}

const problemsOf = (answers: Answer[]): string[] =>
  answers
    .filter((a) => !isRetryLater(a))
    .map((a) => (a.dropped ? `dropped: ${a.dropped}` : `${a.status}: ${a.body?.error}`))

describe('a full disk', () => {
  it('answers orders and top-ups with 503 and Retry-After, loses nothing, and works again when space is back', async () => {
    const dataDir = mounted ? join(mnt, 'data') : join(base, 'data')
    const r = makeReseller(dataDir, 'Full Disk Hosting', 100_000)
    const s = await startServe(dataDir, { fiu: !mounted })
    servers.push(s)
    const before = await orderStorm(s.url, r.key, 'before', 10)
    expect(before.failed.size).toBe(0)

    let filler = ''
    if (mounted) filler = fill(mnt)
    else fiuCtrl(s.pid, 'enable name=posix/io/rw/pwrite,failinfo=28')
    const storm = await orderStorm(s.url, r.key, 'full', 60)
    const answers = [...storm.failed.values()]
    // The fault was real: writes failed, and each failure was a 503 to retry, in the envelope.
    expect(answers.length).toBeGreaterThan(0)
    expect(problemsOf(answers)).toEqual([])
    expect(answers[0].body?.error).toMatch(/^could not save the change: the disk is full; nothing was changed/)
    // Reads need no space.
    expect((await call(s.url, 'GET', '/balance', { key: r.key })).status).toBe(200)
    // A top-up from the admin CLI next to the server: a clear refusal, no stack trace.
    const topUp = admin(dataDir, ['credit', 'add', '--reseller', String(r.id), '--amount', '5'])
    expect(topUp.code).toBe(1)
    expect(topUp.json).toEqual({ success: false, error: expect.stringMatching(/disk is full/) })
    expect(s.alive()).toBe(true)

    if (mounted) rmSync(filler)
    else fiuCtrl(s.pid, 'disable name=posix/io/rw/pwrite')
    // The same process, no restart: every refused order goes through now, each exactly once.
    const failedBefore = storm.failed.size
    expect(await retryFailed(s.url, r.key, storm)).toEqual([])
    for (const [k, v] of before.ok) storm.ok.set(k, v)
    const topUpAgain = admin(dataDir, ['credit', 'add', '--reseller', String(r.id), '--amount', '5'])
    expect(topUpAgain.code).toBe(0)
    const lost = audit(dataDir, storm.ok, r.id)
    expect(lost).toEqual([])
    report({
      fault: `disk full (ENOSPC, ${mounted ? 'tmpfs' : 'libfiu'})`,
      tried: storm.tried + 2,
      errors: failedBefore + 1,
      lost: lost.length
    })
  }, 120_000)

  it('stops a start-up whose migration cannot be written with a clear message, and migrates once space is back', async () => {
    const dataDir = mounted ? join(mnt, 'fresh') : join(base, 'fresh')
    let filler = ''
    if (mounted) filler = fill(mnt)
    const env = mounted ? process.env : { ...process.env, LD_PRELOAD: '' }
    const first = admin(dataDir, ['reseller', 'list'], env)
    if (mounted) {
      expect(first.code).toBe(1)
      expect(first.json.error).toMatch(/disk is full|could not open the store/)
      rmSync(filler)
    }
    const again = admin(dataDir, ['reseller', 'list'])
    expect(again.code).toBe(0)
    expect(audit(dataDir)).toEqual([])
  }, 120_000)
})

describe('failing writes (EIO from libfiu)', () => {
  it('answers 503 with Retry-After while writes fail at random, and the books balance after', async () => {
    const dataDir = join(base, 'eio')
    const r = makeReseller(dataDir, 'EIO Hosting', 100_000)
    const s = await startServe(dataDir, { fiu: true })
    servers.push(s)
    // Every third write to a file fails with EIO (errno 5), in the running server only.
    fiuCtrl(s.pid, 'enable_random name=posix/io/rw/pwrite,probability=0.3,failinfo=5')
    const storm = await orderStorm(s.url, r.key, 'eio', 80)
    const cancels: Answer[] = []
    for (const id of [...storm.ok.values()].slice(0, 10)) {
      storm.tried++
      cancels.push(await call(s.url, 'PUT', `/orders/${id}`, { key: r.key, body: { action: 'cancel' } }))
    }
    fiuCtrl(s.pid, 'disable name=posix/io/rw/pwrite')
    const answers = [...storm.failed.values(), ...cancels.filter((a) => a.status !== 200)]
    expect(answers.length).toBeGreaterThan(0)
    expect(problemsOf(answers)).toEqual([])
    expect(s.alive()).toBe(true)
    const errors = answers.length
    expect(await retryFailed(s.url, r.key, storm)).toEqual([])
    const lost = audit(dataDir, storm.ok, r.id)
    expect(lost).toEqual([])
    report({ fault: 'failing writes (EIO, libfiu)', tried: storm.tried, errors, lost: lost.length })
  }, 120_000)
})
