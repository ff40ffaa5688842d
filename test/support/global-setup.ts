/**
 * Runs once before the vitest workers: builds the CLI the tests spawn, starts a private
 * D-Bus session with gnome-keyring, so every test uses the real OS keychain, and a real
 * PostgreSQL server with a migrated template database (postgres.ts).
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { startKeyringSession } from '../../scripts/keyring-session.mjs'
import { migratePostgres } from '../../src-main/core/store/postgres-migrate'
import { startPostgres } from './postgres'

export default async function setup(): Promise<() => Promise<void>> {
  const root = join(__dirname, '..', '..')
  const built = spawnSync(join(root, 'node_modules', '.bin', 'electron-vite'), ['build', '--logLevel', 'error'], {
    cwd: root,
    stdio: 'inherit'
  })
  if (built.status !== 0) throw new Error('could not build CertDesk for the tests')
  const session = await startKeyringSession()
  Object.assign(process.env, session.env)
  const postgres = await startPostgres((client) => migratePostgres(client))
  Object.assign(process.env, postgres.env)
  return async () => {
    await postgres.stop()
    session.stop()
  }
}
