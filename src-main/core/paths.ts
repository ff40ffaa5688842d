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
