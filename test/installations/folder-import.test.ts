/**
 * Folder imports as they meet real servers' folders: Let's Encrypt's `live/` (symbolic links
 * into `archive/`), a key file beside its certificate (`site.crt` + `site.key`), and what a
 * hostile local user can leave in a folder the admin scans: FIFOs and devices with certificate
 * names, links to /etc/passwd or out of the folder with `../`, link loops. Links are listed
 * with why they were skipped; followed only on request and only while they stay inside the
 * folder; a FIFO or device is never read, and the import ends.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ImportOutcome } from '../../src-main/core/imports'
import { certdesk } from '../support/cli'
import { opensslPfx, writeLetsEncrypt } from '../support/import-files'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestLeaf } from '../support/test-ca'

let s: TestServer
let base: string
let le: string
let outside: string
let plain: string
let hostile: string
let shopOld: TestLeaf
let shop: TestLeaf
let site: TestLeaf
let other: TestLeaf
let stranger: TestLeaf

/** Skipped entries by the path under `root`, for readable expectations. */
const skippedUnder = (out: ImportOutcome, root: string): Record<string, string> =>
  Object.fromEntries(out.skipped.map((x) => [x.source.replace(`file:${root}/`, ''), x.reason]))

beforeAll(async () => {
  s = await startServer()
  base = mkdtempSync(join(tmpdir(), 'certdesk-folder-import-'))
  const ca = await createTestCa()
  const day = 86_400_000
  shopOld = await ca.issue('shop.le.test', new Date(Date.now() - 100 * day), 90)
  shop = await ca.issue('shop.le.test', new Date(Date.now() - 10 * day), 90)
  site = await ca.issue('site.plain.test', new Date(Date.now() - day), 200)
  other = await ca.issue('other.plain.test', new Date(Date.now() - day), 200)
  stranger = await ca.issue('outside.test', new Date(Date.now() - day), 200)

  // Let's Encrypt's layout (certbot): live/<name>/*.pem link to the newest files in archive/<name>/.
  le = join(base, 'letsencrypt')
  const { live } = writeLetsEncrypt(le, 'shop.le.test', [shopOld, shop])
  writeFileSync(join(le, 'live', 'README'), 'This directory contains your keys and certificates.\n')

  // Outside the folder: a certificate that must never be imported from a scan of `le`.
  outside = join(base, 'outside')
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.pem'), stranger.certificatePem + stranger.privateKeyPem)
  // Links that leave the folder, plainly, through `../`, through a linked folder, and a loop.
  symlinkSync('/etc/passwd', join(le, 'passwd.pem'))
  symlinkSync('../outside/secret.pem', join(le, 'sneaky.pem'))
  symlinkSync('../../../outside/secret.pem', join(live, 'evil.pem'))
  symlinkSync(outside, join(le, 'out-dir'))
  symlinkSync('.', join(le, 'live', 'loop'))
  symlinkSync('missing.pem', join(le, 'dangling.pem'))

  // The most common layout of all: site.crt beside site.key; and a key that belongs to nothing here.
  plain = join(base, 'plain')
  mkdirSync(plain)
  writeFileSync(join(plain, 'site.crt'), site.certificatePem + site.chainPem)
  writeFileSync(join(plain, 'site.key'), site.privateKeyPem, { mode: 0o600 })
  writeFileSync(join(plain, 'other.crt'), other.certificatePem)
  writeFileSync(join(plain, 'other.key'), stranger.privateKeyPem, { mode: 0o600 })

  // What a hostile local user can leave in a scanned folder: a FIFO and a device named like certificates.
  hostile = join(base, 'hostile')
  mkdirSync(hostile)
  writeFileSync(join(hostile, 'real.pem'), site.certificatePem)
  execFileSync('mkfifo', [join(hostile, 'pipe.pem')])
  execFileSync('mknod', [join(hostile, 'zero.crt'), 'c', '1', '5'])
})
afterAll(async () => {
  rmSync(base, { recursive: true, force: true })
  await s?.close()
})

describe('folder import and links', () => {
  it('lists every link it did not follow, with why, instead of importing nothing silently', async () => {
    const r = await s.reseller()
    const live = join(le, 'live')
    const out = await s.service.imports.importFolder(r.id, live)
    expect(out.imported).toEqual([])
    const skipped = skippedUnder(out, live)
    for (const f of ['cert', 'chain', 'fullchain', 'privkey']) {
      expect(skipped[`shop.le.test/${f}.pem`]).toMatch(/symbolic link .*not followed/)
    }
    expect(skipped['shop.le.test/cert.pem']).toMatch(/--follow-links/)
  })

  it('follows links only while they stay inside the folder', async () => {
    const r = await s.reseller()
    const live = join(le, 'live')
    // live/ alone: its links lead to ../archive, outside the folder chosen.
    const out = await s.service.imports.importFolder(r.id, live, { followLinks: true })
    expect(out.imported).toEqual([])
    const skipped = skippedUnder(out, live)
    expect(skipped['shop.le.test/cert.pem']).toMatch(/leads out of the folder/)
    expect(skipped['shop.le.test/evil.pem']).toMatch(/leads out of the folder/)
  })

  it("imports Let's Encrypt's current certificate through live/, its key beside it, and nothing from outside", async () => {
    const r = await s.reseller()
    const out = await s.service.imports.importFolder(r.id, le, { followLinks: true, withKeys: true })
    // The current certificate once (cert.pem and fullchain.pem hold the same leaf), with its key;
    // archive/ keeps earlier certificates, read only through live/.
    expect(out.imported.map((c) => [c.domain, c.serial, c.keyKept])).toEqual([
      ['shop.le.test', shop.serial.toUpperCase(), true]
    ])
    expect(out.imported[0].source).toBe(`file:${join(le, 'live', 'shop.le.test', 'cert.pem')}`)
    expect((await s.service.imports.list(r.id)).map((c) => c.domain)).toEqual(['shop.le.test'])
    const skipped = skippedUnder(out, le)
    for (const name of ['passwd.pem', 'sneaky.pem', 'live/shop.le.test/evil.pem', 'out-dir']) {
      expect(skipped[name], name).toMatch(/leads out of the folder.*never followed/)
    }
    expect(skipped['dangling.pem']).toMatch(/leads nowhere/)
    expect(skipped['live/shop.le.test/chain.pem']).toMatch(/only CA certificates/)
    expect(skipped['archive']).toMatch(/read through live\//)
    expect(out.keysLeftInPlace).toEqual([])
  })

  it('never reads a FIFO or a device, and finishes', async () => {
    const r = await s.reseller()
    const out = await s.service.imports.importFolder(r.id, hostile)
    expect(out.imported.map((c) => c.domain)).toEqual(['site.plain.test'])
    const skipped = skippedUnder(out, hostile)
    expect(skipped['pipe.pem']).toMatch(/not a regular file \(a FIFO\)/)
    expect(skipped['zero.crt']).toMatch(/not a regular file \(a device\)/)
    // Named one by one, the same.
    const named = await s.service.imports.importFiles(r.id, [join(hostile, 'pipe.pem'), join(hostile, 'zero.crt')])
    expect(named.skipped.map((x) => x.reason)).toEqual([
      expect.stringMatching(/not a regular file \(a FIFO\)/),
      expect.stringMatching(/not a regular file \(a device\)/)
    ])
  })
})

describe('a folder changed while it is imported', () => {
  it('never reads a file swapped for a FIFO, nor through a folder swapped for a link out', async () => {
    const r = await s.reseller()
    const root = join(base, 'changing')
    for (const d of ['a', 'b', 'c']) mkdirSync(join(root, d), { recursive: true })
    // a/ first: a PFX whose MAC takes seconds to derive holds the import there while the rest changes.
    opensslPfx(site, join(root, 'a', 'slow.p12'), 'slow', ['-iter', '1000000', '-keypbe', 'NONE', '-certpbe', 'NONE'])
    writeFileSync(join(root, 'b', 'x.pem'), other.certificatePem)
    writeFileSync(join(root, 'c', 'y.pem'), other.certificatePem)
    const away = join(base, 'away')
    mkdirSync(away)
    writeFileSync(join(away, 'y.pem'), stranger.certificatePem)

    const importing = s.service.imports.importFolder(r.id, root, { password: 'slow' })
    // The folder was listed; now another user swaps a file for a FIFO and a folder for a link.
    unlinkSync(join(root, 'b', 'x.pem'))
    execFileSync('mkfifo', [join(root, 'b', 'x.pem')])
    renameSync(join(root, 'c'), join(root, 'c-was'))
    symlinkSync(away, join(root, 'c'))
    const out = await importing

    expect(out.imported.map((c) => c.domain)).toEqual(['site.plain.test'])
    const skipped = skippedUnder(out, root)
    expect(skipped['b/x.pem']).toMatch(/not a regular file \(a FIFO\)/)
    expect(skipped['c/y.pem']).toMatch(/leads out of it; not read/)
  })
})

describe('keys beside their certificates', () => {
  it('keeps site.key with site.crt when keys are asked for, only the key that matches', async () => {
    const r = await s.reseller()
    const out = await s.service.imports.importFolder(r.id, plain, { withKeys: true })
    const byDomain = Object.fromEntries(out.imported.map((c) => [c.domain, c.keyKept]))
    expect(byDomain).toEqual({ 'site.plain.test': true, 'other.plain.test': false })
    const row = (await s.service.ctx.store.get(
      'SELECT wrapped_key FROM imported_keys WHERE certificate_id = ?',
      out.imported.find((c) => c.domain === 'site.plain.test')?.id ?? null
    )) as { wrapped_key: Buffer }
    const id = out.imported.find((c) => c.domain === 'site.plain.test')?.id as number
    expect((await s.service.keyVault.unwrapImported(id, row.wrapped_key)).trim()).toBe(site.privateKeyPem.trim())
    // other.key belongs to another certificate: left where it is, and said so.
    expect(out.keysLeftInPlace).toEqual([join(plain, 'other.key')])
    expect(skippedUnder(out, plain)['other.key']).toMatch(/does not belong to other\.crt/)
  })

  it('without --with-keys, lists the key beside its certificate as left in place', async () => {
    const r = await s.reseller()
    const out = await s.service.imports.importFolder(r.id, plain)
    expect(out.imported.every((c) => !c.keyKept)).toBe(true)
    expect(out.keysLeftInPlace.sort()).toEqual([join(plain, 'other.key'), join(plain, 'site.key')])
  })

  it('finds site.key beside a certificate file named alone', async () => {
    const r = await s.reseller()
    const out = await s.service.imports.importFiles(r.id, [join(plain, 'site.crt')], { withKeys: true })
    expect(out.imported.map((c) => [c.domain, c.keyKept])).toEqual([['site.plain.test', true]])
  })

  it("reads a file named on its own through its link, with certbot's privkey.pem beside it", async () => {
    const r = await s.reseller()
    const fullchain = join(le, 'live', 'shop.le.test', 'fullchain.pem')
    const out = await s.service.imports.importFiles(r.id, [fullchain], { withKeys: true })
    expect(out.imported.map((c) => [c.domain, c.serial, c.keyKept])).toEqual([
      ['shop.le.test', shop.serial.toUpperCase(), true]
    ])
  })

  it('certdesk admin import folder --follow-links --with-keys does the same from the command line', async () => {
    const dataDir = s.dataDir
    const resellerId = (await s.reseller()).id
    const r = certdesk([
      'admin',
      '--data-dir',
      dataDir,
      'import',
      'folder',
      '--reseller',
      String(resellerId),
      '--folder',
      le,
      '--follow-links',
      '--with-keys'
    ])
    expect(r.code, r.stderr).toBe(0)
    expect((r.json.imported as { domain: string; keyKept: boolean }[]).map((c) => [c.domain, c.keyKept])).toEqual([
      ['shop.le.test', true]
    ])
  })
})
