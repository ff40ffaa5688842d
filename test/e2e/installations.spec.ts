/**
 * What servers present, as a reseller admin sees it: an order's "Installed where" panel with an
 * endpoint added and checked (a server with somebody else's certificate, one that never answers),
 * the tag on the orders list, certificates bought elsewhere brought in from files and renewed
 * here in one step, and the expiry report with its CSV.
 */
import { expect, test } from '@playwright/test'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer as netServer, type AddressInfo, type Socket } from 'node:net'
import { createServer as tlsServer, type Server } from 'node:tls'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { writeLetsEncrypt } from '../support/import-files'
import { createTestCa, type TestLeaf } from '../support/test-ca'
import { issueOverHttp, nav, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

let dns: DnsServer
let web: WebServer
let foreign: TestLeaf
let expiringSoon: TestLeaf
let tls: Server
let tlsPort: number
const held = new Set<Socket>()
const silent = netServer((c) => {
  held.add(c)
  c.on('close', () => held.delete(c))
  c.resume()
})
let silentPort: number

test.beforeAll(async () => {
  dns = await startDns()
  web = await startWeb()
  const ca = await createTestCa()
  foreign = await ca.issue('served.example.test', new Date(Date.now() - 86_400_000), 300)
  expiringSoon = await ca.issue('bought-elsewhere.example.test', new Date(Date.now() - 80 * 86_400_000), 90)
  tls = tlsServer({ key: foreign.privateKeyPem, cert: foreign.certificatePem + foreign.chainPem })
  tlsPort = await new Promise<number>((r) => tls.listen(0, '127.0.0.1', () => r((tls.address() as AddressInfo).port)))
  silentPort = await new Promise<number>((r) =>
    silent.listen(0, '127.0.0.1', () => r((silent.address() as AddressInfo).port))
  )
})
test.afterAll(async () => {
  held.forEach((c) => c.destroy())
  await new Promise((r) => silent.close(r))
  await new Promise((r) => tls?.close(r))
  await web?.close()
  await dns?.close()
})

test('an order shows what its servers present, checked on demand, and the orders list carries the tag', async ({
  page
}) => {
  test.setTimeout(120_000)
  await pointChecksAt(page, dns, web)
  try {
    await orderFromCatalogue(page, 'served.example.test')
    await issueOverHttp(page, web, ['served.example.test'])
    const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Installed where' }) })
    await expect(panel).toBeVisible()
    await expect(panel.getByTestId('installation-badge')).toHaveText('not checked yet')

    // A hostile host name is refused with the reason, and nothing is added.
    await panel.getByLabel('Host name').fill('served.example.test;reboot')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    await expect(page.locator('.toast-error').last()).toContainText('is not a domain name')
    await expect(panel.getByRole('button', { name: /^Remove endpoint/ })).toHaveCount(0)

    // The server at this endpoint serves somebody else's certificate for the same name.
    await panel.getByLabel('Host name').fill('served.example.test')
    await panel.getByLabel('Port').fill(String(tlsPort))
    await panel.getByLabel('Address (optional)').fill('127.0.0.1')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    await expect(panel.getByRole('button', { name: `Remove endpoint served.example.test:${tlsPort}` })).toBeVisible()
    await panel.getByRole('button', { name: 'Check now' }).click()
    const row = panel.locator('tr', { hasText: `served.example.test:${tlsPort}` })
    await expect(row).toContainText('serving another certificate')
    await expect(row).toContainText('CertDesk Deploy Test')
    await shot(page, 'installation-other-certificate')

    // A second check in a row, with a server that never answers added: the worst verdict wins.
    await panel.getByLabel('Host name').fill('served.example.test')
    await panel.getByLabel('Port').fill(String(silentPort))
    await panel.getByLabel('Address (optional)').fill('127.0.0.1')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    await panel.getByRole('button', { name: 'Check now' }).click()
    await expect(panel.locator('tr', { hasText: `:${silentPort}` })).toContainText('unreachable', { timeout: 20_000 })
    await expect(panel.getByTestId('installation-badge')).toHaveText('unreachable')

    // Leave and come back: the page shows the last results without connecting again.
    await nav(page, 'Orders')
    const listed = page.locator('[data-order]', { hasText: 'served.example.test' }).first()
    await expect(listed).toContainText('unreachable')
    await shot(page, 'installation-orders-tag')
    await listed.click()
    await expect(panel.getByTestId('installation-badge')).toHaveText('unreachable')
    await expect(panel.locator('tr', { hasText: `:${tlsPort}` })).toContainText('serving another certificate')
  } finally {
    await resetChecks(page)
  }
})

test('certificates bought elsewhere come in from files once, are renewed here in one step, and show in the expiry report', async ({
  page
}) => {
  await page.goto(`${process.env.CERTDESK_E2E_BASE}/ui/`)
  await nav(page, 'Imported certificates')
  const files = [
    {
      name: 'bought.pem',
      mimeType: 'application/x-pem-file',
      buffer: Buffer.from(expiringSoon.certificatePem + expiringSoon.chainPem)
    },
    { name: 'notes.crt', mimeType: 'text/plain', buffer: Buffer.from('renew next year') }
  ]
  await page.getByLabel('Certificate files').setInputFiles(files)
  await page.getByRole('button', { name: 'Import files' }).click()
  await expect(page.getByTestId('import-outcome')).toContainText('Imported 1, already known 0, skipped 1')
  await expect(page.getByTestId('import-outcome')).toContainText('notes.crt')
  // The same file again is already known.
  await page.getByLabel('Certificate files').setInputFiles(files.slice(0, 1))
  await page.getByRole('button', { name: 'Import files' }).click()
  await expect(page.getByTestId('import-outcome')).toContainText('Imported 0, already known 1')
  const table = page.getByRole('table', { name: 'Imported certificates' })
  await expect(table.locator('tr', { hasText: 'bought-elsewhere.example.test' })).toHaveCount(1)
  await shot(page, 'imports')

  await nav(page, 'Expiring')
  const report = page.getByRole('table', { name: 'Certificates ending soon' })
  await expect(report).toContainText('bought-elsewhere.example.test')
  await expect(report).toContainText('none planned')
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Download CSV' }).click()
  const csv = readFileSync((await (await download).path()) as string, 'utf8')
  expect(csv.split('\n')[0]).toBe('kind,reference,domain,valid_till,days_left,renewal_planned_at,reseller,contact')
  expect(csv).toContain('bought-elsewhere.example.test')
  await shot(page, 'expiring-report')

  await nav(page, 'Imported certificates')
  await page.getByRole('button', { name: 'Renew with CertDesk: bought-elsewhere.example.test' }).click()
  const offer = page.getByRole('region', { name: 'Renewal offer' })
  await expect(offer).toContainText(/\$\d+\.\d\d/)
  await offer.getByRole('button', { name: 'Order and pay from credit' }).click()
  await expect(page.locator('h1', { hasText: 'bought-elsewhere.example.test' })).toBeVisible()
  await nav(page, 'Imported certificates')
  await expect(table.locator('tr', { hasText: 'bought-elsewhere.example.test' })).toContainText('renewal ordered')
})

test("a Let's Encrypt folder comes in through its links, with its key, and links out of it are never followed", async ({
  page
}) => {
  const ca = await createTestCa()
  const current = await ca.issue('le-site.example.test', new Date(Date.now() - 86_400_000), 90)
  const earlier = await ca.issue('le-site.example.test', new Date(Date.now() - 70 * 86_400_000), 90)
  const outside = await ca.issue('outside.example.test', new Date(Date.now() - 86_400_000), 90)
  const root = mkdtempSync(join(tmpdir(), 'certdesk-e2e-le-'))
  try {
    // certbot's layout: live/<name>/*.pem link into archive/<name>/, which keeps earlier certificates.
    const le = join(root, 'letsencrypt')
    const { live } = writeLetsEncrypt(le, 'le-site.example.test', [earlier, current])
    writeFileSync(join(root, 'outside.pem'), outside.certificatePem)
    symlinkSync('../../../outside.pem', join(live, 'planted.pem'))
    symlinkSync('/etc/passwd', join(le, 'passwd.pem'))

    await page.goto(`${process.env.CERTDESK_E2E_BASE}/ui/`)
    await nav(page, 'Imported certificates')
    const outcome = page.getByTestId('import-outcome')
    // live/ alone, links not followed: nothing imported, and each link says why.
    await page.getByLabel('Folder on this machine').fill(join(le, 'live'))
    await page.getByRole('button', { name: 'Scan folder' }).click()
    await expect(outcome).toContainText('Imported 0')
    await expect(outcome).toContainText(`${live}/cert.pem`)
    await expect(outcome).toContainText('not followed')

    // The whole Let's Encrypt folder, links inside it followed, keys kept.
    await page.getByLabel('Folder on this machine').fill(le)
    await page.getByLabel(/Follow links inside the folder/).check()
    await page.getByLabel(/Keep the private keys found/).check()
    await page.getByRole('button', { name: 'Scan folder' }).click()
    await expect(outcome).toContainText('Imported 1,')
    await expect(outcome).toContainText('Private keys kept: 1.')
    await expect(outcome).toContainText('leads out of the folder')
    await expect(outcome).toContainText(`${le}/passwd.pem`)
    await expect(outcome).not.toContainText('Keys left where they are')
    const table = page.getByRole('table', { name: 'Imported certificates' })
    await expect(table.locator('tr', { hasText: 'le-site.example.test' })).toHaveCount(1)
    await expect(table.locator('tr', { hasText: 'le-site.example.test' })).toContainText(`${live}/cert.pem`)
    await expect(table).not.toContainText('outside.example.test')
    await shot(page, 'imports-letsencrypt')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
