/**
 * Two servers, as a reseller's team runs them: a team server (`certdesk serve --accounts`, its
 * own process and data dir, admins added with the CLI) and the desktop UI of the end-to-end
 * run in Chromium. Admins sign in on the team server's page (with TOTP once set up, a reused
 * code refused), the desktop app connects to the team server and shows which book it is on,
 * each role sees only its actions while raw RPC calls are refused with 403 on the server, and
 * the owner reads what everyone did on the Audit log screen.
 */
import { expect, test, type Browser, type Page } from '@playwright/test'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import jsQR from 'jsqr'
import { base32Decode, hotp, totpStep } from '../../src-main/core/admins/totp'
import { base, holdFirstCall, nav, openApp, shot } from './support'

const ROOT = join(__dirname, '..', '..')
const CLI = join(ROOT, 'bin', 'certdesk.cjs')
const PASSWORD = 'tangerine-kite-harbour-42'

let teamDir: string
let team: ChildProcess
let teamUrl: string
let teamHost: string

function addAdmin(name: string, role: string): void {
  const r = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', teamDir, 'admins', 'add', '--name', name, '--role', role],
    {
      input: `${PASSWORD}\n`,
      encoding: 'utf8'
    }
  )
  if (r.status !== 0) throw new Error(`could not add admin ${name}: ${r.stderr}`)
}

test.beforeAll(async () => {
  teamDir = mkdtempSync(join(tmpdir(), 'certdesk-e2e-team-'))
  for (const [name, role] of [
    ['owen', 'owner'],
    ['oscar', 'operator'],
    ['vera', 'viewer']
  ])
    addAdmin(name, role)
  team = spawn(
    'timeout',
    ['20m', process.execPath, CLI, 'serve', '--accounts', '--demo', '--port', '0', '--data-dir', teamDir],
    {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  let err = ''
  team.stderr?.on('data', (d) => (err += d))
  teamUrl = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the team server printed no address in 30 s: ${err}`)), 30_000)
    team.stdout?.on('data', (d) => {
      out += d
      const m = /admin UI \(sign in with an admin account\) at (http:\/\/\S+)\/ui\//.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    team.on('exit', (code) => reject(new Error(`the team server exited with ${code}: ${err}`)))
  })
  teamHost = new URL(teamUrl).host
})

test.afterAll(async () => {
  const exited = new Promise((r) => team?.once('exit', r))
  team?.kill('SIGTERM')
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
  rmSync(teamDir, { recursive: true, force: true })
})

/** The team server's own page in a browser without any session. */
async function teamPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } })
  const page = await context.newPage()
  await page.goto(`${teamUrl}/ui/`)
  return page
}

async function signInOnPage(page: Page, name: string, password = PASSWORD, code?: string): Promise<void> {
  await page.getByLabel('Admin name').fill(name)
  await page.getByLabel('Password').fill(password)
  if (code) await page.getByLabel(/Code from the authenticator app/).fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

/** A raw RPC call as the given admin, the way a script would send it (the page's Origin and cookie). */
async function rawRpc(name: string, method: string, args: unknown[]): Promise<number> {
  const signIn = await fetch(`${teamUrl}/ui/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: teamUrl },
    body: JSON.stringify({ name, password: PASSWORD })
  })
  expect(signIn.status).toBe(200)
  const cookie = signIn.headers.getSetCookie()[0].split(';')[0]
  const res = await fetch(`${teamUrl}/rpc/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: teamUrl, cookie },
    body: JSON.stringify({ args })
  })
  return res.status
}

/**
 * Runs `steps` with the run's desktop UI connected to the team server as `name`, and always
 * leaves it on its own book again: the run's other files use the same desktop.
 */
async function onTeamBook(page: Page, name: string, steps: () => Promise<void>, password = PASSWORD): Promise<void> {
  await openApp(page)
  try {
    await page.getByRole('link', { name: 'Connect to a team server…' }).click()
    await page.getByLabel('Team server address').fill(teamUrl)
    await page.getByLabel('Admin name').fill(name)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in to the team server' }).click()
    await steps()
  } finally {
    await page.evaluate(() =>
      fetch('/rpc/disconnectTeam', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"args":[]}'
      })
    )
  }
}

test('an admin signs in on the team server’s page; a wrong password is refused, and the book says whose it is', async ({
  browser
}) => {
  const page = await teamPage(browser)
  await expect(page.getByTestId('sign-in')).toBeVisible()
  await shot(page, 'team-sign-in')
  await signInOnPage(page, 'owen', 'not-the-password-at-all')
  await expect(page.locator('.error-box')).toHaveText('could not sign in: wrong name, password or code')
  await expect(page.getByLabel('Password')).toHaveValue('')
  await signInOnPage(page, 'owen')
  await expect(page.getByTestId('book-label')).toHaveText(`Team: ${teamHost} as owen (owner)`)
  await expect(page.getByTestId('balance')).toBeVisible()
  await expect(page.locator('.sidebar').getByText('Admins', { exact: true })).toBeVisible()
  await shot(page, 'team-owner-dashboard')
  // The Admins screen lists the accounts the CLI made.
  await nav(page, 'Admins')
  await expect(page.getByTestId('admins-table').locator('tr[data-admin]')).toHaveCount(3)
  await expect(page.locator('tr[data-admin="owen"]')).toContainText('(you)')
  await page.context().close()
})

test('the desktop app connects to the team server as an operator: no money or key actions, and the server refuses them too', async ({
  page
}) => {
  await openApp(page)
  await expect(page.getByTestId('book-label')).toHaveText('Local book')
  await shot(page, 'book-local')
  await onTeamBook(
    page,
    'oscar',
    async () => {
      await expect(page.locator('.error-box')).toContainText('wrong name, password or code')
      await expect(page.getByTestId('book-label')).toHaveText('Local book')
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in to the team server' }).click()
      await expect(page.getByTestId('book-label')).toHaveText(`Team: ${teamHost} as oscar (operator)`)
      await expect(page.getByTestId('balance')).toBeVisible()
      await shot(page, 'book-team-operator')

      // An operator places orders…
      await nav(page, 'Catalogue')
      await expect(page.getByRole('button', { name: 'Order PositiveSSL', exact: true })).toBeVisible()
      // …but records no top-up, makes no API key, exports no CSV, and sees neither Admins nor the audit log.
      await nav(page, 'Billing')
      await expect(page.getByRole('heading', { name: 'Billing' })).toBeVisible()
      await expect(page.getByText('Record a top-up')).toHaveCount(0)
      await expect(page.getByRole('button', { name: 'Export CSV' })).toHaveCount(0)
      await nav(page, 'API & integrations')
      await expect(page.getByRole('button', { name: 'Create API key' })).toHaveCount(0)
      await expect(page.locator('.sidebar').getByText('Admins', { exact: true })).toHaveCount(0)
      await expect(page.locator('.sidebar').getByText('Audit log', { exact: true })).toHaveCount(0)
      await nav(page, 'Settings')
      await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0)
      await expect(page.getByRole('button', { name: 'Back up now' })).toHaveCount(0)
      await shot(page, 'book-team-operator-billing')

      // The server decides, whatever a client shows.
      expect(await rawRpc('oscar', 'topUp', [1, 100_00])).toBe(403)
      expect(await rawRpc('oscar', 'createApiKey', [1, 'x'])).toBe(403)
      expect(await rawRpc('oscar', 'listOrders', [1, {}, {}])).toBe(200)

      await page.getByRole('button', { name: 'Back to local book' }).click()
      await expect(page.getByTestId('book-label')).toHaveText('Local book')
      // The desktop's own book is whole again: its owner's actions are back.
      await nav(page, 'Billing')
      await expect(page.getByText('Record a top-up')).toBeVisible()
    },
    'wrong-password-for-oscar'
  )
})

test('a viewer on the desktop app sees no action that writes, on any screen, and calls nothing it may not', async ({
  page
}) => {
  await onTeamBook(page, 'vera', async () => {
    await expect(page.getByTestId('book-label')).toHaveText(`Team: ${teamHost} as vera (viewer)`)
    await expect(page.getByRole('button', { name: 'New order' })).toHaveCount(0)
    await nav(page, 'Catalogue')
    await expect(page.getByRole('heading', { name: 'Catalogue' })).toBeVisible()
    await expect(page.getByRole('button', { name: /^Order / })).toHaveCount(0)
    await page.goto(`${base()}/ui/#/catalogue/new-order`)
    await expect(page.getByText('Placing orders needs the operator or owner role.')).toBeVisible()
    for (const screen of [
      'Orders',
      'Billing',
      'Event log',
      'Imported certificates',
      'Alerts',
      'API & integrations',
      'ACME',
      'Settings'
    ]) {
      await nav(page, screen)
      await expect(page.locator('main h1').first()).toBeVisible()
    }
    await expect(page.getByRole('button', { name: 'Add channel' })).toHaveCount(0)
    await nav(page, 'Settings')
    await expect(page.getByLabel('DNS resolver')).toBeDisabled()
    await expect(page.getByRole('button', { name: 'Add reseller' })).toHaveCount(0)
    await shot(page, 'book-team-viewer-settings')
    expect(await rawRpc('vera', 'createOrder', [1, { productId: 2, domain: 'viewer.example.test' }, 'credit'])).toBe(
      403
    )
    await page.getByRole('button', { name: 'Back to local book' }).click()
    await expect(page.getByTestId('book-label')).toHaveText('Local book')
  })
  // Browsing every screen as a viewer asked the team server for nothing the role may not have:
  // the only refused calls in its log are the raw ones this test made.
  const denied = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', teamDir, 'audit', 'list', '--actor', 'vera', '--outcome', 'denied', '--json'],
    { encoding: 'utf8' }
  )
  const entries = (JSON.parse(denied.stdout) as { entries: { action: string }[] }).entries
  expect(entries.map((e) => e.action)).toEqual(['createOrder'])
})

/** The dark modules of the QR code on the page, as the SVG draws them (one unit square each). */
async function qrModules(page: Page): Promise<{ size: number; dark: [number, number][] }> {
  const svg = page.getByRole('img', { name: 'QR code of the new key' })
  const size = Number((await svg.getAttribute('viewBox'))!.split(' ')[2])
  const dark = await svg
    .locator('rect[width="1"]')
    .evaluateAll((rects) =>
      rects.map((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('y'))] as [number, number])
    )
  return { size, dark }
}

/** Reads a QR code as a scanner does, from an image of it (8 pixels a module). */
function decodeQr({ size, dark }: { size: number; dark: [number, number][] }): string | null {
  const scale = 8
  const side = size * scale
  const pixels = new Uint8ClampedArray(side * side * 4).fill(255)
  for (const [x, y] of dark)
    for (let dy = 0; dy < scale; dy++)
      for (let dx = 0; dx < scale; dx++) {
        const i = ((y * scale + dy) * side + x * scale + dx) * 4
        pixels[i] = pixels[i + 1] = pixels[i + 2] = 0
      }
  return jsQR(pixels, side, side)?.data ?? null
}

test('an admin sets up TOTP, signs in with a code, and a reused code is refused', async ({ browser }) => {
  addAdmin('tess', 'viewer')
  const page = await teamPage(browser)
  await signInOnPage(page, 'tess')
  await nav(page, 'My account')
  await page.getByRole('button', { name: 'Set up two-step sign-in' }).click()
  await expect(page.getByRole('img', { name: 'QR code of the new key' })).toBeVisible()
  const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s/g, '')
  const key = base32Decode(secret)!
  // What an authenticator app's camera reads from the QR code: the otpauth URI with that key.
  const scanned = decodeQr(await qrModules(page))
  expect(scanned).toBe(
    `otpauth://totp/CertDesk:tess?secret=${secret}&issuer=CertDesk&algorithm=SHA1&digits=6&period=30`
  )
  await shot(page, 'totp-enrolment')
  await page.getByLabel('Code the app shows now').fill(hotp(key, totpStep(new Date())))
  await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click()
  await expect(page.getByTestId('totp-card')).toContainText('On: signing in asks for a code')

  await page.locator('.sidebar').getByRole('button', { name: 'Sign out' }).click()
  await expect(page.getByTestId('sign-in')).toBeVisible()
  await signInOnPage(page, 'tess')
  await expect(page.locator('.error-box')).toHaveText(
    'could not sign in: enter the 6-digit code from your authenticator app'
  )
  // The next step's code: the enrolment used this step's, and a code is taken once.
  const next = hotp(key, totpStep(new Date()) + 1)
  await signInOnPage(page, 'tess', PASSWORD, next)
  await expect(page.getByTestId('book-label')).toHaveText(`Team: ${teamHost} as tess (viewer)`)
  await page.locator('.sidebar').getByRole('button', { name: 'Sign out' }).click()
  await signInOnPage(page, 'tess', PASSWORD, next)
  await expect(page.locator('.error-box')).toHaveText(
    'could not sign in: that code was used already; wait for the next one'
  )
  await shot(page, 'totp-replay-refused')
  await page.context().close()
})

test('the owner reads who did what on the Audit log screen, and filters it', async ({ browser }) => {
  const page = await teamPage(browser)
  await signInOnPage(page, 'owen')
  await nav(page, 'Audit log')
  await expect(page.getByTestId('audit-table')).toBeVisible()
  // The operator's refused top-up from the test before, with its target and outcome.
  await page.getByLabel('Admin', { exact: true }).fill('oscar')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  const topUp = page.locator('tr[data-action="topUp"][data-actor="oscar"]').first()
  await expect(topUp).toContainText('reseller id 1')
  await expect(topUp).toContainText('denied 403')
  await expect(page.locator('tr[data-action="signIn"][data-actor="oscar"]').first()).toContainText('ok 200')
  await shot(page, 'audit-log-oscar')
  await page.getByLabel('Outcome').selectOption('denied')
  await expect(page.locator('tbody tr[data-actor="oscar"]').first()).toBeVisible()
  for (const outcome of await page.locator('tbody tr td:last-child').allTextContents())
    expect(outcome).toMatch(/^denied/)
  await page.getByRole('button', { name: 'Clear filters' }).click()
  await expect(page.locator('tr[data-actor="vera"]').first()).toBeVisible()
  await shot(page, 'audit-log')
  await page.context().close()
})

test('a slow answer for the whole audit log does not replace the filtered one asked for after it', async ({
  browser
}) => {
  const page = await teamPage(browser)
  await signInOnPage(page, 'owen')
  // Hold back the screen's first load (no filter) until the filtered one has been shown.
  const first = await holdFirstCall(page, 'auditLog', (body) => !body.includes('oscar'))
  await nav(page, 'Audit log')
  await expect.poll(first.held).toBe(1)
  await page.getByLabel('Admin', { exact: true }).fill('oscar')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  await expect(page.locator('tr[data-actor="oscar"]').first()).toBeVisible()

  // The first answer arrives last; the table stays oscar's.
  await first.release()
  await expect(page.locator('tr[data-actor="oscar"]').first()).toBeVisible()
  await expect(page.locator('tbody tr[data-actor]:not([data-actor="oscar"])')).toHaveCount(0)
  await page.context().close()
})
