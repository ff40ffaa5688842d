/**
 * The order page, walked twice in a row without reloading: CSR, validation, certificate and a
 * PFX download for one order, then the same for a second. Each PFX opens with openssl, holds
 * its own order's key and certificate, and carries friendlyName and localKeyID on both bags
 * (RFC 7292 §4.2, PKCS#9), which Windows needs to pair them.
 */
import { expect, test } from '@playwright/test'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { issueOverHttp, nav, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

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

const LAB = 'Lab use: let validation reach loopback and private addresses'
const openssl = (args: string[], input?: string): string =>
  execFileSync('openssl', args, {
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(input === undefined ? {} : { input })
  })

test('two orders in a row, each through CSR, validation and certificate to a PFX that Windows can pair', async ({
  page
}, info) => {
  await pointChecksAt(page, dns, web)
  await nav(page, 'Settings')
  // The test sites are on loopback: the end-to-end set-up turned the lab switch on.
  await expect(page.getByLabel(LAB)).toBeChecked()

  for (const [i, domain] of ['walk-one.example.test', 'walk-two.example.test'].entries()) {
    await orderFromCatalogue(page, domain)
    await expect(page.getByText('Ordered, waiting for CSR')).toBeVisible()
    await shot(page, `walk-${i + 1}-csr`)
    await issueOverHttp(page, web, [domain, `www.${domain}`])
    await expect(page.locator('.name-check')).toHaveCount(2)
    await expect(page.getByTestId('cert-facts')).toContainText(`www.${domain}`)
    await expect(page.getByTestId('history').locator('li')).toHaveCount(1)
    await shot(page, `walk-${i + 1}-certificate`)

    const password = `walk ${i + 1} pass`
    await page.getByLabel('Export password').fill(password)
    const [dl] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'PFX / PKCS#12', exact: true }).click()
    ])
    expect(dl.suggestedFilename()).toBe(`${domain}.pfx`)
    const pfxPath = info.outputPath(`${domain}.pfx`)
    await dl.saveAs(pfxPath)
    await shot(page, `walk-${i + 1}-pfx`)

    const dump = openssl(['pkcs12', '-info', '-in', pfxPath, '-passin', `pass:${password}`, '-nodes'])
    const bags = dump.split(/^(?=Bag Attributes)/m).filter((b) => b.startsWith('Bag Attributes'))
    const keyBag = bags.find((b) => b.includes('BEGIN PRIVATE KEY'))!
    const leafBag = bags.find((b) => b.includes('BEGIN CERTIFICATE') && b.includes(domain))!
    for (const bag of [keyBag, leafBag]) {
      expect(bag).toContain(`friendlyName: ${domain}`)
      expect(bag).toMatch(/localKeyID: [0-9A-F ]{59}/)
    }
    expect(keyBag.match(/localKeyID: (.*)/)![1]).toBe(leafBag.match(/localKeyID: (.*)/)![1])
    const leafPem = leafBag.slice(leafBag.indexOf('-----BEGIN CERTIFICATE-----'))
    expect(openssl(['x509', '-noout', '-ext', 'subjectAltName'], leafPem)).toContain(`DNS:www.${domain}`)
    const keyPath = info.outputPath(`${domain}.key.pem`)
    writeFileSync(keyPath, keyBag.slice(keyBag.indexOf('-----BEGIN PRIVATE KEY-----')), { mode: 0o600 })
    expect(openssl(['pkey', '-in', keyPath, '-pubout'])).toBe(openssl(['x509', '-noout', '-pubkey'], leafPem))
  }

  await resetChecks(page)
})
