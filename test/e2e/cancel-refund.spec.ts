import { expect, test } from '@playwright/test'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { balance, nav, openApp, orderFromCatalogue, shot } from './support'

test('cancelling a paid order refunds it to credit and shows the refund', async ({ page }) => {
  await openApp(page)
  const start = await balance(page)
  const number = await orderFromCatalogue(page, 'refund.example.test')
  expect(number).toMatch(/^ORD-/)
  const afterOrder = await balance(page)
  expect(afterOrder).toBeLessThan(start)

  await page.getByRole('button', { name: 'Cancel order' }).click()
  await expect(page.getByRole('dialog', { name: 'Cancel order' })).toContainText(
    `$${((start - afterOrder) / 100).toFixed(2)} goes back to the credit balance`
  )
  await page.getByRole('button', { name: 'Yes, cancel and refund' }).click()
  await expect(page.locator('.ok-box')).toContainText(`Refunded $${((start - afterOrder) / 100).toFixed(2)}`)
  await expect(page.locator('h1')).toContainText('cancelled')
  await expect.poll(() => balance(page)).toBe(start)
  await expect(page.getByRole('button', { name: 'Cancel order' })).toHaveCount(0)

  // The ledger shows the debit and the refund, newest first.
  await nav(page, 'Billing')
  const rows = page.getByTestId('transactions-list').locator('.vlist-row')
  await expect(rows.first()).toContainText(`Refund for cancelled order ${number}`)
  await expect(rows.nth(1)).toContainText(`Order ${number}`)
  await shot(page, 'billing')

  await page.getByRole('button', { name: 'Invoices' }).click()
  await page.getByLabel('Invoice status').selectOption('cancelled')
  await expect(page.getByTestId('invoices-list').locator('.vlist-row').first()).toContainText(number)
  // Browser mode: the main process writes the export where the user says.
  await page.getByRole('button', { name: 'Export CSV' }).click()
  await expect(page.getByLabel('Export file')).toHaveValue(/invoices[-\d]*\.csv$/)
  const csv = test.info().outputPath('cancelled-invoices.csv')
  mkdirSync(dirname(csv), { recursive: true })
  await page.getByLabel('Export file').fill(csv)
  await page.getByRole('button', { name: 'Export', exact: true }).click()
  await expect(page.locator('[data-testid="export-job"][data-state="done"]')).toContainText(
    'Exported 1 row of the invoices'
  )
  expect(readFileSync(csv, 'utf8')).toContain(number)

  await nav(page, 'Orders')
  await page.getByLabel('Search order number or domain').fill('refund.example')
  await expect(page.getByTestId('orders-list').locator('.vlist-row')).toHaveCount(1)
  await expect(page.getByTestId('orders-list')).toContainText('cancelled')
  await shot(page, 'orders')
})

test('the validation method of a waiting order can be changed, and it shows the new instructions', async ({ page }) => {
  await openApp(page)
  await orderFromCatalogue(page, 'dns.example.test')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('dns.example.test')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  await expect(page.getByTestId('dcv-url')).toContainText('http://dns.example.test/.well-known/pki-validation/')
  await page.getByLabel('Change method').selectOption('dns')
  await page.getByRole('button', { name: 'Change', exact: true }).click()
  const box = page.locator('.name-check[data-name="dns.example.test"]')
  await expect(box.getByTestId('dns-record').getByTestId('dns-type')).toHaveText('CNAME')
  await expect(box.getByTestId('dns-record').getByTestId('dns-name')).toContainText('_')
  await expect(box).toContainText('DNS')
  // A validation_pending order is not cancellable (docs/decisions.md, order states): no cancel button.
  await expect(page.getByRole('button', { name: 'Cancel order' })).toHaveCount(0)
})

test('an order on invoice stays unpaid until paid from credit; a top-up is recorded', async ({ page }) => {
  await openApp(page)
  await orderFromCatalogue(page, 'invoice.example.test', 'invoice')
  await expect(page.locator('.facts')).toContainText('unpaid')
  const before = await balance(page)
  await page.getByRole('button', { name: /from credit/ }).click()
  await expect(page.locator('.facts').first()).toContainText('paid')
  await expect.poll(() => balance(page)).toBeLessThan(before)

  // A top-up: bad input is refused and kept; a good one is recorded.
  await nav(page, 'Billing')
  await page.getByLabel('Amount').fill('12.345')
  await page.getByLabel('Description').fill('Wire 2026-11')
  await page.getByRole('button', { name: 'Record' }).click()
  await expect(page.locator('.error-box')).toContainText('positive amount')
  await expect(page.getByLabel('Description')).toHaveValue('Wire 2026-11')
  const b = await balance(page)
  await page.getByLabel('Amount').fill('250')
  await page.getByRole('button', { name: 'Record' }).click()
  await expect.poll(() => balance(page)).toBe(b + 25000)
  await expect(page.getByTestId('transactions-list').locator('.vlist-row').first()).toContainText('Wire 2026-11')
})
