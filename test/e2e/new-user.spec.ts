/**
 * The path a new user takes after `npm start`: the dashboard, the catalogue, an order with a
 * live price, a key pair and CSR generated in the browser, HTTP validation against a real web
 * server on loopback (names resolved by a real DNS server on loopback), and the certificate,
 * chain, encrypted key and PFX downloaded and opened with openssl.
 */
import { expect, test } from '@playwright/test'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { balance, nav, openApp, orderFromCatalogue, saveDownload, shot } from './support'

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

const openssl = (args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8' })

test('a new user orders, generates a CSR in the browser, passes HTTP validation and downloads PEM and PFX', async ({
  page
}, info) => {
  await openApp(page)
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible()
  // The dashboard's balance is the one the sidebar shows for the chosen reseller.
  await expect(page.locator('.stat').first()).toContainText((await page.getByTestId('balance').textContent())!)

  // Point domain validation at the loopback servers, the way an admin sets a resolver.
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill(dns.address)
  await page.getByLabel('HTTP validation port').fill(String(web.httpPort))
  // The test sites are on loopback, which validation refuses unless the admin says this is a lab.
  await page.getByLabel('Lab use: let validation reach loopback and private addresses').check()
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok')).toContainText('Settings saved')
  await nav(page, 'Dashboard')
  await nav(page, 'Settings')
  await expect(page.getByLabel('Lab use: let validation reach loopback and private addresses')).toBeChecked()

  await nav(page, 'Catalogue')
  await expect(page.locator('tr[data-product]')).not.toHaveCount(0)
  await page.getByLabel('Validation').selectOption('dv')
  await expect(page.locator('tr[data-product="PositiveSSL"]')).toBeVisible()
  await shot(page, 'catalogue')

  const before = await balance(page)
  // The wizard: live price from the core's quote; a bad domain shows the API's message and keeps the form.
  await page.locator('tr[data-product="PositiveSSL"]').getByRole('button', { name: 'Order' }).click()
  await page.locator('input[name="domain"]').fill('not a domain')
  await expect(page.locator('.quote')).toContainText('is not a valid domain name')
  await page.locator('input[name="domain"]').fill('shop.example.test')
  await page.getByRole('combobox').nth(2).selectOption({ label: '2 years' })
  // Wait for the 2-year quote itself: the 1-year one is still shown while the new one is asked for.
  await expect(page.locator('.quote')).toContainText('Base price (2 years)')
  await expect(page.getByTestId('quote-total')).toHaveText(/^\$\d+\.\d\d$/)
  const total = Math.round(Number((await page.getByTestId('quote-total').textContent())!.replace(/[^0-9.]/g, '')) * 100)
  await shot(page, 'new-order')
  await page.getByRole('button', { name: /Place order for/ }).click()
  await expect(page.locator('h1', { hasText: 'shop.example.test' })).toBeVisible()
  await expect(page.getByTestId('balance')).toHaveText(
    `$${((before - total) / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`
  )

  // CSR in the browser: ECDSA P-256 with WebCrypto, decoded and checked at once.
  await page.getByLabel('Names').fill('shop.example.test www.shop.example.test')
  await page.getByLabel('Key type').selectOption('ECDSA-P256')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('www.shop.example.test')
  await expect(page.getByTestId('csr-decoded')).toContainText('ECDSA P-256')
  await expect(page.getByTestId('csr-decoded')).toContainText('valid')
  await expect(page.getByText('The private key is kept on this machine')).toBeVisible()
  await page.getByLabel('Validation method').selectOption('http')
  await shot(page, 'order-csr')
  await page.getByRole('button', { name: 'Submit CSR' }).click()

  // One instruction per name; publish each file on the loopback web server.
  const checks = page.locator('.name-check')
  await expect(checks).toHaveCount(2)
  for (const name of ['shop.example.test', 'www.shop.example.test']) {
    const box = page.locator(`.name-check[data-name="${name}"]`)
    const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
    expect(url.hostname).toBe(name)
    web.put(name, url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
  }
  await shot(page, 'order-validation')
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('www.shop.example.test')
  await expect(page.getByTestId('expiry')).toContainText('days left')
  await expect(page.getByTestId('history').locator('li')).toHaveCount(1)
  await shot(page, 'certificate')

  const save = (button: string, file: string): Promise<string> => saveDownload(page, info, button, file)
  const certPath = await save('Certificate', 'cert.pem')
  const chainPath = await save('Chain', 'chain.pem')
  const fullPath = await save('Full chain', 'fullchain.pem')
  expect(openssl(['x509', '-in', certPath, '-noout', '-ext', 'subjectAltName'])).toContain('DNS:www.shop.example.test')
  expect(readFileSync(fullPath, 'utf8').match(/BEGIN CERTIFICATE/g)?.length).toBe(
    1 + (readFileSync(chainPath, 'utf8').match(/BEGIN CERTIFICATE/g)?.length ?? 0)
  )

  // The chain verifies up to the local CA root exported from Settings.
  await page.getByLabel('Export password').fill('s3cret pass')
  const keyPath = await save('Private key (encrypted)', 'key.pem')
  expect(readFileSync(keyPath, 'utf8')).toMatch(/^-----BEGIN ENCRYPTED PRIVATE KEY-----/)
  const pfxPath = await save('PFX / PKCS#12', 'shop.pfx')
  const pfxText = openssl(['pkcs12', '-in', pfxPath, '-passin', 'pass:s3cret pass', '-nodes'])
  expect(pfxText).toContain('BEGIN PRIVATE KEY')
  expect(pfxText.match(/BEGIN CERTIFICATE/g)?.length).toBeGreaterThanOrEqual(2)
  // The key in the PFX and the encrypted key are the key of the certificate.
  const certPub = openssl(['x509', '-in', certPath, '-noout', '-pubkey'])
  expect(openssl(['pkey', '-in', keyPath, '-passin', 'pass:s3cret pass', '-pubout'])).toBe(certPub)
  const pfxKeyPath = info.outputPath('pfx-key.pem')
  writeFileSync(pfxKeyPath, pfxText.slice(pfxText.indexOf('-----BEGIN PRIVATE KEY-----')))
  expect(openssl(['pkey', '-in', pfxKeyPath, '-pubout'])).toBe(certPub)
  // Windows pairs the key with its certificate by localKeyID and lists them by friendlyName
  // (RFC 7292 §4.2, PKCS#9 attributes): both bags carry both, with the same key id.
  const info12 = execFileSync('openssl', ['pkcs12', '-info', '-in', pfxPath, '-passin', 'pass:s3cret pass', '-nodes'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const bags = info12.split(/^(?=Bag Attributes)/m).filter((b) => b.startsWith('Bag Attributes'))
  const keyBag = bags.find((b) => b.includes('BEGIN PRIVATE KEY'))
  const leafBag = bags.find((b) => b.includes('BEGIN CERTIFICATE'))
  for (const bag of [keyBag, leafBag]) {
    expect(bag).toContain('friendlyName: shop.example.test')
    expect(bag).toMatch(/localKeyID: [0-9A-F ]{59}/)
  }
  expect(keyBag!.match(/localKeyID: (.*)/)![1]).toBe(leafBag!.match(/localKeyID: (.*)/)![1])

  // A manual reissue with the same key and names adds a certificate to the history.
  await page.getByRole('button', { name: 'Reissue…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Reissue certificate' })
  await expect(dialog.getByTestId('reissue-plan')).toContainText('The current private key is used again.')
  await dialog.getByRole('button', { name: 'Reissue now' }).click()
  await expect(dialog).toHaveCount(0)
  await expect(page.getByTestId('history').locator('li')).toHaveCount(2)
  await expect(page.getByTestId('history').locator('li').first()).toContainText('reissue')
  // A reissue with a new key: the key exported afterwards is the new certificate's key.
  await page.getByRole('button', { name: 'Reissue…' }).click()
  await dialog.getByLabel('New key', { exact: true }).check()
  await dialog.getByLabel('New key type').selectOption('ECDSA-P256')
  await dialog.getByRole('button', { name: 'Reissue now' }).click()
  await expect(dialog).toHaveCount(0)
  await expect(page.getByTestId('history').locator('li')).toHaveCount(3)
  const newCertPath = await save('Certificate', 'cert-2.pem')
  const newKeyPath = await save('Private key (encrypted)', 'key-2.pem')
  const newPub = openssl(['x509', '-in', newCertPath, '-noout', '-pubkey'])
  expect(newPub).not.toBe(certPub)
  expect(openssl(['pkey', '-in', newKeyPath, '-passin', 'pass:s3cret pass', '-pubout'])).toBe(newPub)

  await nav(page, 'Settings')
  const [rootDl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export root certificate' }).click()
  ])
  const rootPath = info.outputPath('root.pem')
  await rootDl.saveAs(rootPath)
  expect(openssl(['verify', '-CAfile', rootPath, '-untrusted', chainPath, certPath]).trim()).toBe(`${certPath}: OK`)
  await shot(page, 'settings')

  await nav(page, 'Dashboard')
  // Issued: no longer waiting, and counted as active.
  await expect(page.locator('.card', { hasText: 'Waiting for CSR or validation' })).not.toContainText(
    'shop.example.test'
  )
  await expect(page.locator('.stat').nth(1).locator('.stat-hint')).not.toHaveText(/^0 active/)
  await shot(page, 'dashboard')
})

test('a pasted CSR is decoded as it is typed, and garbage is refused with a reason', async ({ page }) => {
  await openApp(page)
  await orderFromCatalogue(page, 'paste.example.test')
  await page.getByRole('button', { name: 'Paste a CSR' }).click()
  await page.getByLabel('CSR').fill('hello')
  await expect(page.getByText('not a PEM CSR')).toBeVisible()
  await expect(page.getByRole('button', { name: 'Submit CSR' })).toBeDisabled()
  const csr = openssl([
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    '/dev/null',
    '-subj',
    '/CN=paste.example.test/O=Paste Ltd',
    '-addext',
    'subjectAltName=DNS:paste.example.test,DNS:api.paste.example.test'
  ])
  await page.getByLabel('CSR').fill(csr)
  await expect(page.getByTestId('csr-decoded')).toContainText('api.paste.example.test')
  await expect(page.getByTestId('csr-decoded')).toContainText('RSA 2048')
  await expect(page.getByTestId('csr-decoded')).toContainText('Paste Ltd')
  await expect(page.getByRole('button', { name: 'Submit CSR' })).toBeEnabled()
  // Submitting a CSR for other names than the order's shows the API's message; the CSR stays.
  await page
    .getByLabel('CSR')
    .fill(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        '/dev/null',
        '-subj',
        '/CN=other.example.test'
      ])
    )
  await expect(page.getByTestId('csr-decoded')).toContainText('other.example.test')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  await expect(page.locator('.error-box')).toBeVisible()
  await expect(page.getByLabel('CSR')).toHaveValue(/BEGIN CERTIFICATE REQUEST/)
})

test('an RSA 4096 key is generated in the browser and kept for the order', async ({ page }) => {
  await openApp(page)
  await orderFromCatalogue(page, 'rsa.example.test')
  await page.getByLabel('Key type').selectOption('RSA-4096')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('RSA 4096', { timeout: 60_000 })
  await expect(page.getByRole('button', { name: 'Generate key and CSR' })).toBeEnabled()
  await expect(page.getByText('The private key is kept on this machine')).toBeVisible()
})
