/**
 * The event log is the admin's: an alert raised about an order (here an installation check
 * that cannot reach the server) is in it as "Alert raised", offered by the type filter, linked to
 * the order where it can be fixed, and shown for the reseller whose order it is.
 */
import { expect, test } from '@playwright/test'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { freePort } from '../deploy/web-servers'
import { dcvServersForFile, issueOverHttp, nav, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

const CLI = join(__dirname, '..', '..', 'bin', 'certdesk.cjs')
const servers = dcvServersForFile()

test('an alert raised about an order is in the event log and its type filter', async ({ page }) => {
  test.setTimeout(120_000)
  await pointChecksAt(page, servers.dns, servers.web)
  const domain = 'alerted.example.test'
  let orderNumber: string
  try {
    orderNumber = await orderFromCatalogue(page, domain)
    await issueOverHttp(page, servers.web, [domain])
    // A server that is not there: the check fails, which raises an installation alert.
    const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Installed where' }) })
    await panel.getByLabel('Host name').fill(domain)
    await panel.getByLabel('Port').fill(String(await freePort()))
    await panel.getByLabel('Address (optional)').fill('127.0.0.1')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    await panel.getByRole('button', { name: 'Check now' }).click()
    await expect(panel.getByTestId('installation-badge')).toHaveText('unreachable', { timeout: 20_000 })
  } finally {
    await resetChecks(page)
  }
  // The alert checks of a scheduler pass, from another process on the same store.
  const pass = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', process.env.CERTDESK_E2E_DATA_DIR!, 'scheduler', 'run'],
    { encoding: 'utf8', timeout: 90_000 }
  )
  expect(pass.status, pass.stderr + pass.stdout).toBe(0)

  await nav(page, 'Event log')
  await page.getByLabel('Event type').selectOption({ label: 'Alert raised' })
  const rows = page.getByTestId('events').locator('tbody tr')
  const alert = rows.filter({ hasText: `Installation problem: ${orderNumber} (${domain})` })
  await expect(alert).toHaveCount(1)
  await expect(alert).toHaveAttribute('data-type', 'alert.raised')
  await expect(alert).toContainText('Alert raised')
  await expect(rows.first()).toHaveAttribute('data-type', 'alert.raised')
  await shot(page, 'event-log-alerts')
  await alert.getByRole('link', { name: 'Fix it on the order page' }).click()
  await expect(page.getByTestId('order-number')).toHaveText(orderNumber)
})
