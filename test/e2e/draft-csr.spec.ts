/**
 * A key and CSR generated on the order page are kept together until the CSR is submitted or
 * discarded: leaving the page and coming back, or reloading the app, brings the same CSR back,
 * the kept key is the one that signed it, and no key material sits in the browser's storage.
 */
import { expect, test, type Page } from '@playwright/test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { nav, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

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

const openssl = (args: string[], input: string): string => execFileSync('openssl', args, { encoding: 'utf8', input })

async function reopen(page: Page, orderNumber: string): Promise<void> {
  await nav(page, 'Orders')
  await page.locator('.row-link', { hasText: orderNumber }).click()
  await expect(page.getByTestId('order-number')).toHaveText(orderNumber)
}

async function generate(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('valid')
  await expect(page.getByLabel('CSR')).toHaveValue(/^-----BEGIN CERTIFICATE REQUEST-----/)
  return page.getByLabel('CSR').inputValue()
}

/** What the browser itself keeps for the page (local storage, IndexedDB, session storage). */
async function browserStorage(page: Page): Promise<string> {
  const state = await page.context().storageState({ indexedDB: true })
  return JSON.stringify(state) + String(await page.evaluate('JSON.stringify(sessionStorage)'))
}

test('a generated CSR survives leaving the page and a reload with its key, until it is discarded or submitted', async ({
  page
}, info) => {
  await pointChecksAt(page, dns, web)
  const kept = page.getByTestId('kept-key')

  // First order: generate, leave mid-flow twice, come back, submit.
  const first = await orderFromCatalogue(page, 'draft-one.example.test')
  const csr1 = await generate(page)
  await reopen(page, first)
  await expect(page.getByLabel('CSR')).toHaveValue(csr1)
  await expect(kept).toContainText(
    'kept on this machine, encrypted with a key from the OS keychain, together with the CSR'
  )
  await nav(page, 'Dashboard')
  await reopen(page, first)
  await expect(page.getByLabel('CSR')).toHaveValue(csr1)
  await expect(page.getByTestId('csr-decoded')).toContainText('draft-one.example.test')

  // A reload keeps it too; the browser's own storage holds no key.
  await page.reload()
  await reopen(page, first)
  await expect(page.getByLabel('CSR')).toHaveValue(csr1)
  await expect(kept).toContainText('together with the CSR')
  const stored = await browserStorage(page)
  expect(stored).not.toMatch(/PRIVATE KEY|CERTIFICATE REQUEST/)
  await shot(page, 'draft-csr-kept')

  // The kept key is the key of this CSR.
  await page.getByLabel('Without a password').check()
  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Private key (unencrypted)' }).click()
  ])
  const keyPath = info.outputPath('draft-one.key.pem')
  await dl.saveAs(keyPath)
  expect(openssl(['pkey', '-pubout'], readFileSync(keyPath, 'utf8'))).toBe(openssl(['req', '-noout', '-pubkey'], csr1))

  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  await expect(page.locator('.name-check[data-name="draft-one.example.test"]')).toBeVisible()
  await reopen(page, first)
  await expect(page.locator('.name-check[data-name="draft-one.example.test"]')).toBeVisible()
  await expect(page.getByLabel('CSR')).toHaveCount(0)

  // Second order, right after without a reload: generate, leave, come back, discard, start over.
  const second = await orderFromCatalogue(page, 'draft-two.example.test')
  await expect(page.getByLabel('CSR')).toHaveValue('')
  await expect(kept).toHaveCount(0)
  const csr2 = await generate(page)
  expect(csr2).not.toBe(csr1)
  await reopen(page, first)
  await reopen(page, second)
  await expect(page.getByLabel('CSR')).toHaveValue(csr2)

  await kept.getByRole('button', { name: 'Discard' }).click()
  await expect(page.getByRole('dialog', { name: 'Discard the generated key' })).toContainText('cannot be recovered')
  await shot(page, 'draft-csr-discard')
  await page.getByRole('button', { name: 'Yes, discard' }).click()
  await expect(page.getByLabel('CSR')).toHaveValue('')
  await expect(kept).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Private key (encrypted)' })).toBeDisabled()
  await expect(page.getByRole('button', { name: 'Submit CSR' })).toBeDisabled()
  // Gone for good: not back after leaving or reloading.
  await page.reload()
  await reopen(page, second)
  await expect(page.getByLabel('CSR')).toHaveValue('')
  await expect(kept).toHaveCount(0)

  const csr3 = await generate(page)
  expect(csr3).not.toBe(csr2)
  await reopen(page, second)
  await expect(page.getByLabel('CSR')).toHaveValue(csr3)
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  await expect(page.locator('.name-check[data-name="draft-two.example.test"] .badge')).toHaveText('waiting')
  await resetChecks(page)
})
