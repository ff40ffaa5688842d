/**
 * Email validation without an SMTP relay: the approval message lands in CertDesk's outbox,
 * the order page shows it, and the code from it issues the certificate. On a multi-domain
 * order every name has its own approver (BR §3.2.2.4.4 constructed addresses), its own message
 * and its own approval.
 */
import { expect, test, type Page } from '@playwright/test'
import { openApp, orderFromCatalogue, orderMultiDomain, shot } from './support'

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
  await expect(box.locator('.error-box')).toContainText('does not match')
  await page.getByLabel('Approval code').fill(code)
  await page.getByRole('button', { name: 'Approve' }).click()
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('ECDSA P-384')
})

/** Reads the approval code from the message the page shows for one name. */
async function codeShownFor(page: Page, name: string): Promise<string> {
  const message = page.locator(`.name-check[data-name="${name}"] .approval-message`)
  await message.locator('summary').click()
  const body = (await message.locator('pre').textContent()) ?? ''
  return /approval code to your provider:\s+(\S+)/.exec(body)?.[1] ?? ''
}

test('a multi-domain order: a different approver for each name, each approved on its own', async ({ page }) => {
  const names = ['names.example.test', 'shop.example.net', '*.example.org']
  await openApp(page)
  await orderMultiDomain(page, names[0], 1)
  await page.getByLabel('Names', { exact: true }).fill(names.join(' '))
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('*.example.org')
  await page.getByLabel('Validation method').selectOption('email')
  // Every name offers the constructed mailboxes at its own base domain.
  await expect(page.getByLabel('Approver for *.example.org').locator('option')).toHaveText([
    'admin@example.org',
    'administrator@example.org',
    'webmaster@example.org',
    'hostmaster@example.org',
    'postmaster@example.org'
  ])
  await page.getByLabel('Approver for names.example.test').selectOption('hostmaster@names.example.test')
  await page.getByLabel('Approver for shop.example.net').selectOption('postmaster@shop.example.net')
  await page.getByRole('button', { name: 'Submit CSR' }).click()

  const box = (name: string) => page.locator(`.name-check[data-name="${name}"]`)
  await expect(box(names[0])).toContainText('Approval email to hostmaster@names.example.test, sent')
  await expect(box(names[1])).toContainText('Approval email to postmaster@shop.example.net, sent')
  await expect(box(names[2])).toContainText('Approval email to admin@example.org, sent')

  // Another mailbox for the wildcard name, chosen while it waits.
  await box(names[2]).getByLabel('Approver for *.example.org').selectOption('webmaster@example.org')
  await box(names[2]).getByRole('button', { name: 'Change mailbox' }).click()
  await expect(box(names[2])).toContainText('Approval email to webmaster@example.org, sent')
  await expect(box(names[2]).locator('.approval-message summary')).toContainText('Message to webmaster@example.org')
  await shot(page, 'order-email-approval-per-name')

  // Each name is approved with its own code; the states show name by name.
  const approvers = ['hostmaster@names.example.test', 'postmaster@shop.example.net', 'webmaster@example.org']
  for (const [i, name] of names.entries()) {
    const code = await codeShownFor(page, name)
    expect(code).toMatch(/^[A-Z2-9]{10}$/)
    await box(name).getByLabel(`Approval code for ${name}`).fill(code)
    await box(name)
      .getByRole('button', { name: `Approve ${name}` })
      .click()
    await expect(box(name).getByTestId('email-approved')).toContainText(`Approved through ${approvers[i]}`)
    for (const later of names.slice(i + 1)) {
      await expect(box(later)).toContainText('Approval email to')
      await expect(box(later).getByTestId('email-approved')).toHaveCount(0)
    }
  }
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('names.example.test, shop.example.net, *.example.org')
})
