import { chmodSync, closeSync, constants, mkdirSync, openSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

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
