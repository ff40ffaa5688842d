/**
 * Writing a file into a folder other users may write to as well (a shared backup disk, an
 * export folder): the content goes to a temporary file beside the target, created exclusively
 * (O_CREAT|O_EXCL: never a file or link someone planted) without following a link (O_NOFOLLOW),
 * mode 0600 whatever the umask, written only through its descriptor and synced; then it takes
 * the target's name without replacing anything there (link(2) fails on an existing name), and
 * the name is checked to be the very file that was written (device and inode), so a temporary
 * file swapped by someone else between the last write and the rename is never passed off as
 * ours. The same folder keeps the final step on one file system, where link and rename are
 * atomic (POSIX.1-2017 link(), rename()).
 */
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync
} from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { conflict, invalid } from './errors'
import { PRIVATE_FILE_MODE } from './paths'

/** Windows has no O_NOFOLLOW; there, creating with O_EXCL is what keeps a planted link out. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW

/** File systems without hard links (FAT, exFAT, some network shares) answer link(2) with one of these. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK'])

/** A temporary file created for one target, open for writing. */
export interface ExclusiveTemp {
  readonly path: string
  readonly handle: FileHandle
  readonly dev: number
  readonly ino: number
}

/** `.<target name>.<random>.partial` in the target's folder: not guessable, hidden from plain `ls`. */
export const tempNameBeside = (target: string): string =>
  join(dirname(target), `.${basename(target)}.${randomBytes(8).toString('hex')}.partial`)

/** Opens a new, empty file at `path` for writing: exclusive, no link followed, 0600. */
export async function openExclusive(path: string): Promise<FileHandle> {
  const handle = await open(path, CREATE_NEW, PRIVATE_FILE_MODE)
  try {
    // The mode passed to open goes through the umask; fchmod does not.
    await handle.chmod(PRIVATE_FILE_MODE)
  } catch (err) {
    await handle.close()
    throw err
  }
  return handle
}

/** A new temporary file beside `target`, for `publish`. */
export async function createBeside(target: string): Promise<ExclusiveTemp> {
  const path = tempNameBeside(target)
  const handle = await openExclusive(path)
  const st = await handle.stat()
  return { path, handle, dev: st.dev, ino: st.ino }
}

/**
 * Syncs and closes `temp`, gives it the name `target` (refused with 409 when that name exists)
 * and checks the name holds what was written. `what` names the file in messages ("the backup").
 * On any failure nothing is left under `target` and the temporary file is removed.
 */
export async function publish(temp: ExclusiveTemp, target: string, what: string): Promise<void> {
  try {
    await temp.handle.sync()
  } finally {
    await temp.handle.close()
  }
  placeUnderName(temp, target, what)
}

/** Removes a temporary file that will not be published (closing it first when still open). */
export async function discard(temp: ExclusiveTemp): Promise<void> {
  await temp.handle.close().catch(() => undefined)
  removeQuietly(temp.path)
}

/**
 * The whole sequence for content already in memory: a new file at `target` holding `data`,
 * never replacing one (409), never written through a planted link. For writers of files a user
 * names (exports, reports, the CA root). `mode` is the file's final mode (0600 unless the content
 * is public), set with fchmod, which the umask does not touch.
 */
export function writeNewFileSync(target: string, data: string | Buffer, what: string, mode = PRIVATE_FILE_MODE): void {
  placeUnderName(writeTempBeside(target, data, what, mode), target, what)
}

/**
 * A temporary file beside `target` holding `data`: created exclusively without following a link,
 * written through its descriptor, given `mode` with fchmod (the umask does not touch it), synced
 * and closed. Removed again on any failure.
 */
function writeTempBeside(
  target: string,
  data: string | Buffer,
  what: string,
  mode: number
): { path: string; dev: number; ino: number } {
  const path = tempNameBeside(target)
  let fd: number
  try {
    fd = openSync(path, CREATE_NEW, PRIVATE_FILE_MODE)
  } catch (err) {
    throw invalid(`could not write ${what} to ${target}: ${folderProblem(err)}`)
  }
  let st: { dev: number; ino: number }
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
    fchmodSync(fd, mode)
    fsyncSync(fd)
    st = lstatSync(path)
  } catch (err) {
    closeSync(fd)
    removeQuietly(path)
    throw err
  }
  closeSync(fd)
  return { path, dev: st.dev, ino: st.ino }
}

/** Why a new file could not be created in a folder, in words. */
export function folderProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'its folder does not exist'
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'the folder is not writable'
  if (code === 'ENOSPC') return 'the disk is full'
  return code ?? 'error'
}

function placeUnderName(temp: { path: string; dev: number; ino: number }, target: string, what: string): void {
  let placed = false
  try {
    try {
      linkSync(temp.path, target)
      placed = true
      unlinkSync(temp.path)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? ''
      if (placed) throw err
      if (code === 'EEXIST') throw conflict(`could not write ${what} to ${target}: the file exists; choose a new name`)
      if (!NO_HARD_LINKS.has(code)) throw err
      // No hard links here: rename, which would replace a file, so only when the name is free.
      if (isPresent(target)) throw conflict(`could not write ${what} to ${target}: the file exists; choose a new name`)
      renameSync(temp.path, target)
      placed = true
    }
    const st = lstatSync(target)
    if (!st.isFile() || st.dev !== temp.dev || st.ino !== temp.ino) {
      throw conflict(
        `could not write ${what} to ${target}: the folder was changed while it was written (its temporary file was replaced by another file); nothing was kept under that name`
      )
    }
  } catch (err) {
    // What we put under the name goes again: it may be the other file, never to be left there.
    if (placed) removeQuietly(target)
    removeQuietly(temp.path)
    throw err
  }
  syncFolder(dirname(target))
}

/** Whether anything (a file, a folder, a link, even a dangling one) has the name `path`. */
export const isPresent = (path: string): boolean => {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}

/** Makes the new name durable (fsync of the folder); folders cannot be opened for it on Windows. */
function syncFolder(dir: string): void {
  let fd: number
  try {
    fd = openSync(dir, 'r')
  } catch {
    return
  }
  try {
    fsyncSync(fd)
  } catch {
    // some file systems refuse fsync on a folder; the rename itself is done
  } finally {
    closeSync(fd)
  }
}

/**
 * Replaces the content of `target` at once: a new temporary file beside it (exclusive, no link
 * followed, 0600 whatever the umask), written and synced, then renamed over `target`, so a
 * reader sees the old file or the new one, never a half-written one, and a crash in between
 * leaves the old one. For files CertDesk owns and rewrites (the server secrets file).
 */
export function replaceFileSync(target: string, data: string | Buffer, what: string): void {
  const temp = writeTempBeside(target, data, what, PRIVATE_FILE_MODE)
  try {
    renameSync(temp.path, target)
  } catch (err) {
    removeQuietly(temp.path)
    throw err
  }
  syncFolder(dirname(target))
}
