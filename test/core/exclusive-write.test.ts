/**
 * The one way CertDesk writes a file at a name the user chose (core/paths.ts): a new file only,
 * private whatever the umask, never through a link, and never seen half-written under its name.
 */
import {
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createPrivateTemp, placePrivateFile, writeFileExclusive } from '../../src-main/core/paths'

const dir = mkdtempSync(join(tmpdir(), 'certdesk-exclusive-core-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('writeFileExclusive', () => {
  it('writes a new 0600 file whatever the umask, and leaves no temp file', () => {
    const old = process.umask(0)
    try {
      writeFileExclusive(join(dir, 'a.json'), '{"a":1}\n')
    } finally {
      process.umask(old)
    }
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
    expect(lstatSync(join(dir, 'a.json')).mode & 0o777).toBe(0o600)
    writeFileExclusive(join(dir, 'public.pem'), 'x', { mode: 0o644 })
    expect(lstatSync(join(dir, 'public.pem')).mode & 0o777).toBe(0o644)
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'public.pem'])
  })

  it('refuses a name that is taken by a file, a folder or a link to nowhere, and changes nothing', () => {
    const sub = mkdtempSync(join(dir, 'taken-'))
    writeFileSync(join(sub, 'file.txt'), 'keep\n')
    mkdirSync(join(sub, 'folder'))
    symlinkSync(join(sub, 'would-be-created'), join(sub, 'dangling'))
    for (const name of ['file.txt', 'folder', 'dangling']) {
      expect(() => writeFileExclusive(join(sub, name), 'secret', { action: 'export the secrets' })).toThrow(
        new RegExp(`could not export the secrets to .*${name}: a file, folder or link of that name exists`)
      )
    }
    expect(readFileSync(join(sub, 'file.txt'), 'utf8')).toBe('keep\n')
    expect(readdirSync(sub).sort()).toEqual(['dangling', 'file.txt', 'folder'])
  })

  it('says when the folder does not exist', () => {
    expect(() => writeFileExclusive(join(dir, 'nowhere', 'x.csv'), 'x', { action: 'write the report' })).toThrow(
      /could not write the report to .*x\.csv: its folder does not exist/
    )
  })

  it('keeps a temp file out of sight under an unguessable name until it is placed', () => {
    const sub = mkdtempSync(join(dir, 'temp-'))
    const target = join(sub, 'backup.sqlite')
    const a = createPrivateTemp(target)
    const b = createPrivateTemp(target)
    expect(a.path).not.toBe(b.path)
    expect(a.path.startsWith(join(sub, '.backup.sqlite.'))).toBe(true)
    expect(lstatSync(a.path).mode & 0o777).toBe(0o600)
    // A writer by name (SQLite's backup API) closes the descriptor and places by path.
    closeSync(a.fd as number)
    a.fd = null
    writeFileSync(a.path, 'whole')
    placePrivateFile(a, target)
    expect(readFileSync(target, 'utf8')).toBe('whole')
    expect(() => placePrivateFile(b, target)).toThrow(/exists/)
    expect(readdirSync(sub)).toEqual(['backup.sqlite'])
  })
})
