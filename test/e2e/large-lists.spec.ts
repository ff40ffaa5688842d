/**
 * 100,000 orders: the lists stay virtualised (only the rows in view exist) and filtered and
 * paged by the server. Runs its own browser-mode server on a store seeded with SQL before
 * start, so the shared demo account of the other tests is left alone.
 */
import { expect, test, type Browser } from '@playwright/test'
import Database from 'better-sqlite3'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { shot } from './support'

const ROOT = join(__dirname, '..', '..')
const CLI = join(ROOT, 'bin', 'certdesk.cjs')
const COUNT = 100_000
let dataDir: string
let server: ChildProcess | null = null
let login = ''

test.beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-bulk-'))
  const made = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', dataDir, 'reseller', 'add', '--name', 'Bulk Hosting', '--email', 'bulk@example.test'],
    { encoding: 'utf8' }
  )
  expect(made.status, made.stderr).toBe(0)
  const db = new Database(join(dataDir, 'certdesk.sqlite'))
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${COUNT})
    INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents, san_total_cents,
      discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date, created_at, updated_at)
    SELECT i, 'ORD-2026-' || printf('%06d', i), 1, 2, 'host-' || i || '.bulk.test', 12, 3120, 0, 0, 3120,
      CASE i % 4 WHEN 0 THEN 'completed' WHEN 1 THEN 'pending' WHEN 2 THEN 'cancelled' ELSE 'expired' END,
      'paid', 1, '2027-11-01', '2026-11-01 10:00:00', '2026-11-01 10:00:00' FROM n`)
  db.close()
  server = spawn('timeout', ['10m', process.execPath, CLI, 'serve', '--ui', '--port', '0', '--data-dir', dataDir], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit']
  })
  login = await new Promise<string>((resolve, reject) => {
    let out = ''
    server!.stdout!.on('data', (d) => {
      out += d
      const m = /open once: (http:\/\/\S+)/.exec(out)
      if (m) resolve(m[1])
    })
    server!.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
})

test.afterAll(async () => {
  if (server) {
    const exited = new Promise((r) => server!.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

async function signIn(browser: Browser) {
  const context = await browser.newContext({
    storageState: { cookies: [], origins: [] },
    viewport: { width: 1360, height: 860 }
  })
  const page = await context.newPage()
  await page.goto(login)
  await expect(page.getByTestId('balance')).toBeVisible()
  return page
}

test('100,000 orders scroll, search and filter quickly with only the visible rows in the page', async ({ browser }) => {
  const page = await signIn(browser)
  await page.locator('.sidebar').getByText('Orders', { exact: true }).click()
  const list = page.getByTestId('orders-list')
  await expect(page.getByTestId('orders-range')).toHaveText(/of 100,000 rows$/)
  await expect(list.locator('.vlist-row').first()).toContainText('ORD-2026-100000')
  // Virtualised: a few dozen rows in the DOM, not 100,000.
  expect(await list.locator('.vlist-row').count()).toBeLessThan(80)

  // Jump to the end: the last page is fetched on demand.
  const started = Date.now()
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight))
  await expect(list.locator('.vlist-row', { hasText: 'ORD-2026-000001' })).toBeVisible()
  expect(Date.now() - started).toBeLessThan(3000)

  // Server-side search and status filter.
  await page.getByLabel('Search order number or domain').fill('host-99999.')
  await expect(page.getByTestId('orders-range')).toHaveText(/of 1 row$/)
  await expect(list.locator('.vlist-row').first()).toContainText('host-99999.bulk.test')
  await page.getByLabel('Search order number or domain').fill('')
  await page.getByLabel('Status').selectOption('completed')
  await expect(page.getByTestId('orders-range')).toHaveText(/of 25,000 rows$/)
  await shot(page, 'orders-100k')

  await page.locator('.sidebar').getByText('Dashboard', { exact: true }).click()
  await expect(page.locator('.stat').nth(1)).toContainText('100,000')
  await page.context().close()
})
