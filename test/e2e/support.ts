import { expect, test, type Browser, type Page, type TestInfo } from '@playwright/test'
import { join } from 'node:path'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

export const base = (): string => {
  const b = process.env.CERTDESK_E2E_BASE
  if (!b) throw new Error('the end-to-end global set-up did not run')
  return b
}

export const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'screenshots')

export async function openApp(page: Page): Promise<void> {
  await page.goto(`${base()}/ui/`)
  await expect(page.getByTestId('balance')).toBeVisible()
}

export async function nav(page: Page, label: string): Promise<void> {
  await page.locator('.sidebar').getByText(label, { exact: true }).click()
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false })
}

/** The balance in the sidebar, in cents. */
export async function balance(page: Page): Promise<number> {
  const text = (await page.getByTestId('balance').textContent()) ?? ''
  return Math.round(Number(text.replace(/[^0-9.]/g, '')) * 100)
}

/** Places a PositiveSSL order for `domain` from the catalogue and lands on its detail page. */
export async function orderFromCatalogue(
  page: Page,
  domain: string,
  payment: 'credit' | 'invoice' = 'credit'
): Promise<string> {
  await nav(page, 'Catalogue')
  await page.locator('tr[data-product="PositiveSSL"]').getByRole('button', { name: 'Order' }).click()
  await expect(page.getByRole('heading', { name: 'New order' })).toBeVisible()
  await page.locator('input[name="domain"]').fill(domain)
  if (payment === 'invoice') await page.getByLabel('On invoice (due in 14 days)').check()
  await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
  await page.getByRole('button', { name: /Place order for/ }).click()
  await expect(page.locator('h1', { hasText: domain })).toBeVisible()
  return (await page.getByTestId('order-number').textContent()) ?? ''
}

/** Places a PositiveSSL Multi-Domain order (two more names included) with `wildcardSans` wildcard SANs; lands on its page. */
export async function orderMultiDomain(page: Page, domain: string, wildcardSans = 0): Promise<void> {
  await nav(page, 'Catalogue')
  await page.locator('tr[data-product="PositiveSSL Multi-Domain"]').getByRole('button', { name: 'Order' }).click()
  await expect(page.getByRole('heading', { name: 'New order' })).toBeVisible()
  await page.locator('input[name="domain"]').fill(domain)
  if (wildcardSans > 0) await page.getByLabel('Wildcard SANs').fill(String(wildcardSans))
  await expect(page.getByTestId('quote-total')).toHaveText(/\$\d/)
  await page.getByRole('button', { name: /Place order for/ }).click()
  await expect(page.locator('h1', { hasText: domain })).toBeVisible()
}

/** Opens the app and points domain validation at loopback servers, as an admin sets a resolver. */
export async function pointChecksAt(page: Page, dns: { address: string }, web: { httpPort: number }): Promise<void> {
  await openApp(page)
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill(dns.address)
  await page.getByLabel('HTTP validation port').fill(String(web.httpPort))
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')
}

/** Back to the default resolver and port, for the other files. */
export async function resetChecks(page: Page): Promise<void> {
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill('')
  await page.getByLabel('HTTP validation port').fill('')
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')
}

/**
 * On an order page: generates a key and CSR for `names` (the first is the order domain),
 * submits it for HTTP validation, publishes every file on `web` and re-checks until issued.
 */
export async function issueOverHttp(
  page: Page,
  web: { put(host: string, path: string, body: string): void },
  names: string[],
  /** What the user does while the names wait for validation, before the re-check issues. */
  whileWaiting?: () => Promise<void>
): Promise<void> {
  await page.getByLabel('Names').fill(names.join(' '))
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText(names[names.length - 1])
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  for (const name of names) {
    const box = page.locator(`.name-check[data-name="${name}"]`)
    const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
    web.put(name, url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
  }
  await whileWaiting?.()
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(page.locator('h1')).toContainText('completed')
}

/**
 * A DNS and a web server on loopback for the validation checks of one spec file, started before
 * its tests and stopped after them; read them inside a test (`servers.dns`, `servers.web`).
 */
export function dcvServersForFile(): { dns: DnsServer; web: WebServer } {
  const servers = {} as { dns: DnsServer; web: WebServer }
  test.beforeAll(async () => {
    ;[servers.dns, servers.web] = await Promise.all([startDns(), startWeb()])
  })
  test.afterAll(async () => {
    await Promise.all([servers.web?.close(), servers.dns?.close()])
  })
  return servers
}

export interface OwnServer {
  dataDir: string
  /** The one-time sign-in link; `signIn` uses it, `newLogin` waits for the next one. */
  login: string
  /** Waits for the next sign-in link the server prints (after a session ended). */
  nextLogin(): Promise<string>
  stop(): Promise<void>
}

/**
 * Browser mode on a data dir of its own, for a spec that must not share the demo account or
 * the sign-in of the other files (a sign-out, a store of its own). `admin` holds the arguments of
 * `certdesk admin` commands run before the server starts; domain validation may reach loopback
 * (the lab setting).
 */
export async function startOwnServer(admin: string[][] = []): Promise<OwnServer> {
  const { spawn, spawnSync } = await import('node:child_process')
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const cli = join(__dirname, '..', '..', 'bin', 'certdesk.cjs')
  const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-own-'))
  for (const args of [['settings', 'set', 'dcv.allow_private_addresses', 'true'], ...admin]) {
    const r = spawnSync(process.execPath, [cli, 'admin', '--data-dir', dataDir, ...args], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`could not run certdesk admin ${args.join(' ')}: ${r.stderr}`)
  }
  const server = spawn(
    'timeout',
    ['15m', process.execPath, cli, 'serve', '--ui', '--port', '0', '--data-dir', dataDir],
    {
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit']
    }
  )
  let out = ''
  let seen = 0
  const waiters: ((link: string) => void)[] = []
  server.stdout!.on('data', (d) => {
    out += d
    const links = [...out.matchAll(/open once: (http:\/\/\S+)/g)].map((m) => m[1])
    while (seen < links.length && waiters.length > 0) waiters.shift()!(links[seen++])
  })
  const nextLogin = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const links = [...out.matchAll(/open once: (http:\/\/\S+)/g)].map((m) => m[1])
      if (seen < links.length) return resolve(links[seen++])
      waiters.push(resolve)
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
    })
  const login = await nextLogin()
  return {
    dataDir,
    login,
    nextLogin,
    async stop() {
      const exited = new Promise((r) => server.once('exit', r))
      server.kill('SIGTERM')
      await exited
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A page signed in through a one-time link, in a context of its own, at `viewport`. */
export async function signInWith(
  browser: Browser,
  login: string,
  viewport = { width: 1360, height: 860 }
): Promise<Page> {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] }, viewport })
  const page = await context.newPage()
  await page.goto(login)
  await expect(page.getByTestId('balance')).toBeVisible()
  return page
}

/** Clicks the download button named `button` and saves the file in the test's output as `file`. */
export async function saveDownload(page: Page, info: TestInfo, button: string, file: string): Promise<string> {
  const [dl] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button, exact: true }).click()
  ])
  const path = info.outputPath(file)
  await dl.saveAs(path)
  return path
}

/**
 * Holds back the first call of bridge method `method` whose request body `hold` picks, until
 * `release()`: a slow answer, to show that it does not replace what was asked for after it.
 */
export async function holdFirstCall(
  page: Page,
  method: string,
  hold: (body: string) => boolean
): Promise<{ held: () => number; release: () => Promise<void> }> {
  let letGo: () => void = () => undefined
  const released = new Promise<void>((resolve) => (letGo = resolve))
  let held = 0
  const path = `/rpc/${method}`
  await page.route(`**${path}`, async (route) => {
    if (held === 0 && hold(route.request().postData() ?? '')) {
      held++
      await released
    }
    await route.continue()
  })
  return {
    held: () => held,
    /** Lets the held call go on; resolves once its answer has reached the page and been taken in. */
    async release() {
      const answer = page.waitForResponse((r) => r.url().includes(path) && hold(r.request().postData() ?? ''))
      letGo()
      await answer
      // The page's fetch resolves after the response event here.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
  }
}
