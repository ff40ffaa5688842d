/**
 * Two orders placed in a row without reloading the page: the second order's page shows nothing
 * of the first (no certificate, no history, no downloads of the first order's files), and each
 * page, left and opened again, shows its own certificate and key.
 */
import { expect, test, type Page } from '@playwright/test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
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

const openssl = (args: string[], input?: string): string =>
  execFileSync('openssl', args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) })
const pubOfCert = (pem: string): string => openssl(['x509', '-noout', '-pubkey'], pem)
const pubOfKey = (pem: string): string => openssl(['pkey', '-pubout'], pem)
const namesOf = (pem: string): string => openssl(['x509', '-noout', '-ext', 'subjectAltName'], pem)

async function download(page: Page, button: string, path: string): Promise<string> {
  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button, exact: true }).click()
  ])
  await dl.saveAs(path)
  return readFileSync(path, 'utf8')
}

test('the second of two orders placed in a row shows no certificate of the first, and its downloads are its own', async ({
  page
}, info) => {
  await pointChecksAt(page, dns, web)
  const certificateCard = page
    .locator('section.card')
    .filter({ has: page.getByRole('heading', { name: 'Certificate', exact: true }) })

  // The first order, issued: its certificate, history and downloads are on its page.
  const first = 'first.switch.test'
  const firstNumber = await orderFromCatalogue(page, first)
  await issueOverHttp(page, web, [first])
  await expect(page.getByTestId('cert-facts')).toContainText(first)
  await expect(page.getByTestId('history').locator('li')).toHaveCount(1)
  const firstCert = await download(page, 'Certificate', info.outputPath('first.crt.pem'))
  expect(namesOf(firstCert)).toContain(`DNS:${first}`)
  // A key file without a password is an explicit choice.
  await page.getByLabel('Without a password').check()
  const firstKey = await download(page, 'Private key (unencrypted)', info.outputPath('first.key.pem'))
  expect(pubOfKey(firstKey)).toBe(pubOfCert(firstCert))
  // A password typed for the first order's export.
  await page.getByLabel('Export password').fill('first order only')

  // The second order, placed right away in the same page.
  const second = 'second.switch.test'
  await orderFromCatalogue(page, second)
  await expect(page.locator('h1')).toContainText(second)
  await expect(certificateCard).toContainText('Not issued yet')
  await expect(page.getByTestId('cert-facts')).toHaveCount(0)
  await expect(page.getByTestId('history')).toHaveCount(0)
  await expect(page.getByTestId('expiry')).toHaveCount(0)
  for (const b of ['Certificate', 'Chain', 'Full chain'])
    await expect(page.getByRole('button', { name: b, exact: true })).toHaveCount(0)
  await expect(page.getByText(first)).toHaveCount(0)
  // No key is kept for it yet, so its key export is off rather than handing out the first's.
  await expect(page.getByRole('button', { name: 'Private key (encrypted)' })).toBeDisabled()
  await shot(page, 'second-order-fresh')
  // Stays so once the page has settled (late answers for the first order are dropped).
  await page.waitForTimeout(1000)
  await expect(page.getByTestId('cert-facts')).toHaveCount(0)

  // Issued in turn, its downloads carry its own names and key, nothing of the first.
  await issueOverHttp(page, web, [second])
  await expect(page.getByTestId('cert-facts')).toContainText(second)
  await expect(page.getByTestId('cert-facts')).not.toContainText(first)
  await expect(page.getByTestId('history').locator('li')).toHaveCount(1)
  await expect(page.getByLabel('Export password')).toHaveValue('')
  const secondCert = await download(page, 'Certificate', info.outputPath('second.crt.pem'))
  const secondChain = await download(page, 'Full chain', info.outputPath('second.fullchain.pem'))
  await page.getByLabel('Without a password').check()
  const secondKey = await download(page, 'Private key (unencrypted)', info.outputPath('second.key.pem'))
  expect(namesOf(secondCert)).toContain(`DNS:${second}`)
  expect(namesOf(secondCert)).not.toContain(first)
  expect(secondChain.startsWith(secondCert.trim())).toBe(true)
  expect(secondChain).not.toContain(firstCert.trim())
  expect(pubOfKey(secondKey)).toBe(pubOfCert(secondCert))
  expect(pubOfKey(secondKey)).not.toBe(pubOfKey(firstKey))

  // Left and opened again, the first order shows its own certificate, not the second's.
  await nav(page, 'Orders')
  await page.locator('.row-link', { hasText: firstNumber }).click()
  await expect(page.locator('h1')).toContainText(first)
  await expect(page.getByTestId('cert-facts')).toContainText(first)
  await expect(page.getByTestId('cert-facts')).not.toContainText(second)
  expect(await download(page, 'Certificate', info.outputPath('first-again.crt.pem'))).toBe(firstCert)
  await resetChecks(page)
})
