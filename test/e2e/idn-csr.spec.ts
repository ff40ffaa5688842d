/**
 * An internationalised name typed into the order's CSR step goes into the CSR as its A-label
 * (RFC 5890), so it is validated and issued like any other name: `shop.example, bücher.example`
 * gives a certificate naming xn--bcher-kva.example, and the page shows it as bücher.example with
 * the A-label beside it. A pasted CSR that carries the name as raw bytes is refused, and the
 * page says which name and what to write instead.
 */
import { expect, test } from '@playwright/test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { x509Csr } from '../support/csr'
import { dcvServersForFile, orderMultiDomain, pointChecksAt, resetChecks, shot } from './support'

const servers = dcvServersForFile()

const openssl = (args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8' })

test('an IDN typed in the CSR step is issued as its A-label and shown in Unicode', async ({ page }, info) => {
  await pointChecksAt(page, servers.dns, servers.web)
  await orderMultiDomain(page, 'shop.example')

  await page.getByLabel('Names').fill('shop.example, bücher.example')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  const decoded = page.getByTestId('csr-decoded')
  await expect(decoded).toContainText('Signaturevalid')
  await expect(decoded).toContainText('bücher.example (xn--bcher-kva.example)')
  await expect(page.locator('.warn')).toHaveCount(0)
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()

  // Both names wait for validation: none was left out.
  const names = ['shop.example', 'xn--bcher-kva.example']
  for (const name of names) await expect(page.locator(`.name-check[data-name="${name}"]`)).toBeVisible()
  await expect(page.locator('.name-check')).toHaveCount(2)
  await expect(page.locator('.name-check[data-name="xn--bcher-kva.example"] .name-head')).toContainText(
    'bücher.example (xn--bcher-kva.example)'
  )
  await shot(page, 'idn-validation')
  for (const name of names) {
    const box = page.locator(`.name-check[data-name="${name}"]`)
    const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
    expect(url.hostname).toBe(name)
    servers.web.put(name, url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
  }
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(page.locator('h1')).toContainText('completed')
  await expect(page.getByTestId('cert-facts')).toContainText('bücher.example (xn--bcher-kva.example)')

  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Certificate', exact: true }).click()
  ])
  const certPath = info.outputPath('idn.crt.pem')
  await dl.saveAs(certPath)
  const text = openssl(['x509', '-in', certPath, '-noout', '-text'])
  expect(text).toContain('DNS:xn--bcher-kva.example')
  expect(text).toContain('DNS:shop.example')
  expect(readFileSync(certPath).includes(Buffer.from('b\xfccher', 'latin1'))).toBe(false)
  await resetChecks(page)
})

test('a pasted CSR with the IDN as raw bytes is refused, and the page names the name', async ({ page }) => {
  await pointChecksAt(page, servers.dns, servers.web)
  await orderMultiDomain(page, 'raw.example')
  // What a generator that does not convert writes: ü as the single byte 0xFC.
  const csr = await x509Csr(['raw.example', 'bücher.example'])
  await page.getByRole('button', { name: 'Paste a CSR' }).click()
  await page.getByLabel('CSR (PEM)').fill(csr)
  await expect(page.getByTestId('csr-decoded')).toContainText('valid')
  await expect(page.getByTestId('csr-name-warning')).toContainText('"bücher.example"')
  await expect(page.getByTestId('csr-name-warning')).toContainText('xn--bcher-kva.example')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  const error = page.locator('.error-box')
  await expect(error).toContainText('"bücher.example"')
  await expect(error).toContainText('xn--bcher-kva.example')
  await shot(page, 'idn-refused')
  // Still waiting for a CSR: nothing was submitted.
  await expect(page.locator('.name-check')).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Submit CSR' })).toBeVisible()
  await resetChecks(page)
})
