/**
 * The deploy-target form's key file and verify fields: the core's refusal (a HAProxy key not at
 * <crt>.key, a verify host that is not host:port) is shown with the typed values kept, and the
 * accepted values are listed on the target.
 */
import { expect, test } from '@playwright/test'
import { openApp, orderFromCatalogue } from './support'

test('a folder target takes the key file the server reads and a command target the servers to verify', async ({
  page
}) => {
  await openApp(page)
  await orderFromCatalogue(page, 'keyfile.example.test')
  const card = page.getByTestId('deploy-targets')

  await card.getByLabel('Folder path').fill('/srv/certs/keyfile')
  await card.getByLabel('Layout').selectOption('haproxy')
  await card.getByLabel('Key file').fill('/srv/keys/keyfile.key')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('.error-box')).toContainText(
    'HAProxy reads a separate key only from /srv/certs/keyfile/haproxy.pem.key'
  )
  await expect(card.getByLabel('Key file')).toHaveValue('/srv/keys/keyfile.key')
  await card.getByLabel('Key file').fill('/srv/certs/keyfile/haproxy.pem.key')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('tr[data-target="folder"]')).toContainText('key file /srv/certs/keyfile/haproxy.pem.key')

  await card.getByLabel('Target kind').selectOption('command')
  await card.getByLabel('Command').fill('systemctl reload haproxy')
  await card.getByLabel('Verify at').fill('$(reboot):443')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('.error-box')).toContainText('is not a host name or IP address')
  await expect(card.getByLabel('Verify at')).toHaveValue('$(reboot):443')
  await card.getByLabel('Verify at').fill('127.0.0.1:8443, [::1]:443')
  await card.getByRole('button', { name: 'Add target' }).click()
  await expect(card.locator('tr[data-target="command"]')).toContainText('verify 127.0.0.1:8443, [::1]:443')
  await expect(card.locator('.error-box')).toHaveCount(0)
})
