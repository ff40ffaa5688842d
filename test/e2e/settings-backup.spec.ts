/**
 * Settings → Backup: the desktop user backs up the running store, sees the progress reach the
 * end and the file's path, and the file restores with `certdesk admin restore` (its
 * authentication code checked with this machine's keychain) into a whole store (integrity check,
 * the ledger summing to every balance). A relative folder is refused on screen and nothing is
 * written.
 */
import { expect, test } from '@playwright/test'
import type BetterSqlite3 from 'better-sqlite3'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nav, openApp, shot } from './support'

const CLI = join(__dirname, '..', '..', 'bin', 'certdesk.cjs')

const require = createRequire(join(__dirname, '..', '..', 'package.json'))
const Database = require('better-sqlite3') as typeof BetterSqlite3

test('backs up the running store with progress, to a file that is a whole store', async ({ page }) => {
  await openApp(page)
  await nav(page, 'Settings')
  await page.getByLabel(/^Backup folder/).fill('backups-relative')
  await page.getByRole('button', { name: 'Back up now' }).click()
  await expect(page.locator('.toast-error')).toContainText('the folder must be an absolute path')

  await page.getByLabel(/^Backup folder/).fill('')
  await page.getByRole('button', { name: 'Back up now' }).click()
  const status = page.getByRole('status').filter({ has: page.getByLabel('backup progress') })
  await expect(status.getByLabel('backup progress')).toHaveAttribute('value', '100')
  const file = (await status.locator('.mono').textContent()) ?? ''
  expect(file).toMatch(/[/\\]backups[/\\]certdesk-backup-\d{8}-\d{6}\.backup$/)
  await expect(page.getByText(/sealed with a key kept in this machine's OS keychain/)).toBeVisible()
  await shot(page, 'settings-backup')

  expect(existsSync(file)).toBe(true)
  const into = mkdtempSync(join(tmpdir(), 'certdesk-e2e-restore-'))
  const restored = spawnSync(
    process.execPath,
    [CLI, 'admin', 'restore', '--from', file, '--data-dir', join(into, 'd')],
    {
      encoding: 'utf8',
      env: process.env
    }
  )
  expect(restored.status, restored.stderr).toBe(0)
  expect(JSON.parse(restored.stdout)).toMatchObject({ success: true, integrity: 'ok', authenticated_with: 'keychain' })
  const db = new Database(join(into, 'd', 'certdesk.sqlite'), { readonly: true })
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    const off = db
      .prepare(
        `SELECT r.id FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id
          GROUP BY r.id HAVING r.credit_balance_cents != COALESCE(SUM(t.amount_cents), 0)`
      )
      .all()
    expect(off).toEqual([])
    expect((db.prepare('SELECT COUNT(*) AS n FROM resellers').get() as { n: number }).n).toBeGreaterThan(0)
  } finally {
    db.close()
    rmSync(into, { recursive: true, force: true })
  }
})
