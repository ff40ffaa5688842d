/**
 * The smaller things a reseller admin meets on a walk through CertDesk, each driven through the
 * screens of browser mode on a store of its own (so signing out ends nobody else's session):
 * cancelled orders read as cancelled everywhere; invoices carry the seller's name and address
 * from Settings; ledger rows lead to their orders; an export asks where the user looks and its
 * notice goes when dismissed and on sign-out; errors use the screens' words; a reseller can be
 * edited; the dashboard's expiring count includes imported certificates; and the Billing tab,
 * the event-log filters, the expiry window and the new-order product live in the address.
 */
import { expect, test, type Page } from '@playwright/test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestCa, type TestLeaf } from '../support/test-ca'
import { nav, orderFromCatalogue, SCREENSHOTS, signInWith, startOwnServer, type OwnServer } from './support'

let server: OwnServer
let page: Page
let outDir: string
let bought: TestLeaf

test.beforeAll(async ({ browser }) => {
  test.setTimeout(120_000)
  outDir = mkdtempSync(join(tmpdir(), 'certdesk-walk-exports-'))
  const ca = await createTestCa()
  bought = await ca.issue('bought.example.test', new Date(Date.now() - 70 * 86_400_000), 90)
  server = await startOwnServer([
    ['reseller', 'add', '--name', 'Walk Hosting', '--email', 'ops@walk.test', '--company', 'Walk Hosting GmbH'],
    ['credit', 'add', '--reseller', '1', '--amount', '500']
  ])
  page = await signInWith(browser, server.login)
})

test.afterAll(async () => {
  await page?.context().close()
  await server?.stop()
  rmSync(outDir, { recursive: true, force: true })
})

async function cancel(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Cancel order' }).click()
  await p.getByRole('button', { name: 'Yes, cancel and refund' }).click()
  await expect(p.locator('h1')).toContainText('cancelled')
}

const hash = (p: Page): string => new URL(p.url()).hash

test('a cancelled order reads as cancelled on its page, in the invoice list and in the orders list', async () => {
  const paid = await orderFromCatalogue(page, 'paid-then-gone.example.test')
  await cancel(page)
  await expect(page.getByTestId('payment-line')).toContainText('cancelled')
  await expect(page.getByTestId('payment-line')).toContainText('$31.20 went back to the credit balance')
  await expect(page.getByTestId('payment-line')).not.toContainText('refunded')
  await expect(page.getByTestId('reissue-line')).toHaveText('none: the order is cancelled')

  const unpaid = await orderFromCatalogue(page, 'never-paid.example.test', 'invoice')
  await cancel(page)
  await expect(page.locator('.ok-box')).toContainText('nothing was refunded')
  await expect(page.locator('.content')).not.toContainText('Refunded $0.00')
  await expect(page.getByTestId('payment-line')).toContainText('cancelled')
  await expect(page.getByTestId('payment-line')).toContainText('nothing was paid')
  await expect(page.getByTestId('payment-line')).not.toContainText('unpaid')
  await expect(page.getByTestId('reissue-line')).not.toContainText('yes')
  await page.screenshot({ path: join(SCREENSHOTS, 'walk-cancelled-unpaid-order.png') })

  // The invoice list says the same word for both.
  await nav(page, 'Billing')
  await page.getByRole('button', { name: 'Invoices' }).click()
  const invoices = page.getByTestId('invoices-list')
  for (const n of [paid, unpaid])
    await expect(invoices.locator('.vlist-row', { hasText: n })).toContainText('cancelled')
  // And the orders list shows no "unpaid" beside "cancelled".
  await nav(page, 'Orders')
  const row = page.getByTestId('orders-list').locator(`[data-order="${unpaid}"]`)
  await expect(row).toContainText('cancelled')
  await expect(row).not.toContainText('unpaid')
})

test('an invoice carries the seller’s name and address from Settings; a bad address is refused in the screen’s words', async () => {
  const number = await orderFromCatalogue(page, 'billed.example.test')
  await nav(page, 'Settings')
  const form = page.getByRole('form', { name: 'Invoices' })
  await form.getByLabel('Business name').fill('Example Certificates Ltd')
  await form.getByLabel('Business address').fill(Array.from({ length: 9 }, (_, i) => `Line ${i + 1}`).join('\n'))
  await form.getByRole('button', { name: 'Update invoice details' }).click()
  await expect(form.getByRole('alert')).toHaveText(
    'could not save the business address: it must be at most 8 lines, not 9'
  )
  await form.getByLabel('Business address').fill('1 Harbour Street\nExample City 12345\nUnited Kingdom')
  await form.getByRole('button', { name: 'Update invoice details' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')

  await nav(page, 'Billing')
  await page.getByRole('button', { name: 'Invoices' }).click()
  await page.getByTestId('invoices-list').locator('.vlist-row', { hasText: number }).click()
  const seller = page.getByTestId('invoice-seller')
  await expect(seller).toContainText('Example Certificates Ltd')
  await expect(seller).toContainText('1 Harbour Street')
  await expect(seller).toContainText('United Kingdom')
  await expect(page.getByTestId('invoice-reseller')).toContainText('Walk Hosting GmbH')
  await page.emulateMedia({ media: 'print' })
  await expect(seller).toBeVisible()
  await page.screenshot({ path: join(SCREENSHOTS, 'walk-invoice-seller.png'), fullPage: true })
  await page.emulateMedia({ media: 'screen' })
})

test('ledger rows lead to their orders', async () => {
  const number = await orderFromCatalogue(page, 'ledger-link.example.test')
  await nav(page, 'Billing')
  await page.getByRole('button', { name: 'Credit ledger' }).click()
  const rows = page.getByTestId('transactions-list').locator('.vlist-row')
  const debit = rows.filter({ hasText: `Order ${number}` })
  await expect(debit.getByRole('link', { name: number })).toBeVisible()
  await debit.click()
  await expect(page.getByTestId('order-number')).toHaveText(number)
})

test('an export asks for its file where the user looks at 1024 px, and its notice stays gone once dismissed', async () => {
  await page.setViewportSize({ width: 1024, height: 700 })
  for (const screen of ['Billing', 'Orders']) {
    await nav(page, screen)
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const field = page.getByLabel('Export file')
    await expect(field).toBeVisible()
    await expect(field).toBeInViewport({ ratio: 1 })
    const box = (await page.getByRole('dialog').boundingBox())!
    expect(box.x, screen).toBeGreaterThanOrEqual(0)
    expect(box.x + box.width, screen).toBeLessThanOrEqual(1024)
    await page.screenshot({ path: join(SCREENSHOTS, `walk-export-dialog-${screen.toLowerCase()}-1024.png`) })
    if (screen === 'Billing') {
      // Escape leaves it, as Cancel does.
      await page.keyboard.press('Escape')
      await expect(field).toHaveCount(0)
    }
  }
  const file = join(outDir, 'orders.csv')
  await page.getByLabel('Export file').fill(file)
  await page.getByRole('button', { name: 'Export', exact: true }).click()
  const job = page.getByTestId('export-job')
  await expect(job).toHaveAttribute('data-state', 'done')
  expect(existsSync(file)).toBe(true)
  await job.getByRole('button', { name: 'Dismiss' }).click()
  await expect(job).toHaveCount(0)
  await page.reload()
  await expect(page.getByTestId('balance')).toBeVisible()
  await expect(page.getByTestId('export-job')).toHaveCount(0)
  await page.setViewportSize({ width: 1360, height: 860 })
})

test('an error names what to do on screen, not an API route', async () => {
  await orderFromCatalogue(page, 'unpaid-csr.example.test', 'invoice')
  await page.getByLabel('Names').fill('unpaid-csr.example.test')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('unpaid-csr.example.test')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  const alert = page.getByRole('alert').filter({ hasText: 'pay it first' })
  await expect(alert).toContainText('pay it first with "Pay from credit" on the order page')
  await expect(page.locator('body')).not.toContainText('POST /')
})

test('a reseller is edited in Settings: name, email, group and discount; a bad email changes nothing', async () => {
  await nav(page, 'Settings')
  await page.getByRole('button', { name: 'Edit Walk Hosting' }).click()
  const form = page.getByRole('form', { name: 'Edit reseller Walk Hosting' })
  await form.getByLabel('Email').fill('not-an-address')
  await form.getByLabel('Discount (%)').fill('10')
  await form.getByRole('button', { name: 'Update reseller' }).click()
  await expect(form.getByRole('alert')).toContainText('is not an email address')
  await expect(page.locator('#acting-for option:checked')).toHaveText('Walk Hosting')

  await form.getByLabel('Name').fill('Walk Hosting Europe')
  await form.getByLabel('Email').fill('billing@walk.test')
  await form.getByLabel('Group').selectOption({ label: 'Standard' })
  await form.getByRole('button', { name: 'Update reseller' }).click()
  await expect(page.locator('#acting-for option:checked')).toHaveText('Walk Hosting Europe')
  const row = page.getByRole('row', { name: /Walk Hosting Europe/ })
  await expect(row).toContainText('billing@walk.test')
  await expect(row).toContainText('10%')
  await expect(page.getByText('group Standard · discount 10%')).toBeVisible()
  // New orders are priced with the new discount.
  await nav(page, 'Catalogue')
  await expect(page.getByTestId('price-note')).toContainText('less your 10% reseller discount')
})

test('the dashboard counts every certificate expiring within 30 days, imported ones included', async () => {
  await nav(page, 'Imported certificates')
  await page
    .getByLabel('Certificate files')
    .setInputFiles([
      { name: 'bought.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(bought.certificatePem) }
    ])
  await page.getByRole('button', { name: 'Import files' }).click()
  await expect(page.getByTestId('import-outcome')).toContainText('Imported 1')
  await nav(page, 'Dashboard')
  const card = page.getByTestId('dashboard-expiring')
  await expect(card).toContainText('Expiring in 30 days')
  await expect(card.getByRole('link', { name: '1', exact: true })).toBeVisible()
  await expect(card).toContainText('bought.example.test')
  await expect(card).toContainText('imported')
  await card.getByRole('link', { name: '1', exact: true }).click()
  expect(hash(page)).toBe('#/reports/expiring?days=30')
  await expect(page.getByRole('table', { name: 'Certificates ending soon' })).toContainText('bought.example.test')
})

test('the Billing tab, the event-log filters, the expiry window and the new-order product live in the address', async ({
  browser
}) => {
  const origin = new URL(page.url()).origin
  // Billing: the invoices tab with a status, kept by a reload and by Back.
  await nav(page, 'Billing')
  await page.getByRole('button', { name: 'Invoices' }).click()
  await page.getByLabel('Invoice status').selectOption('cancelled')
  expect(hash(page)).toBe('#/billing?tab=invoices&status=cancelled')
  await page.reload()
  await expect(page.getByRole('button', { name: 'Invoices' })).toHaveAttribute('aria-pressed', 'true')
  await expect(page.getByLabel('Invoice status')).toHaveValue('cancelled')
  await expect(page.getByTestId('invoices-range')).toHaveText(/of 2 rows$/)
  await page.goBack()
  await expect(page.getByLabel('Invoice status')).toHaveValue('')
  await page.goBack()
  await expect(page.getByRole('button', { name: 'Credit ledger' })).toHaveAttribute('aria-pressed', 'true')

  // The event log: type and order, kept by a reload, and a pasted link shows the same.
  await nav(page, 'Event log')
  await page.getByLabel('Event type').selectOption('order.cancelled')
  await expect(page.getByTestId('events').locator('tbody tr')).toHaveCount(2)
  const address = hash(page)
  expect(address).toBe('#/events?type=order.cancelled')
  await page.reload()
  await expect(page.getByLabel('Event type')).toHaveValue('order.cancelled')
  await expect(page.getByTestId('events').locator('tbody tr')).toHaveCount(2)

  // The expiry window, and the new-order product, from pasted links in another signed-in tab.
  const other = await page.context().newPage()
  await other.goto(`${origin}/ui/${address}`)
  await expect(other.getByLabel('Event type')).toHaveValue('order.cancelled')
  await other.goto(`${origin}/ui/#/reports/expiring?days=120`)
  await expect(other.getByLabel('Ending within (days)')).toHaveValue('120')
  await other.getByLabel('Ending within (days)').fill('45')
  await other.getByRole('button', { name: 'Show' }).click()
  expect(hash(other)).toBe('#/reports/expiring?days=45')
  await other.reload()
  await expect(other.getByLabel('Ending within (days)')).toHaveValue('45')
  await nav(other, 'Catalogue')
  await other.locator('tr[data-product="PositiveSSL Wildcard"]').getByRole('button', { name: 'Order' }).click()
  expect(hash(other)).toMatch(/^#\/catalogue\/new-order\?product=\d+$/)
  const productAddress = hash(other)
  await other.reload()
  await expect(other.getByLabel('Product')).toHaveValue(/^\d+$/)
  await expect(other.getByLabel('Product').locator('option:checked')).toContainText('PositiveSSL Wildcard')
  await other.getByLabel('Product').selectOption({ label: 'Sectigo PositiveSSL (DV)' })
  expect(hash(other)).not.toBe(productAddress)
  await other.reload()
  await expect(other.getByLabel('Product').locator('option:checked')).toHaveText('Sectigo PositiveSSL (DV)')
  await other.close()
  void browser
})

test('signing out takes the finished export notices with it; the next sign-in shows none', async ({ browser }) => {
  await nav(page, 'Billing')
  await page.getByRole('button', { name: 'Export CSV' }).click()
  await page.getByLabel('Export file').fill(join(outDir, 'ledger.csv'))
  await page.getByRole('button', { name: 'Export', exact: true }).click()
  await expect(page.getByTestId('export-job')).toHaveAttribute('data-state', 'done')
  const next = server.nextLogin()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(page.getByTestId('sign-in-needed')).toBeVisible()
  await expect(page.getByTestId('export-job')).toHaveCount(0)
  await expect(page.locator('body')).not.toContainText('ledger.csv')
  await page.context().close()
  page = await signInWith(browser, await next)
  await expect(page.getByTestId('balance')).toBeVisible()
  await expect(page.getByTestId('export-job')).toHaveCount(0)
})
