/**
 * The exclusive writer for files in folders others may write to: a link or file planted under
 * the target's name is never followed or replaced, the file is 0600 whatever the umask, and no
 * temporary file is left behind, whether the write succeeds or is refused.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createBeside, publish, writeNewFileSync } from '../../src-main/core/exclusive-file'

const base = mkdtempSync(join(tmpdir(), 'certdesk-exclusive-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe('writing a new file beside others', () => {
  it('writes 0600 even under umask 0, and leaves only the target', async () => {
    const dir = mkdtempSync(join(base, 'plain-'))
    const old = process.umask(0)
    try {
      writeNewFileSync(join(dir, 'export.json'), '{"ok":true}\n', 'the export')
      const temp = await createBeside(join(dir, 'backup.bin'))
      await temp.handle.write(Buffer.from('payload'))
      await publish(temp, join(dir, 'backup.bin'), 'the backup')
    } finally {
      process.umask(old)
    }
    expect(readdirSync(dir).sort()).toEqual(['backup.bin', 'export.json'])
    for (const f of ['backup.bin', 'export.json']) expect(lstatSync(join(dir, f)).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(dir, 'backup.bin'), 'utf8')).toBe('payload')
  })

  it('never writes through or over a link or file planted under the name', async () => {
    const dir = mkdtempSync(join(base, 'planted-'))
    const victim = join(base, 'victim.txt')
    writeFileSync(victim, 'theirs')
    symlinkSync(victim, join(dir, 'dangling-or-not.json'))
    expect(() => writeNewFileSync(join(dir, 'dangling-or-not.json'), 'mine', 'the export')).toThrow(
      /could not write the export to .*: the file exists; choose a new name/
    )
    symlinkSync(join(base, 'nowhere'), join(dir, 'dangling.bin'))
    const temp = await createBeside(join(dir, 'dangling.bin'))
    await temp.handle.write(Buffer.from('mine'))
    await expect(publish(temp, join(dir, 'dangling.bin'), 'the backup')).rejects.toThrow(/the file exists/)
    expect(readFileSync(victim, 'utf8')).toBe('theirs')
    expect(lstatSync(join(dir, 'dangling.bin')).isSymbolicLink()).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['dangling-or-not.json', 'dangling.bin'])
  })
})
