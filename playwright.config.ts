/**
 * End-to-end tests: Debian's Chromium against browser mode (`certdesk serve --ui`) on a fresh
 * data dir with its own private keyring, started by the global set-up and stopped by its
 * teardown (and by a `timeout` wrapper should the runner die). Playwright's own browsers are
 * not downloadable here, hence `executablePath`.
 */
import { defineConfig } from '@playwright/test'

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run'
]

export default defineConfig({
  testDir: 'test/e2e',
  globalSetup: './test/e2e/global-setup.ts',
  // One server and one demo reseller for the run: files run one after another.
  workers: 1,
  fullyParallel: false,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  outputDir: 'test-results/playwright',
  // scripts/test.mjs sets PLAYWRIGHT_JSON_OUTPUT_NAME for its summary line.
  reporter: [
    ['list'],
    ['json', { outputFile: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ?? 'test-results/playwright.json' }]
  ],
  use: {
    browserName: 'chromium',
    launchOptions: { executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS },
    storageState: 'test-results/.auth/session.json',
    viewport: { width: 1360, height: 860 },
    acceptDownloads: true,
    screenshot: 'only-on-failure',
    trace: 'off'
  }
})
