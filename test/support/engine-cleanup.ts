/**
 * Set-up of every vitest file (vitest.config.mts `setupFiles`): on the PostgreSQL run, the
 * databases a file's books were kept in are dropped once the file has ended (engine.ts). On the
 * SQLite run it loads nothing.
 */
import { afterAll } from 'vitest'

if (process.env.CERTDESK_TEST_ENGINE === 'postgres') {
  const { dropDatabases } = await import('./engine-env')
  afterAll(dropDatabases)
}
