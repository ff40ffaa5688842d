import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync
} from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { conflict, invalid } from './errors'

/**
 * The OS app-data dir Electron's `app.getPath('userData')` would use for "CertDesk", so the
 * CLI, browser mode and the window share one store. `CERTDESK_DATA_DIR` overrides it.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.CERTDESK_DATA_DIR) return env.CERTDESK_DATA_DIR
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'CertDesk')
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'CertDesk')
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'CertDesk')
}

/** Owner only: the data dir (0700) and the store's files (0600). */
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/**
 * Makes `dir` (and missing parents) and leaves it 0700. mkdir's mode passes through the umask
 * and leaves an existing dir as it was (an older version, a restore, `cp -r` under umask 022),
 * so the mode is set again with chmod, which the umask does not touch.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  chmodSync(dir, PRIVATE_DIR_MODE)
}

/** Creates `file` empty when missing and leaves it 0600, whatever the umask or its old mode. */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT, PRIVATE_FILE_MODE))
  chmodSync(file, PRIVATE_FILE_MODE)
}

/** Leaves `file` 0600 when it exists; a missing file is fine. */
export function tightenIfPresent(file: string): void {
  try {
    chmodSync(file, PRIVATE_FILE_MODE)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/**
 * A file being written for a name the user chose: created beside its target, private, under a
 * name nobody could guess. `fd` is open for writing; a writer that writes by name instead
 * (SQLite's backup API) closes it and sets it to null.
 */
export interface PrivateTemp {
  path: string
  fd: number | null
}

/** O_NOFOLLOW where the platform has it (not Windows, whose O_EXCL already refuses any existing name). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
/** Errors of link(2) on file systems without hard links (FAT, exFAT, some network shares). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'])

const fsReason = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException
  if (e.code === 'ENOENT') return 'its folder does not exist'
  if (e.code === 'EACCES' || e.code === 'EPERM') return 'permission denied'
  if (e.code === 'ENOSPC') return 'the disk is full'
  if (e.code === 'EISDIR') return 'it is a folder'
  return e.code ?? e.message
}

/**
 * Creates an empty 0600 file in `target`'s folder (so the final link or rename stays on one file
 * system) under an unpredictable name, with O_CREAT | O_EXCL | O_NOFOLLOW: a name planted there
 * in advance, another user's file or a symbolic link, makes the open fail instead of being
 * reused or followed, and another name is drawn.
 */
export function createPrivateTemp(target: string, action = 'write'): PrivateTemp {
  const dir = dirname(resolve(target))
  const stem = basename(target).slice(0, 100)
  for (let attempt = 0; ; attempt++) {
    const path = join(dir, `.${stem}.${randomBytes(8).toString('hex')}.partial`)
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, PRIVATE_FILE_MODE)
      return { path, fd }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 8) continue
      throw invalid(`could not ${action} to ${target}: ${fsReason(err)}`)
    }
  }
}

/** Removes a temp file that will not be used; what is already gone is fine. */
export function discardPrivateTemp(temp: PrivateTemp): void {
  if (temp.fd !== null) {
    try {
      closeSync(temp.fd)
    } catch {
      // Already closed: nothing to release.
    }
    temp.fd = null
  }
  try {
    unlinkSync(temp.path)
  } catch {
    // Gone already.
  }
}

/**
 * Puts a finished temp file at `target`, which must not exist: synced, given its final `mode`
 * (umask-proof), then linked to the target name with link(2), which fails when anything of that
 * name exists (a file, a folder, a symbolic link even to nowhere), so nothing is replaced or
 * followed and no reader ever sees half a file; then the temp name goes. Where the file system
 * has no hard links (FAT, some network shares, which have no symbolic links or owners either)
 * it is renamed after checking the name is free. The temp file is removed on any failure.
 */
export function placePrivateFile(
  temp: PrivateTemp,
  target: string,
  opts: { mode?: number; action?: string } = {}
): void {
  const action = opts.action ?? 'write'
  try {
    const fd = temp.fd ?? openSync(temp.path, constants.O_RDONLY | NOFOLLOW)
    try {
      fsyncSync(fd)
      fchmodSync(fd, opts.mode ?? PRIVATE_FILE_MODE)
    } finally {
      closeSync(fd)
      temp.fd = null
    }
    try {
      linkSync(temp.path, target)
      unlinkSync(temp.path)
    } catch (err) {
      if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err
      if (lstatOrNull(target)) throw Object.assign(new Error('exists'), { code: 'EEXIST' })
      renameSync(temp.path, target)
    }
    syncFolder(dirname(resolve(target)))
  } catch (err) {
    discardPrivateTemp(temp)
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw conflict(`could not ${action} to ${target}: a file, folder or link of that name exists; choose a new name`)
    }
    throw invalid(`could not ${action} to ${target}: ${fsReason(err)}`)
  }
}

/**
 * Writes `data` as a new file at `target` through a private temp file beside it
 * (createPrivateTemp, placePrivateFile): never follows or replaces what is there, 0600 unless
 * `mode` says otherwise. `action` words the errors: "could not <action> to <target>: <reason>".
 */
export function writeFileExclusive(
  target: string,
  data: string | Uint8Array,
  opts: { mode?: number; action?: string } = {}
): void {
  const temp = createPrivateTemp(target, opts.action)
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data
    for (let off = 0; off < buf.length;) off += writeSync(temp.fd as number, buf, off, buf.length - off)
  } catch (err) {
    discardPrivateTemp(temp)
    throw invalid(`could not ${opts.action ?? 'write'} to ${target}: ${fsReason(err)}`)
  }
  placePrivateFile(temp, target, opts)
}

/** Whether anything has this name, a symbolic link to nowhere included (existsSync follows links). */
export function nameTaken(path: string): boolean {
  return lstatOrNull(path) !== null
}

function lstatOrNull(path: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(path)
  } catch {
    return null
  }
}

/** The folder's entry for the new name survives a power cut; not possible (nor needed) on Windows. */
function syncFolder(dir: string): void {
  if (process.platform === 'win32') return
  try {
    const fd = openSync(dir, constants.O_RDONLY)
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // A folder that cannot be opened for reading still holds the file; durability is best effort.
  }
}
