/**
 * Reading one file of an import, once: the file is opened (non-blocking, so a FIFO cannot hold
 * the open), the opened handle is checked (a regular file, at most MAX_FILE_BYTES, and inside
 * the scanned folder) and read; nothing is looked up by name a second time, so a name swapped
 * for a link, a FIFO or a device after the folder was listed is never read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs'
import { basename, relative, isAbsolute, sep } from 'node:path'
import { MAX_FILE_BYTES, UnreadableFile } from './parse'

/** O_NOFOLLOW and O_NONBLOCK where the platform has them (Windows has neither, nor FIFOs or symlinks by default). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
const NONBLOCK = constants.O_NONBLOCK ?? 0

/** What a file that is not a regular file is, in words. */
export function kindOf(
  st: Pick<Stats, 'isFIFO' | 'isCharacterDevice' | 'isBlockDevice' | 'isSocket' | 'isDirectory' | 'isSymbolicLink'>
): string {
  if (st.isFIFO()) return 'a FIFO'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSocket()) return 'a socket'
  if (st.isDirectory()) return 'a folder'
  if (st.isSymbolicLink()) return 'a symbolic link'
  return 'not a file'
}

/** Whether `path` is `root` or lies under it (both real paths). */
export function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

/**
 * The bytes of the regular file at `path`. `follow: false` refuses a symbolic link at the name
 * (O_NOFOLLOW); `within` is the real path of the scanned folder, and the file opened must be one
 * of its files (its real path, checked against the opened handle's inode, lies inside), so a
 * folder swapped for a link during the scan cannot lead the read elsewhere.
 */
export function readImportFile(path: string, opts: { follow: boolean; within: string | null }): Buffer {
  const name = basename(path)
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | NONBLOCK | (opts.follow ? 0 : NOFOLLOW))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw new UnreadableFile(`${name} became a symbolic link while it was read; not followed`)
    if (code === 'ENXIO') throw new UnreadableFile(`${name} is not a regular file (a socket); not read`)
    throw new UnreadableFile(`could not read ${name}: ${code ?? 'error'}`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new UnreadableFile(`${name} is not a regular file (${kindOf(st)}); not read`)
    if (opts.within !== null) {
      let real: string
      try {
        real = realpathSync(path)
      } catch {
        real = ''
      }
      const same = real !== '' && sameFile(statSync(real, { throwIfNoEntry: false }), st)
      if (!same || !inside(opts.within, real)) {
        throw new UnreadableFile(`${name} changed while the folder was read and now leads out of it; not read`)
      }
    }
    if (st.size > MAX_FILE_BYTES) throw new UnreadableFile(`${name} is larger than ${MAX_FILE_BYTES} bytes`)
    // One byte more than fstat said: a file that grew since is noticed, not read on and on.
    const buf = Buffer.alloc(st.size + 1)
    let got = 0
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null)
      if (n === 0) break
      got += n
      if (got === buf.length) throw new UnreadableFile(`${name} grew while it was read; not read`)
    }
    return buf.subarray(0, got)
  } finally {
    closeSync(fd)
  }
}

function sameFile(a: Stats | undefined, b: Stats): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino
}
