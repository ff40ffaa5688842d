/** Browser mode's own guard: the one-time link, the session cookie, the CSP, no key in the page. */
import { expect, test } from '@playwright/test'
import { request } from 'node:http'
import { base, nav, openApp, shot } from './support'

test('the printed link works once; without the session cookie the UI and the RPC are closed', async ({ browser }) => {
  const fresh = await browser.newContext({ storageState: { cookies: [], origins: [] } })
  const page = await fresh.newPage()
  const used = await page.goto(process.env.CERTDESK_E2E_LOGIN!)
  expect(used?.status()).toBe(401)
  await expect(page.getByRole('heading')).toHaveText('This sign-in link is not valid any more')
  const ui = await page.goto(`${base()}/ui/`)
  expect(ui?.status()).toBe(401)
  const rpc = await fetch(`${base()}/rpc/listResellers`, {
    method: 'POST',
    headers: { origin: base(), 'content-type': 'application/json' },
    body: '{"args":[]}'
  })
  expect(rpc.status).toBe(401)
  // A rebinding page sends its own Host: refused before any session check.
  // (fetch does not let a caller set Host; node:http does, as a rebinding browser would send it.)
  const rebound = await new Promise<number>((resolve, reject) => {
    const u = new URL(`${base()}/rpc/listResellers`)
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { host: 'evil.example', 'content-type': 'application/json' }
      },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      }
    )
    req.on('error', reject)
    req.end('{"args":[]}')
  })
  expect(rebound).toBe(403)
  await fresh.close()
})

test('the session cookie is HttpOnly and SameSite=Strict, the CSP is strict, and the page holds no secret', async ({
  page,
  context
}) => {
  await openApp(page)
  const cookie = (await context.cookies()).find((c) => c.name === 'certdesk_session')
  expect(cookie?.httpOnly).toBe(true)
  expect(cookie?.sameSite).toBe('Strict')
  const res = await page.request.get(`${base()}/ui/`)
  expect(res.headers()['content-security-policy']).toContain("script-src 'self'")
  expect(res.headers()['content-security-policy']).not.toContain('unsafe')
  expect(await page.evaluate('document.cookie')).toBe('')
  expect(await page.evaluate('JSON.stringify(localStorage)')).not.toMatch(/cdk_|PRIVATE KEY/)

  await nav(page, 'Settings')
  await expect(page.getByText('browser mode')).toBeVisible()
  // A bad setting shows the core's message next to its field and keeps what was typed.
  await page.getByLabel('SMTP relay').fill('smtp://user:secret@127.0.0.1:2525')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('problem-smtpUrl')).toContainText('must not carry a user or password')
  await expect(page.getByTestId('problem-smtpUrl')).not.toContainText('user:secret')
  await expect(page.getByLabel('SMTP relay')).toHaveValue('smtp://user:secret@127.0.0.1:2525')
  await page.getByLabel('SMTP relay').fill('')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok')).toContainText('Settings saved')

  // Adding a reseller account: a bad email is refused and kept; a good one becomes the account acted for.
  await page.getByLabel('Reseller name').fill('Northwind')
  await page.getByLabel('Reseller email').fill('ops-at-northwind')
  await page.getByRole('button', { name: 'Add reseller' }).click()
  await expect(page.locator('.error-box')).toContainText('is not an email address')
  await expect(page.getByLabel('Reseller name')).toHaveValue('Northwind')
  await page.getByLabel('Reseller email').fill('ops@northwind.test')
  await page.getByLabel('Reseller discount').fill('5')
  await page.getByRole('button', { name: 'Add reseller' }).click()
  await expect(page.locator('#acting-for')).toHaveValue(/\d+/)
  await expect(page.locator('#acting-for option:checked')).toHaveText('Northwind')
  await expect(page.getByTestId('balance')).toHaveText('$0.00')
  await expect(page.locator('.sidebar')).toContainText('discount 5%')
  // Its balance is 0: the wizard says so before submitting, and on invoice is still possible.
  await nav(page, 'Catalogue')
  await page.locator('tr[data-product="PositiveSSL"]').getByRole('button', { name: 'Order' }).click()
  await page.locator('input[name="domain"]').fill('north.example.test')
  await expect(page.locator('p.warn[role="alert"]')).toContainText('does not cover')
  await expect(page.locator('.quote')).toContainText('reseller discount (5%)')
  await expect(page.getByRole('button', { name: /Place order for/ })).toBeDisabled()
  await page.getByLabel('On invoice (due in 14 days)').check()
  await expect(page.getByRole('button', { name: /Place order for/ })).toBeEnabled()
  await nav(page, 'Settings')
  await page.locator('#acting-for').selectOption({ label: 'Demo Reseller' })

  await nav(page, 'ACME')
  await expect(page.getByRole('heading', { name: 'ACME subscriptions' })).toBeVisible()
  await shot(page, 'acme')
})
