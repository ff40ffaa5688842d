import { defineConfig } from 'vitest/config'

/**
 * The suite runs once per store engine (scripts/test.mjs). On SQLite, everything. On PostgreSQL
 * (`CERTDESK_TEST_ENGINE=postgres`, test/support/engine.ts), the folders whose tests go through
 * the store: the core, the reseller API, the bridge, the CLI, the ACME server, renewals,
 * deploys, installations, alerts and the keychain faults. Left out there, each for a reason
 * that holds for the whole file:
 *  - `*.sqlite.test.ts`: reaches into the SQLite file itself (a lock another process holds, a
 *    crash point, a full disk, a backup of the file, an old schema migrated);
 *  - test/core/store: the port's own tests, which run every case on both engines already;
 *  - test/docs, test/lint: no store.
 */
const POSTGRES_FOLDERS = [
  'core',
  'api',
  'http',
  'app',
  'cli',
  'acme',
  'renewal',
  'deploy',
  'installations',
  'alerts',
  'faults'
]
const postgres = process.env.CERTDESK_TEST_ENGINE === 'postgres'

export default defineConfig({
  test: {
    include: postgres
      ? [...POSTGRES_FOLDERS.map((f) => `test/${f}/**/*.test.ts`), 'test/runtime.test.ts']
      : ['test/**/*.test.ts'],
    exclude: [
      'test/e2e/**',
      'node_modules/**',
      ...(postgres ? ['test/**/*.sqlite.test.ts', 'test/core/store/**'] : [])
    ],
    environment: 'node',
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each API test file starts its own server on its own data dir; files run in parallel.
    pool: 'forks',
    reporters: ['default']
  }
})
