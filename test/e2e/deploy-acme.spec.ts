/**
 * Deploy targets on the order page and the ACME panel: a certificate issued through
 * the UI is deployed to a folder on disk with "Deploy now"; an ACME subscription ordered from
 * the catalogue shows its EAB key id, directory URL and client commands.
 */
import { expect, test } from '@playwright/test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { nav, openApp, orderFromCatalogue, shot } from './support'

let dns: DnsServer
let web: WebServer
let folder: string
test.beforeAll(async () => {
  dns = await startDns()
  web = await startWeb()
  folder = mkdtempSync(join(tmpdir(), 'certdesk-deploy-e2e-'))
})
test.afterAll(async () => {
  await web?.close()
  await dns?.close()
  if (folder) rmSync(folder, { recursive: true, force: true })
})

test('a folder target gets the issued certificate on "Deploy now"; a webhook target shows its secret once', async ({
  page
}) => {
  await openApp(page)
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill(dns.address)
  await page.getByLabel('HTTP validation port').fill(String(web.httpPort))
  await page.getByLabel('Lab use: let validation reach loopback and private addresses').check()
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok')).toContainText('Settings saved')

  // Issue a certificate the way a user does: key and CSR in the app, HTTP validation.
  await orderFromCatalogue(page, 'deploy.example.test')
  await page.getByLabel('Names').fill('deploy.example.test')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('deploy.example.test')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  const box = page.locator('.name-check[data-name="deploy.example.test"]')
  const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
  web.put('deploy.example.test', url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(page.locator('h1')).toContainText('completed')

  const card = page.getByTestId('deploy-targets')
  await expect(card).toContainText('No deploy targets yet.')
  // A relative path is refused with the core's message, and what was typed stays.
  await card.getByLabel('Folder path').fill('relative/site')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('.error-box')).toContainText('path must be an absolute folder path')
  await expect(card.getByLabel('Folder path')).toHaveValue('relative/site')

  const dir = join(folder, 'site')
  await card.getByLabel('Folder path').fill(dir)
  await card.getByLabel('Layout').selectOption('nginx')
  await card.getByRole('button', { name: 'Add target' }).click()
  const row = card.locator('tr[data-target="folder"]')
  await expect(row).toContainText(dir)
  await expect(row.getByTestId('last-run')).toContainText('not run yet')
  await expect(card.locator('.error-box')).toHaveCount(0)

  await card.getByRole('button', { name: 'Deploy now' }).click()
  await expect(row.getByTestId('last-run')).toContainText('succeeded')
  await expect(card.getByTestId('deploy-runs')).toContainText('manual')
  await expect(card.getByTestId('deploy-runs')).toContainText('succeeded')
  for (const f of ['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem']) expect(existsSync(join(dir, f))).toBe(true)
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8')
  expect(cert).toMatch(/^-----BEGIN CERTIFICATE-----/)
  expect(readFileSync(join(dir, 'fullchain.pem'), 'utf8').startsWith(cert)).toBe(true)

  // A webhook target: its generated secret is shown once after adding.
  await card.getByLabel('Target kind').selectOption('webhook')
  await card.getByLabel('Webhook URL').fill('https://deploy.example.test/hook')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.getByTestId('deploy-secret')).toContainText('Webhook secret')
  await expect(card.getByTestId('deploy-secret').locator('code')).toHaveText(/^whsec_/)
  await expect(card.locator('tr[data-target="webhook"]')).toContainText('https://deploy.example.test/hook')
  await card.scrollIntoViewIfNeeded()
  await shot(page, 'deploy-targets')
  await card.getByTestId('deploy-secret').getByRole('button', { name: 'Done' }).click()
  await expect(card.getByTestId('deploy-secret')).toHaveCount(0)

  // Removing asks first, then the target leaves the list (its runs stay as history).
  await card.locator('tr[data-target="webhook"]').getByRole('button', { name: 'Remove' }).click()
  await card.locator('tr[data-target="webhook"]').getByRole('button', { name: 'Yes, remove' }).click()
  await expect(card.locator('tr[data-target="webhook"]')).toHaveCount(0)
  await expect(card.locator('tr[data-target="folder"]')).toHaveCount(1)

  // Back to the default resolver and port for the other files.
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill('')
  await page.getByLabel('HTTP validation port').fill('')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')
})

test('an ACME subscription ordered from the catalogue shows its EAB key id, server URL and certbot command', async ({
  page
}) => {
  await openApp(page)
  await nav(page, 'ACME')
  await expect(page.getByText('Order an ACME subscription')).toBeVisible()
  // The guidance leads to the catalogue with ACME subscriptions shown.
  await page.getByRole('button', { name: 'Order an ACME subscription' }).click()
  await expect(page.getByRole('heading', { name: 'Catalogue' })).toBeVisible()
  await expect(page.getByLabel('Show ACME subscriptions')).toBeChecked()
  const product = page.locator('tr[data-product="PositiveSSL ACME DV"]')
  await expect(product).toContainText('ACME subscription')
  await product.getByRole('button', { name: 'Order' }).click()
  await expect(page.getByRole('heading', { name: 'New order' })).toBeVisible()
  await page.locator('input[name="domain"]').fill('acme-ui.example.test')
  await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
  await page.getByRole('button', { name: /Place order for/ }).click()
  // It completes at once: no CSR, no validation.
  await expect(page.locator('h1', { hasText: 'acme-ui.example.test' })).toContainText('completed')
  const orderNumber = (await page.getByTestId('order-number').textContent()) ?? ''

  await nav(page, 'ACME')
  const sub = page.locator(`[data-testid="acme-subscription"][data-order="${orderNumber}"]`)
  await expect(sub).toContainText('acme-ui.example.test')
  await expect(sub.getByTestId('acme-eab-kid')).toContainText(/kid_\S+/)
  await expect(sub.getByTestId('acme-server-url')).toContainText(/https:\/\/localhost:\d+\/acme\/directory/)
  const kid = /kid_[A-Za-z0-9_-]+/.exec((await sub.getByTestId('acme-eab-kid').textContent()) ?? '')![0]
  const certbot = sub.getByTestId('acme-command-certbot')
  await expect(certbot).toContainText(`certbot certonly`)
  await expect(certbot).toContainText(`--eab-kid ${kid}`)
  await expect(certbot).toContainText('-d acme-ui.example.test')
  // The HMAC key stays hidden until asked for.
  await expect(certbot).toContainText('<EAB_HMAC_KEY>')
  await sub.scrollIntoViewIfNeeded()
  await shot(page, 'acme')
  await sub.getByRole('button', { name: 'Reveal HMAC key' }).click()
  await expect(sub.getByTestId('acme-hmac')).toHaveText(/[A-Za-z0-9_-]{20,}/)
  const hmac = ((await sub.getByTestId('acme-hmac').textContent()) ?? '').replace(/Copy$/, '').trim()
  await expect(certbot).toContainText(`--eab-hmac-key=${hmac}`)
  await expect(certbot).not.toContainText('<EAB_HMAC_KEY>')
})

test('an auto-install subscription asks for its contact email, keeps the form on the refusal, and completes with it', async ({
  page
}) => {
  await openApp(page)
  await nav(page, 'Catalogue')
  await page.getByLabel('Show ACME subscriptions').check()
  await page.locator('tr[data-product="PositiveSSL Auto-Install DV"]').getByRole('button', { name: 'Order' }).click()
  await expect(page.getByRole('heading', { name: 'New order' })).toBeVisible()
  await page.locator('input[name="domain"]').fill('ais-ui.example.test')
  // Without a contact email the core refuses, and says why, before anything is charged.
  await expect(page.getByText('contact_email is required for auto-install subscription products')).toBeVisible()
  // An address that would be shell syntax in the set-up commands is refused with the core's reason.
  await page.getByLabel('Contact email').fill('x@y.z;id>/tmp/pwned;#')
  await expect(page.getByText('"x@y.z;id>/tmp/pwned;#" is not an email address')).toBeVisible()
  await expect(page.getByRole('button', { name: /Place order/ })).toBeDisabled()
  await page.getByLabel('Contact email').fill('notices@ais-ui.example.test')
  await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
  await expect(page.locator('input[name="domain"]')).toHaveValue('ais-ui.example.test')
  await page.getByRole('button', { name: /Place order for/ }).click()
  await expect(page.locator('h1', { hasText: 'ais-ui.example.test' })).toContainText('completed')
})
