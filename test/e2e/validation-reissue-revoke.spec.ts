/**
 * One multi-domain order for an IDN (bücher.example), walked as an admin would: each name
 * validated by its own method (HTTP file for the host, DNS for the wildcard, email at a parent
 * domain of another name, approvers up to the registrable domain and never the public suffix),
 * one row switched to DNS on its own; a reissue through the dialog (same key with a name added
 * and one removed, then a new RSA key), the PFX export for older Windows, and a revocation with
 * its reason that every view then shows: the order page, the orders list, the certificate
 * status, the installation verdict of a server still presenting it, and the CRL. Screenshots at
 * 1024×700 and 1920×1080 of the mixed validation, the reissue dialog and the revoke dialog; axe
 * finds nothing serious on them.
 */
import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Page } from '@playwright/test'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer as tlsServer, type Server } from 'node:tls'
import type { AddressInfo } from 'node:net'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { base, nav, pointChecksAt, resetChecks, saveDownload, shot } from './support'

test.describe.configure({ mode: 'serial' })

const APEX = 'xn--bcher-kva.example'
const NAMES = [APEX, `www.${APEX}`, `*.${APEX}`, 'mail.shop.co.uk']
/** Names as the certificate card shows them: an IDN in Unicode with its A-label beside it. */
const shown = (names: string[]): string =>
  names.map((n) => (n.includes('xn--') ? `${n.replace('xn--bcher-kva', 'bücher')} (${n})` : n)).join(', ')
const SIZES = [
  { width: 1024, height: 700 },
  { width: 1920, height: 1080 }
]

let dns: DnsServer
let web: WebServer
let orderPath = ''
let served: Server | null = null

test.beforeAll(async () => {
  dns = await startDns()
  web = await startWeb()
})
test.afterAll(async () => {
  await new Promise((r) => (served ? served.close(r) : r(null)))
  await web?.close()
  await dns?.close()
})

const openssl = (args: string[]): string =>
  execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

/** A screenshot at each size the admin's screens come in, then back to the default size. */
async function shots(page: Page, name: string): Promise<void> {
  const before = page.viewportSize()
  for (const size of SIZES) {
    await page.setViewportSize(size)
    await shot(page, `${name}-${size.width}x${size.height}`)
  }
  if (before) await page.setViewportSize(before)
}

/** axe-core on what is on screen: nothing serious or critical. */
async function axeClean(page: Page, include?: string): Promise<void> {
  const builder = new AxeBuilder({ page })
  if (include) builder.include(include)
  const results = await builder.analyze()
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([])
}

const save = saveDownload

const row = (page: Page, name: string) => page.locator(`.name-check[data-name="${name}"]`)

async function publishFile(page: Page, name: string): Promise<void> {
  const box = row(page, name)
  const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').trim())
  web.put(name, url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
}

async function publishRecord(page: Page, name: string): Promise<void> {
  const box = row(page, name)
  await dns.setCname(
    ((await box.getByTestId('dns-record').getByTestId('dns-name').textContent()) ?? '').trim(),
    ((await box.getByTestId('dns-record').getByTestId('dns-value').textContent()) ?? '').trim()
  )
}

test('each name is validated by its own method, and email approvers go up to the registrable domain', async ({
  page
}) => {
  test.setTimeout(180_000)
  await pointChecksAt(page, dns, web)
  try {
    // A multi-domain order for an IDN, typed as people write it, with one wildcard name paid for.
    await nav(page, 'Catalogue')
    await page.locator('tr[data-product="PositiveSSL Multi-Domain"]').getByRole('button', { name: 'Order' }).click()
    await page.locator('input[name="domain"]').fill('bücher.example')
    await page.getByLabel('Wildcard SANs').fill('1')
    await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
    await page.getByRole('button', { name: /Place order for/ }).click()
    await expect(page.locator('h1')).toContainText('bücher.example')
    orderPath = new URL(page.url()).hash

    await page.getByLabel('Names', { exact: true }).fill(NAMES.join(' '))
    await page.getByRole('button', { name: 'Generate key and CSR' }).click()
    await expect(page.getByTestId('csr-decoded')).toContainText('mail.shop.co.uk')
    // A file for the order, DNS for the wildcard (a file cannot validate it), email for the other domain.
    await expect(page.getByLabel('Validation method')).toHaveValue('http')
    await expect(page.getByLabel(`Method for *.${APEX}`)).toHaveValue('dns')
    await expect(page.getByLabel(`Method for *.${APEX}`).locator('option')).toHaveText(['DNS CNAME', 'Email'])
    await page.getByLabel('Method for mail.shop.co.uk').selectOption('email')
    const approvers = page.getByLabel('Approver for mail.shop.co.uk').locator('option')
    await expect(approvers).toHaveCount(10)
    await expect(approvers.nth(0)).toHaveText('admin@mail.shop.co.uk')
    await expect(approvers.nth(9)).toHaveText('postmaster@shop.co.uk')
    expect((await approvers.allTextContents()).filter((a) => /@co\.uk$|@uk$/.test(a))).toEqual([])
    await page.getByLabel('Approver for mail.shop.co.uk').selectOption('hostmaster@shop.co.uk')
    await page.getByRole('button', { name: 'Submit CSR' }).click()

    await expect(page.getByTestId('dcv-summary')).toHaveText('0 of 4 names valid · HTTP 2, DNS 1, EMAIL 1')
    await expect(row(page, APEX).getByLabel(`Method for ${APEX}`, { exact: true })).toHaveValue('http')
    await expect(row(page, `*.${APEX}`).getByTestId('dns-record').getByTestId('dns-name')).toHaveText(
      /^_[0-9a-f]{32}\.xn--bcher-kva\.example$/
    )
    await expect(row(page, 'mail.shop.co.uk')).toContainText('Approval email to hostmaster@shop.co.uk, sent')

    // One row moves to DNS on its own; the others keep what they have (the message already sent).
    await row(page, `www.${APEX}`).getByLabel(`Method for www.${APEX}`, { exact: true }).selectOption('dns')
    await row(page, `www.${APEX}`)
      .getByRole('button', { name: `Apply method for www.${APEX}` })
      .click()
    await expect(page.getByTestId('dcv-summary')).toHaveText('0 of 4 names valid · HTTP 1, DNS 2, EMAIL 1')
    await expect(row(page, `www.${APEX}`).getByTestId('dns-record').getByTestId('dns-name')).toBeVisible()
    await expect(row(page, APEX).getByTestId('dcv-url')).toBeVisible()
    await expect(page.locator('.email-approval summary')).toContainText('Approval messages (1)')

    // The validation card from its heading down, as the admin scrolls to it.
    await page
      .getByRole('heading', { name: 'Domain validation' })
      .evaluate((h) => (h.closest('section') ?? h).scrollIntoView({ block: 'start' }))
    await shots(page, 'order-mixed-validation')
    await axeClean(page)

    await publishFile(page, APEX)
    await publishRecord(page, `www.${APEX}`)
    await publishRecord(page, `*.${APEX}`)
    await page.getByRole('button', { name: 'Re-check now' }).click()
    await expect(page.getByTestId('dcv-summary')).toHaveText('3 of 4 names valid · HTTP 1, DNS 2, EMAIL 1')
    const message = row(page, 'mail.shop.co.uk').locator('.approval-message')
    await message.locator('summary').click()
    const code = /approval code to your provider:\s+(\S+)/.exec((await message.locator('pre').textContent()) ?? '')?.[1]
    await row(page, 'mail.shop.co.uk')
      .getByLabel('Approval code for mail.shop.co.uk')
      .fill(code ?? '')
    await row(page, 'mail.shop.co.uk').getByRole('button', { name: 'Approve mail.shop.co.uk' }).click()
    await expect(page.locator('h1')).toContainText('completed')
    await expect(page.getByTestId('cert-facts')).toContainText(shown(NAMES))
  } finally {
    await resetChecks(page)
  }
})

test('the reissue dialog: same key with a name added and one removed, then a new RSA key', async ({ page }, info) => {
  test.setTimeout(180_000)
  expect(orderPath).not.toBe('')
  await pointChecksAt(page, dns, web)
  try {
    await page.goto(`${base()}/ui/${orderPath}`)
    await expect(page.locator('h1')).toContainText('completed')
    // A deploy target, so the confirmation can say where the new certificate goes.
    const card = page.getByTestId('deploy-targets')
    const folder = info.outputPath('site')
    await card.getByLabel('Folder path').fill(folder)
    await card.getByRole('button', { name: 'Add target' }).click()
    await expect(card.locator('tr[data-target="folder"]')).toContainText(folder)
    const firstCert = await save(page, info, 'Certificate', 'first.pem')

    await page.getByRole('button', { name: 'Reissue…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Reissue certificate' })
    await expect(dialog.getByLabel('Keep the current key')).toBeChecked()
    const plan = dialog.getByTestId('reissue-plan')
    await expect(plan).toContainText('No domain validation is needed')
    // Within what was paid: two extra names (www is free) and one wildcard.
    await expect(dialog.getByTestId('san-allowance')).toContainText(
      'Additional names: 1 of 2 paid for · wildcard names: 1 of 1'
    )
    await dialog.getByLabel('Add a name').fill('shop.example.net')
    await dialog.getByRole('button', { name: 'Add', exact: true }).click()
    await dialog.getByLabel('Add a name').fill('blog.example.net')
    await dialog.getByRole('button', { name: 'Add', exact: true }).click()
    await expect(dialog.locator('.error-box')).toContainText('asks for 3 additional name(s) but the order covers 2')
    await expect(dialog.getByRole('button', { name: 'Reissue now' })).toBeDisabled()
    await dialog.getByRole('button', { name: 'Remove mail.shop.co.uk' }).click()
    await dialog.getByRole('button', { name: 'Remove blog.example.net' }).click()
    await expect(dialog.getByTestId('san-allowance')).toContainText('Additional names: 1 of 2 paid for')
    await expect(plan).toContainText('added: shop.example.net; removed: mail.shop.co.uk')
    await expect(plan).toContainText('Validation first: shop.example.net by HTTP file')
    await expect(plan).toContainText(`Then deployed to: folder ${folder}`)
    await expect(plan).toContainText(
      /The current certificate \(serial [0-9A-F]{16}…\) stays valid until \d{4}-\d{2}-\d{2}; a reissue does not revoke it/
    )
    await expect(plan).toContainText('The current private key is used again.')
    await shots(page, 'reissue-dialog')
    await axeClean(page, '[data-testid="reissue-dialog"]')
    await dialog.getByRole('button', { name: 'Reissue now' }).click()
    await expect(dialog).toHaveCount(0)

    await expect(page.locator('h1')).toContainText('validation pending')
    // Only the new name waits; the others keep their fresh validations (BR §4.2.1 reuse).
    await expect(page.getByTestId('dcv-summary')).toHaveText('3 of 4 names valid · HTTP 2, DNS 2')
    await publishFile(page, 'shop.example.net')
    await page.getByRole('button', { name: 'Re-check now' }).click()
    await expect(page.locator('h1')).toContainText('completed')
    await expect(page.getByTestId('cert-facts')).toContainText(
      shown([APEX, `www.${APEX}`, `*.${APEX}`, 'shop.example.net'])
    )
    // The same key: the new certificate carries the first one's public key.
    const secondCert = await save(page, info, 'Certificate', 'second.pem')
    const pub = (p: string): string => openssl(['x509', '-in', p, '-noout', '-pubkey'])
    expect(pub(secondCert)).toBe(pub(firstCert))

    // A new key of another type: nothing to validate again, issued at once.
    await page.getByRole('button', { name: 'Reissue…' }).click()
    await dialog.getByLabel('New key', { exact: true }).check()
    await dialog.getByLabel('New key type').selectOption('RSA-3072')
    await expect(plan).toContainText('A new RSA 3072 private key is generated on this machine')
    await expect(plan).toContainText('No domain validation is needed')
    await dialog.getByRole('button', { name: 'Reissue now' }).click()
    await expect(dialog).toHaveCount(0, { timeout: 60_000 })
    await expect(page.getByTestId('cert-facts')).toContainText('RSA 3072')
    await expect(page.getByTestId('history').locator('li')).toHaveCount(3)
  } finally {
    await resetChecks(page)
  }
})

test('the PFX for older Windows is labelled as such and opens with openssl -legacy; AES-256 stays the default', async ({
  page
}, info) => {
  await page.goto(`${base()}/ui/${orderPath}`)
  await expect(page.getByTestId('cert-facts')).toContainText('RSA 3072')
  await expect(page.getByLabel('AES-256 (recommended', { exact: false })).toBeChecked()
  await page.getByLabel('Export password (for the key or the PFX)').fill('old windows')
  const modern = await save(page, info, 'PFX / PKCS#12', 'modern.pfx')
  await page.getByLabel('Legacy 3DES/SHA-1 (compatibility for Windows Server 2016 and older)').check()
  await expect(page.getByRole('note').filter({ hasText: 'Legacy encryption is weaker' })).toBeVisible()
  const legacy = await save(page, info, 'PFX / PKCS#12', 'legacy.pfx')
  const infoOf = (path: string, legacyFlag: boolean): string => {
    const r = spawnSync(
      'openssl',
      ['pkcs12', ...(legacyFlag ? ['-legacy'] : []), '-info', '-in', path, '-passin', 'pass:old windows', '-noout'],
      { encoding: 'utf8' }
    )
    return `${r.stdout}${r.stderr}`
  }
  expect(infoOf(modern, false)).toMatch(/PBES2, PBKDF2, AES-256-CBC/)
  const old = infoOf(legacy, true)
  expect(old).toMatch(/MAC: sha1/)
  expect(old).toMatch(/Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC/)
  const pem = openssl(['pkcs12', '-legacy', '-in', legacy, '-passin', 'pass:old windows', '-nodes'])
  expect(pem).toContain('BEGIN PRIVATE KEY')
  expect(pem).toContain(`friendlyName: ${APEX}`)
})

test('a revoked certificate reads as revoked everywhere and is never deployed again', async ({ page }, info) => {
  test.setTimeout(180_000)
  await page.goto(`${base()}/ui/${orderPath}`)
  await expect(page.locator('h1')).toContainText('completed')
  const certPath = await save(page, info, 'Certificate', 'revoked.pem')
  const chainPath = await save(page, info, 'Chain', 'revoked-chain.pem')
  await page.getByLabel('Without a password').check()
  const keyPath = await save(page, info, 'Private key (unencrypted)', 'revoked.key')
  const serial = openssl(['x509', '-in', certPath, '-noout', '-serial'])
    .trim()
    .replace(/^serial=/, '')
  // The certificate names CertDesk's CRL, and the page shows where.
  await expect(page.getByTestId('cert-facts')).toContainText(`${base()}/ca/local-ca.crl`)

  // An earlier certificate of the order, replaced by the reissues but still valid, is revoked
  // from the list of issued certificates; the current one is not touched.
  const history = page.getByTestId('history').locator('li')
  const first = history.last()
  await first.getByRole('button', { name: /^Revoke… earlier certificate/ }).click()
  const dialog = page.getByRole('dialog', { name: 'Revoke certificate' })
  await expect(dialog.getByTestId('revoke-plan')).toContainText('The current certificate of the order is not touched.')
  await dialog.getByLabel('Superseded: a new certificate replaces it').check()
  await dialog.getByRole('button', { name: 'Revoke certificate' }).click()
  await expect(dialog).toHaveCount(0)
  await expect(first).toContainText('revoked: superseded')
  await expect(page.getByTestId('cert-revoked')).toHaveCount(0)
  await expect(page.locator('h1')).not.toContainText('certificate revoked')

  await page.getByRole('button', { name: 'Revoke…', exact: true }).click()
  await expect(dialog).toContainText(serial)
  await dialog.getByLabel('Key compromise: the private key was lost, stolen or exposed').check()
  const plan = dialog.getByTestId('revoke-plan')
  await expect(plan).toContainText("CertDesk's local CA lists it on its certificate revocation list at once")
  await expect(plan).toContainText('It is never deployed again')
  await expect(plan).toContainText('Reissue with a new key to replace it')
  await expect(plan).toContainText('A revocation cannot be undone.')
  await shots(page, 'revoke-dialog')
  await axeClean(page, '[data-testid="revoke-dialog"]')
  await dialog.getByRole('button', { name: 'Revoke certificate' }).click()
  await expect(dialog).toHaveCount(0)

  // The order page: the certificate, its history entry and the header.
  await expect(page.getByTestId('cert-revoked')).toContainText(
    '(key compromise). Do not install it; reissue to replace it.'
  )
  await expect(page.getByTestId('expiry')).toContainText('revoked')
  await expect(history.first()).toContainText('revoked: key compromise')
  await expect(page.locator('h1')).toContainText('certificate revoked')
  await expect(page.getByRole('button', { name: 'Revoke…', exact: true })).toHaveCount(0)
  await axeClean(page)

  // Never deployed again: "Deploy now" is refused with the reason.
  const card = page.getByTestId('deploy-targets')
  await card.getByRole('button', { name: 'Deploy now' }).click()
  await expect(card.locator('.error-box')).toContainText(
    /its certificate [0-9A-F]+ was revoked on .* \(keyCompromise\); reissue it first/
  )

  // A server still presenting it: the installation verdict says so.
  served = tlsServer({
    key: readFileSync(keyPath),
    cert: readFileSync(certPath, 'utf8') + readFileSync(chainPath, 'utf8')
  })
  const port = await new Promise<number>((r) =>
    served?.listen(0, '127.0.0.1', () => r((served?.address() as AddressInfo).port))
  )
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Installed where' }) })
  await panel.getByLabel('Host name').fill(APEX)
  await panel.getByLabel('Port').fill(String(port))
  await panel.getByLabel('Address (optional)').fill('127.0.0.1')
  await panel.getByRole('button', { name: 'Add endpoint' }).click()
  await expect(panel.getByRole('button', { name: `Remove endpoint ${APEX}:${port}` })).toBeVisible()
  await panel.getByRole('button', { name: 'Check now' }).click()
  await expect(panel.locator('tr', { hasText: `${APEX}:${port}` })).toContainText('serving a revoked certificate', {
    timeout: 30_000
  })
  await expect(panel.locator('tr', { hasText: `${APEX}:${port}` })).toContainText('(keyCompromise)')

  // The orders list and the CRL the certificate names.
  await nav(page, 'Orders')
  const listed = page.locator('[data-order]', { hasText: 'bücher.example' }).first()
  await expect(listed).toContainText('certificate revoked')
  // At the narrowest width the list is made for, "certificate revoked" is read, not cut short.
  await page.setViewportSize({ width: 1024, height: 700 })
  const badge = listed.getByText('certificate revoked')
  await expect(badge).toBeVisible()
  // Its line cuts what runs past its end (an ellipsis): the badge's box must end inside it.
  const [b, line] = await Promise.all([badge.boundingBox(), badge.locator('xpath=..').boundingBox()])
  expect(b!.x + b!.width, 'the "certificate revoked" badge is cut at 1024 px').toBeLessThanOrEqual(
    line!.x + line!.width + 1
  )
  await page.setViewportSize({ width: 1360, height: 860 })
  await shots(page, 'orders-revoked')
  const crl = Buffer.from(await (await fetch(`${base()}/ca/local-ca.crl`)).arrayBuffer())
  const crlPath = info.outputPath('local-ca.crl')
  writeFileSync(crlPath, crl)
  const text = openssl(['crl', '-inform', 'DER', '-in', crlPath, '-noout', '-text'])
  expect(text).toContain(`Serial Number: ${serial}`)
  expect(text).toMatch(/CRL Reason Code:\s+Key Compromise/)
})
