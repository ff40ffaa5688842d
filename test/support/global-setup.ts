/**
 * Runs once before the vitest workers: builds the CLI the tests spawn and starts a private
 * D-Bus session with gnome-keyring, so every test uses the real OS keychain.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { startKeyringSession } from '../../scripts/keyring-session.mjs'

export default async function setup(): Promise<() => void> {
  const root = join(__dirname, '..', '..')
  const built = spawnSync(join(root, 'node_modules', '.bin', 'electron-vite'), ['build', '--logLevel', 'error'], {
    cwd: root,
    stdio: 'inherit'
  })
  if (built.status !== 0) throw new Error('could not build CertDesk for the tests')
  const session = await startKeyringSession()
  Object.assign(process.env, session.env)
  return () => session.stop()
}
