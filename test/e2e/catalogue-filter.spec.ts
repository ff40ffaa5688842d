/**
 * The catalogue shows the list of the filter last chosen, whatever order the answers come back
 * in: a slow answer to the first load must not replace the list of a filter picked after it.
 */
import { expect, test } from '@playwright/test'
import { holdFirstCall, nav, openApp } from './support'

test('a slow answer for the whole catalogue does not replace the list with ACME subscriptions asked for after it', async ({
  page
}) => {
  await openApp(page)
  // Hold back the catalogue's first load (no filter) until the filtered one has been shown.
  const first = await holdFirstCall(page, 'listProducts', (body) => !body.includes('includeAcme'))
  await nav(page, 'Catalogue')
  await expect.poll(first.held).toBe(1)
  await page.getByLabel('Show ACME subscriptions').check()
  const acmeRow = page.locator('tr[data-product="PositiveSSL Auto-Install DV"]')
  await expect(acmeRow).toBeVisible()

  // The first answer arrives last; the list stays the one the checkbox asked for.
  await first.release()
  await expect(acmeRow).toBeVisible()
  await expect(page.getByLabel('Show ACME subscriptions')).toBeChecked()

  // And back: unchecked, the ACME subscriptions leave the list.
  await page.getByLabel('Show ACME subscriptions').uncheck()
  await expect(acmeRow).toHaveCount(0)
  await expect(page.locator('tr[data-product="PositiveSSL"]')).toBeVisible()
})
