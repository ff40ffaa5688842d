import { expect, test } from '@playwright/test'
import { base, nav, openApp, shot } from './support'

test('an API key is created, shown once, works against the reseller API, and stops working when revoked', async ({
  page
}) => {
  await openApp(page)
  await nav(page, 'API & integrations')
  await expect(page.getByText(`${base()}`)).toBeVisible()
  await page.getByLabel('Key label').fill('deploy script')
  await page.getByRole('button', { name: 'Create API key' }).click()
  const key = (await page.getByTestId('new-api-key').textContent()) ?? ''
  expect(key).toMatch(/^cdk_[A-Za-z0-9_-]{43}$/)
  await shot(page, 'api-keys')

  const account = await fetch(`${base()}/account`, { headers: { 'x-api-key': key } })
  expect(account.status).toBe(200)
  expect(((await account.json()) as { reseller: { name: string } }).reseller.name).toBe('Demo Reseller')

  // Shown once: after "Done" and a reload only the prefix is on screen.
  await page.getByRole('button', { name: 'Done' }).click()
  await page.reload()
  await nav(page, 'API & integrations')
  const row = page.locator('tr', { hasText: 'deploy script' })
  await expect(row).toContainText(key.slice(0, 10))
  expect(await page.content()).not.toContain(key)

  await row.getByRole('button', { name: 'Revoke' }).click()
  await expect(row).toContainText('revoked')
  const after = await fetch(`${base()}/account`, { headers: { 'x-api-key': key } })
  expect(after.status).toBe(401)
})
