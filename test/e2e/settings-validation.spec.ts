/**
 * Settings a new admin mistypes: the core refuses an out-of-range port and a sender that is
 * not an email, the Settings screen says why under each field, and nothing is saved.
 */
import { expect, test } from '@playwright/test'
import { nav, openApp, shot } from './support'

test('an out-of-range port and a sender that is not an email are refused next to their fields, and nothing is saved', async ({
  page
}) => {
  await openApp(page)
  await nav(page, 'Settings')
  const port = page.getByLabel('HTTP validation port')
  const sender = page.getByLabel('Sender address')
  await expect(port).toHaveValue('')
  await port.fill('99999')
  await sender.fill('not an email')
  await page.getByRole('button', { name: 'Save' }).click()

  // Refused, not saved: a message appears, never "Settings saved".
  await expect(page.getByRole('alert').or(page.locator('.toast-ok')).first()).toBeVisible()
  expect(await page.locator('.toast-ok').allTextContents()).toEqual([])
  await expect(page.getByTestId('problem-dcvHttpPort')).toHaveText(
    'could not save the HTTP validation port: it must be a port number from 1 to 65535, not "99999"'
  )
  await expect(page.getByTestId('problem-smtpFrom')).toContainText('must be an email address')
  await expect(port).toHaveAttribute('aria-invalid', 'true')
  // Each message sits in its own field's label, so it is read with the field.
  // In the screen's words: the field's name, never the setting key a command line uses.
  await expect(page.locator('label', { has: port }).getByRole('alert')).toContainText('HTTP validation port')
  await expect(page.locator('label', { has: sender }).getByRole('alert')).toContainText('sender address')
  await expect(page.locator('.content')).not.toContainText(/dcv\.|smtp\./)
  await expect(page.getByTestId('problem-dcvHttpsPort')).toHaveCount(0)
  await expect(page.locator('.toast-ok')).toHaveCount(0)
  // What was typed stays for correcting.
  await expect(port).toHaveValue('99999')
  await shot(page, 'settings-refused')

  // Nothing was saved: a fresh page shows the old (default) values and no messages.
  await page.reload()
  await nav(page, 'Settings')
  await expect(page.getByLabel('HTTP validation port')).toHaveValue('')
  await expect(page.getByLabel('Sender address')).toHaveValue('')
  await expect(page.getByRole('alert')).toHaveCount(0)

  // Corrected values save, and the messages go.
  await page.getByLabel('HTTP validation port').fill('99999')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('problem-dcvHttpPort')).toBeVisible()
  await page.getByLabel('HTTP validation port').fill('8080')
  await page.getByLabel('Sender address').fill('CertDesk <certs@example.test>')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok')).toContainText('Settings saved')
  await expect(page.getByTestId('problem-dcvHttpPort')).toHaveCount(0)
  await nav(page, 'Dashboard')
  await nav(page, 'Settings')
  await expect(page.getByLabel('HTTP validation port')).toHaveValue('8080')
  await expect(page.getByLabel('Sender address')).toHaveValue('CertDesk <certs@example.test>')

  // Back to the defaults for the other files.
  await page.getByLabel('HTTP validation port').fill('')
  await page.getByLabel('Sender address').fill('')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')
})
