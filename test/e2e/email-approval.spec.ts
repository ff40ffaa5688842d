/**
 * Email validation without an SMTP relay: the approval message lands in CertDesk's outbox,
 * the order page shows it, and the code from it issues the certificate.
 */
import { expect, test } from '@playwright/test'
import { openApp, orderFromCatalogue, shot } from './support'

test('an email approval from the outbox issues the certificate', async ({ page }) => {
  await openApp(page)
  await orderFromCatalogue(page, 'mail.example.test')
  await page.getByLabel('Key type').selectOption('ECDSA-P384')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('ECDSA P-384')
  await page.getByLabel('Validation method').selectOption('email')
  await page.getByLabel('Approver').selectOption('hostmaster@mail.example.test')
  await page.getByRole('button', { name: 'Submit CSR' }).click()

  const box = page.locator('.name-check[data-name="mail.example.test"]')
  await expect(box).toContainText('Approval email to hostmaster@mail.example.test')
  await expect(page.locator('.email-approval summary')).toContainText('Approval messages (1)')
  // Resend: a fresh message with a new code.
  await page.getByRole('button', { name: 'Resend email' }).click()
  await expect(page.locator('.email-approval summary')).toContainText('Approval messages (2)')
  await page.locator('.email-approval summary').click()
  const body = (await page.locator('.email-approval pre').textContent()) ?? ''
  const code = /approval code to your provider:\s+(\S+)/.exec(body)?.[1] ?? ''
  expect(code).toMatch(/^[A-Z2-9]{10}$/)
  await shot(page, 'order-email-approval')

  // A wrong code is refused with the core's message; the right one issues at once.
  await page.getByLabel('Approval code').fill('WRONGCODE1')
  await page.getByRole('button', { name: 'Approve' }).click()
  await expect(page.locator('.email-approval .error-box')).toContainText('does not match')
  await page.getByLabel('Approval code').fill(code)
  await page.getByRole('button', { name: 'Approve' }).click()
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('ECDSA P-384')
})
