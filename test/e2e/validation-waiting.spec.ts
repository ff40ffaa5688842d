/**
 * Right after the CSR is submitted nobody has published the validation file yet: every name
 * shows "waiting" with the time of the last look and what it found, never a red "failed", and
 * passes once the file is there. Real checks against a web and a DNS server on loopback.
 */
import { expect, test } from '@playwright/test'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

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

test('names wait after the CSR is submitted, with the last check time and what was found, until the file is published', async ({
  page
}) => {
  await pointChecksAt(page, dns, web)
  await orderFromCatalogue(page, 'waiting.example.test')
  await page.getByLabel('Names').fill('waiting.example.test www.waiting.example.test')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('www.waiting.example.test')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()

  // The page looks at once; nothing is published yet, so each name waits and says what it saw.
  for (const name of ['waiting.example.test', 'www.waiting.example.test']) {
    const box = page.locator(`.name-check[data-name="${name}"]`)
    await expect(box).toContainText('HTTP 404')
    await expect(box.locator('.badge-dcv-failed')).toHaveCount(0)
    await expect(box.getByTestId('dcv-last-check')).toHaveText(
      /^Last checked \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: could not fetch http:\/\/\S+: HTTP 404$/
    )
    await expect(box.locator('.badge')).toHaveText('waiting')
  }
  await expect(page.locator('.badge-dcv-failed')).toHaveCount(0)
  await expect(page.getByText('failed', { exact: true })).toHaveCount(0)
  await shot(page, 'validation-waiting')

  // Something else at the URL (a catch-all page) is what it found, and the name still waits.
  const first = page.locator('.name-check[data-name="waiting.example.test"]')
  const url = new URL(((await first.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
  const content = (await first.getByTestId('dcv-content').textContent()) ?? ''
  web.put('waiting.example.test', url.pathname, '<html>welcome</html>')
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(first.getByTestId('dcv-last-check')).toContainText('does not hold the expected content')
  await expect(first.locator('.badge')).toHaveText('waiting')

  // Published for one name: it is valid, the other keeps waiting; then both, and it is issued.
  web.put('waiting.example.test', url.pathname, content)
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(first.locator('.badge')).toHaveText('valid')
  await expect(first.getByTestId('dcv-last-check')).toHaveCount(0)
  await expect(page.locator('.name-check[data-name="www.waiting.example.test"] .badge')).toHaveText('waiting')
  web.put('www.waiting.example.test', url.pathname, content)
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('www.waiting.example.test')
  await resetChecks(page)
})
