import { expect, type Page } from '@playwright/test'
import { join } from 'node:path'

export const base = (): string => {
  const b = process.env.CERTDESK_E2E_BASE
  if (!b) throw new Error('the end-to-end global set-up did not run')
  return b
}

export const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'screenshots')

export async function openApp(page: Page): Promise<void> {
  await page.goto(`${base()}/ui/`)
  await expect(page.getByTestId('balance')).toBeVisible()
}

export async function nav(page: Page, label: string): Promise<void> {
  await page.locator('.sidebar').getByText(label, { exact: true }).click()
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false })
}

/** The balance in the sidebar, in cents. */
export async function balance(page: Page): Promise<number> {
  const text = (await page.getByTestId('balance').textContent()) ?? ''
  return Math.round(Number(text.replace(/[^0-9.]/g, '')) * 100)
}

/** Places a PositiveSSL order for `domain` from the catalogue and lands on its detail page. */
export async function orderFromCatalogue(
  page: Page,
  domain: string,
  payment: 'credit' | 'invoice' = 'credit'
): Promise<string> {
  await nav(page, 'Catalogue')
  await page.locator('tr[data-product="PositiveSSL"]').getByRole('button', { name: 'Order' }).click()
  await expect(page.getByRole('heading', { name: 'New order' })).toBeVisible()
  await page.locator('input[name="domain"]').fill(domain)
  if (payment === 'invoice') await page.getByLabel('On invoice (due in 14 days)').check()
  await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
  await page.getByRole('button', { name: /Place order for/ }).click()
  await expect(page.locator('h1', { hasText: domain })).toBeVisible()
  return (await page.getByTestId('order-number').textContent()) ?? ''
}
