/**
 * Alerts as the admin sets them up: from the sidebar, a rule's threshold changed, a Slack
 * channel, a signed webhook (its secret shown once) and an email channel with a login added, a
 * test message sent to each through real receivers on loopback, and the deliveries listed.
 */
import { expect, test } from '@playwright/test'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { startJsonSink, startMailSink, type JsonSink, type MailSink } from '../support/alert-sinks'
import { nav, openApp, shot } from './support'

const CLI = join(__dirname, '..', '..', 'bin', 'certdesk.cjs')
let slack: JsonSink
let mail: MailSink

/** The admin's switch for receivers on this machine, set on the running server's store. */
function allowPrivate(on: boolean): void {
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'admin',
      '--data-dir',
      process.env.CERTDESK_E2E_DATA_DIR!,
      'settings',
      'set',
      'alerts.allow_private_addresses',
      String(on)
    ],
    { encoding: 'utf8' }
  )
  expect(r.status, r.stderr).toBe(0)
}

test.beforeAll(async () => {
  allowPrivate(true)
  ;[slack, mail] = await Promise.all([
    startJsonSink('/services/T7/B7/e2esecret'),
    startMailSink('certdesk', 'mail pass; "x"')
  ])
})
test.afterAll(async () => {
  allowPrivate(false)
  await Promise.all([slack?.close(), mail?.close()])
})

test('sets up alert channels, sends a test to each and lists the deliveries', async ({ page }) => {
  await openApp(page)
  await nav(page, 'Alerts')
  await expect(page).toHaveURL(/#\/alerts$/)
  await expect(page.locator('h1')).toHaveText('Alerts')
  const rules = page.locator('section', { has: page.getByRole('heading', { name: 'Rules' }) }).locator('tbody tr')
  await expect(rules).toHaveCount(6)
  await page.getByLabel('Validation wait in hours').fill('24')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Rule saved')
  await expect(page.getByLabel('Validation wait in hours')).toHaveValue('24')

  const form = page.getByRole('form', { name: 'Add a channel' })
  await form.getByLabel('Kind').selectOption('slack')
  await form.getByLabel('Channel name').fill('Slack #certs')
  await form.getByLabel(/webhook URL/).fill(slack.url)
  await form.getByRole('button', { name: 'Add channel' }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Channel Slack #certs added')
  await expect(form.getByLabel('Channel name')).toHaveValue('')

  await form.getByLabel('Kind').selectOption('webhook')
  await form.getByLabel('Channel name').fill('Ticketing')
  await form.getByLabel('Webhook URL').fill('http://127.0.0.1:9/certdesk')
  await form.getByRole('button', { name: 'Add channel' }).click()
  await expect(page.getByRole('status').filter({ hasText: 'Signing secret of Ticketing' })).toContainText(
    /[0-9a-f]{64}/
  )
  await page.getByRole('button', { name: 'Done' }).click()
  await expect(form.getByLabel('Channel name')).toHaveValue('')

  await form.getByLabel('Kind').selectOption('smtp')
  await form.getByLabel('Channel name').fill('Ops mail')
  await form.getByLabel('SMTP host').fill('127.0.0.1')
  await form.getByLabel(/^Port/).fill(String(mail.port))
  await form.getByLabel('Security').selectOption('none')
  await form.getByLabel('User name').fill('certdesk')
  await form.getByLabel(/^Password/).fill('mail pass; "x"')
  await form.getByLabel('From', { exact: true }).fill('CertDesk <certdesk@reseller.test>')
  await form.getByLabel(/^To/).fill('ops@reseller.test')
  await form.getByRole('button', { name: 'Add channel' }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Channel Ops mail added')
  await expect(form.getByLabel('Channel name')).toHaveValue('')

  const channels = page.locator('section', { has: page.getByRole('heading', { name: 'Channels' }) })
  const row = (name: string) => channels.locator('tbody tr', { hasText: name })
  await expect(row('Slack #certs')).toContainText(/127\.0\.0\.1:\d+ \(the URL is in the keychain\)/)
  await expect(channels).not.toContainText('e2esecret')
  await row('Ops mail').getByRole('button', { name: 'Send test' }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Test message sent to Ops mail')
  await row('Slack #certs').getByRole('button', { name: 'Send test' }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Test message sent to Slack #certs')
  await row('Ticketing').getByRole('button', { name: 'Send test' }).click()
  await expect(page.locator('.toast-error').last()).toContainText('not delivered: could not post to 127.0.0.1:9')

  expect(mail.messages).toHaveLength(1)
  expect(mail.messages[0]).toMatchObject({ user: 'certdesk', subject: '[CertDesk] CertDesk test alert' })
  expect(slack.bodies).toHaveLength(1)
  const deliveries = page
    .locator('section', { has: page.getByRole('heading', { name: 'Last deliveries' }) })
    .locator('tbody tr')
  await expect(deliveries).toHaveCount(3)
  await expect(deliveries.nth(0)).toContainText('Ticketing')
  await expect(deliveries.nth(0)).toContainText('pending')
  await expect(deliveries.nth(1)).toContainText('sent')
  await page
    .locator('section', { has: page.getByRole('heading', { name: 'Last deliveries' }) })
    .scrollIntoViewIfNeeded()
  await shot(page, 'alerts')

  // Leave the shared server as it was: the channels go, and with them their keychain entries.
  for (const name of ['Ticketing', 'Slack #certs', 'Ops mail'])
    await row(name).getByRole('button', { name: 'Remove' }).click()
  await expect(channels.locator('tbody tr')).toHaveCount(0)
  await expect(channels).toContainText('No channel yet')
  await page.getByLabel('Validation wait in hours').fill('48')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Rule saved')
})
