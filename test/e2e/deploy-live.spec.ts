/**
 * A deploy run started by the issuance (in the background) is shown as running and then, on
 * the same page and without reopening it, as succeeded; the same for a "Deploy now" left
 * mid-run and come back to. Done for two orders in a row without a reload.
 */
import { expect, test, type Page } from '@playwright/test'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { issueOverHttp, nav, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

let dns: DnsServer
let web: WebServer
test.beforeAll(async () => {
  dns = await startDns()
  web = await startWeb()
})
test.afterAll(async () => {
  await web?.close()
  await dns?.close()
})

/** A command target that takes a few seconds, like a reload that drains connections. */
async function addSlowCommand(page: Page): Promise<void> {
  const card = page.getByTestId('deploy-targets')
  await card.getByLabel('Target kind').selectOption('command')
  await card.getByLabel('Command').fill('sleep 4; echo "deployed $CERTDESK_DOMAIN"')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('tr[data-target="command"]').getByTestId('last-run')).toContainText('not run yet')
}

test('a deploy run turns from running to succeeded on the page by itself', async ({ page }) => {
  await pointChecksAt(page, dns, web)
  for (const domain of ['live-one.example.test', 'live-two.example.test']) {
    const number = await orderFromCatalogue(page, domain)
    await addSlowCommand(page)
    const card = page.getByTestId('deploy-targets')
    const lastRun = card.locator('tr[data-target="command"]').getByTestId('last-run')

    // The issuance starts the deploy in the background; the page shows it running, then done.
    await issueOverHttp(page, web, [domain])
    await expect(lastRun).toContainText('running')
    await expect(card.getByTestId('deploy-runs')).toContainText('issued')
    await card.scrollIntoViewIfNeeded()
    await shot(page, 'deploy-running')
    await expect(lastRun).toContainText('succeeded', { timeout: 20_000 })
    await expect(card.getByTestId('deploy-runs').locator('tbody tr').first()).toContainText('succeeded')
    await expect(card.getByTestId('deploy-runs')).not.toContainText('running')

    // "Deploy now", then away and back while it runs: the page catches up by itself.
    await card.getByRole('button', { name: 'Deploy now' }).click()
    await expect(lastRun).toContainText('running')
    await nav(page, 'Orders')
    await page.locator('.row-link', { hasText: number }).click()
    await expect(page.getByTestId('order-number')).toHaveText(number)
    await expect(lastRun).toContainText('running')
    await expect(lastRun).toContainText('succeeded', { timeout: 20_000 })
    await expect(page.getByTestId('deploy-targets').getByTestId('deploy-runs').locator('tbody tr')).toHaveCount(2)
    await expect(page.getByTestId('deploy-targets').getByTestId('deploy-runs')).not.toContainText('running')
  }
  await resetChecks(page)
})
