/**
 * A PKCS#12 file says itself how much work opening it takes: the iteration counts of its MAC
 * key derivation (RFC 7292 Appendix B) and of each PBES2 key (RFC 8018 §6.2). A crafted file of
 * a few hundred bytes asking for 8,388,607 iterations is refused at once, naming the limit, and
 * a legitimate file with a high count is opened off the event loop: the reseller API keeps
 * answering while it is read.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { opensslPfx } from '../support/import-files'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestLeaf } from '../support/test-ca'

const PASSWORD = 'correct horse'
let s: TestServer
let work: string
let leaf: TestLeaf

const pfx = (name: string, extra: string[]): string => opensslPfx(leaf, join(work, name), PASSWORD, extra)

beforeAll(async () => {
  s = await startServer()
  work = mkdtempSync(join(tmpdir(), 'certdesk-pfx-iter-'))
  leaf = await (await createTestCa()).issue('heavy.pfx.test', new Date(Date.now() - 86_400_000), 90)
})
afterAll(async () => {
  rmSync(work, { recursive: true, force: true })
  await s?.close()
})

describe('PKCS#12 iteration counts', () => {
  it('refuses a file whose MAC asks for 8,388,607 iterations at once, naming the limit', async () => {
    // Nothing encrypted, only the MAC: OpenSSL computes it in well under a second, CertDesk
    // used to spend tens of seconds on the thread that answers the API.
    const file = pfx('mac-heavy.p12', ['-iter', '8388607', '-keypbe', 'NONE', '-certpbe', 'NONE'])
    expect(statSync(file).size).toBeLessThan(4096)
    const r = s.reseller()
    const started = performance.now()
    const out = await s.service.imports.importFiles(r.id, [file], { password: PASSWORD })
    const tookMs = performance.now() - started
    expect(out.imported).toEqual([])
    expect(out.skipped).toHaveLength(1)
    expect(out.skipped[0].reason).toMatch(/8,388,607 iterations/)
    expect(out.skipped[0].reason).toMatch(/at most 1,000,000/)
    // Refused before any derivation: far within the time one derivation at that count takes.
    expect(tookMs).toBeLessThan(5000)
  })

  it('refuses a file whose key is encrypted with 8,388,607 PBKDF2 iterations, uploaded 50 times', async () => {
    const file = pfx('key-heavy.p12', ['-iter', '8388607', '-nomaciter', '-certpbe', 'NONE'])
    const r = s.reseller()
    const bytes = readFileSync(file)
    const started = performance.now()
    for (let i = 0; i < 50; i++) {
      const out = await s.service.imports.importUpload(r.id, `upload-${i}.p12`, bytes, { password: PASSWORD })
      expect(out.imported).toEqual([])
      expect(out.skipped[0].reason).toMatch(/asks for 8,388,607 iterations; CertDesk opens at most 1,000,000/)
    }
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('derives the MAC key off the event loop: the API answers while a file at the limit is read', async () => {
    // Only the MAC, at 1,000,000 iterations: allowed, and seconds of work.
    const file = pfx('mac-at-limit.p12', ['-iter', '1000000', '-keypbe', 'NONE', '-certpbe', 'NONE'])
    const r = s.reseller()
    let settled = false
    const importing = s.service.imports
      .importFiles(r.id, [file], { password: PASSWORD, withKeys: true })
      .finally(() => (settled = true))
    let answeredMeanwhile = 0
    while (!settled) {
      const res = await s.request('GET', '/products', { key: r.key })
      expect(res.status).toBe(200)
      if (!settled) answeredMeanwhile++
    }
    const out = await importing
    expect(out.skipped).toEqual([])
    expect(out.imported.map((c) => [c.domain, c.keyKept])).toEqual([['heavy.pfx.test', true]])
    expect(answeredMeanwhile).toBeGreaterThan(0)
  })

  it('opens a file whose MAC and encrypted parts all use 1,000,000 iterations, and keeps its key', async () => {
    const file = pfx('all-at-limit.p12', ['-iter', '1000000'])
    const r = s.reseller()
    const out = await s.service.imports.importFiles(r.id, [file], { password: PASSWORD, withKeys: true })
    expect(out.skipped).toEqual([])
    expect(out.imported.map((c) => [c.domain, c.keyKept])).toEqual([['heavy.pfx.test', true]])
  })

  it('still says "wrong password" for a wrong password', async () => {
    const file = pfx('plain.p12', [])
    const r = s.reseller()
    const out = await s.service.imports.importFiles(r.id, [file], { password: 'not it' })
    expect(out.skipped[0].reason).toMatch(/wrong password/)
    const ok = await s.service.imports.importFiles(r.id, [file], { password: PASSWORD })
    expect(ok.imported).toHaveLength(1)
  })
})
