/**
 * Files written at a name the user chose (core/exclusive-file.ts, `writeNewFileSync`): exactly
 * the mode asked for whatever the umask (0600, or 0644 for the public CA root), a name taken by
 * a file, a folder or a link to nowhere refused with nothing changed, and a missing folder said
 * in words, with no temporary file left behind.
 */
import {
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
import { writeNewFileSync } from '../../src-main/core/exclusive-file'

const dir = mkdtempSync(join(tmpdir(), 'certdesk-exclusive-core-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('writeNewFileSync', () => {
  it('gives the file exactly the mode asked for, whatever the umask', () => {
    const old = process.umask(0o277)
    try {
      writeNewFileSync(join(dir, 'a.json'), '{"a":1}\n', 'the export')
      writeNewFileSync(join(dir, 'public.pem'), 'x', 'the CA root', 0o644)
    } finally {
      process.umask(old)
    }
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
    expect(lstatSync(join(dir, 'a.json')).mode & 0o777).toBe(0o600)
    expect(lstatSync(join(dir, 'public.pem')).mode & 0o777).toBe(0o644)
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'public.pem'])
  })

  it('refuses a name taken by a file, a folder or a link to nowhere, and changes nothing', () => {
    const sub = mkdtempSync(join(dir, 'taken-'))
    writeFileSync(join(sub, 'file.txt'), 'keep\n')
    mkdirSync(join(sub, 'folder'))
    symlinkSync(join(sub, 'would-be-created'), join(sub, 'dangling'))
    for (const name of ['file.txt', 'folder', 'dangling']) {
      expect(() => writeNewFileSync(join(sub, name), 'secret', 'the secrets')).toThrow(
        new RegExp(`could not write the secrets to .*${name}: the file exists`)
      )
    }
    expect(readFileSync(join(sub, 'file.txt'), 'utf8')).toBe('keep\n')
    expect(readdirSync(sub).sort()).toEqual(['dangling', 'file.txt', 'folder'])
  })

  it('says when the folder does not exist', () => {
    expect(() => writeNewFileSync(join(dir, 'nowhere', 'x.csv'), 'x', 'the report')).toThrow(
      /^could not write the report to .*x\.csv: its folder does not exist$/
    )
  })
})
