import { defineConfig } from 'vitest/config'

/**
 * The suite runs once per store engine (scripts/test.mjs). On SQLite, everything. On PostgreSQL
 * (`CERTDESK_TEST_ENGINE=postgres`, test/support/engine.ts), the folders of the parts a team
 * server runs over its database: the core, the reseller API (test/api, test/http), the CLI and
 * the ACME server. Left out there, each for a reason that holds for the whole file:
 *  - `*.sqlite.test.ts`: reaches into the SQLite file itself (a lock another process holds, a
 *    crash point, a full disk, a backup of the file, an old schema migrated, the data dir's own
 *    files);
 *  - test/core/store: the port's own tests, which run every case on both engines already.
 * The UI's folders (bridge, deploys, alerts, …) and the end-to-end tests run once, on SQLite.
 */
const POSTGRES_FOLDERS = ['core', 'api', 'http', 'cli', 'acme']
const postgres = process.env.CERTDESK_TEST_ENGINE === 'postgres'

export default defineConfig({
  test: {
    include: postgres ? POSTGRES_FOLDERS.map((f) => `test/${f}/**/*.test.ts`) : ['test/**/*.test.ts'],
    exclude: [
      'test/e2e/**',
      'node_modules/**',
      ...(postgres ? ['test/**/*.sqlite.test.ts', 'test/core/store/**'] : [])
    ],
    environment: 'node',
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/engine-cleanup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each API test file starts its own server on its own data dir; files run in parallel.
    pool: 'forks',
    reporters: ['default']
  }
})
