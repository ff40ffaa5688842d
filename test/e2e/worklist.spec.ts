/**
 * The orders list as a reseller's worklist, walked in Debian's Chromium against browser mode on
 * a store of its own: orders placed, validated (real HTTP checks on loopback), issued, checked
 * for installation, put on invoice and cancelled through the screens, then the list read as a
 * reseller reads it: saved views with their counts, the columns that answer "what needs me",
 * search by the name as shown and as its A-label, and every choice kept in the address.
 */
import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Page } from '@playwright/test'
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import {
  issueOverHttp,
  nav,
  orderFromCatalogue,
  SCREENSHOTS,
  signInWith,
  startOwnServer,
  type OwnServer
} from './support'

let dns: DnsServer
let web: WebServer
let server: OwnServer
let page: Page

const numbers: Record<string, string> = {}

test.beforeAll(async ({ browser }) => {
  test.setTimeout(240_000)
  dns = await startDns()
  web = await startWeb()
  server = await startOwnServer([
    ['reseller', 'add', '--name', 'Worklist Hosting', '--email', 'ops@worklist.test'],
    ['credit', 'add', '--reseller', '1', '--amount', '2000']
  ])
  page = await signInWith(browser, server.login)
  await nav(page, 'Settings')
  await page.getByLabel('DNS resolver').fill(dns.address)
  await page.getByLabel('HTTP validation port').fill(String(web.httpPort))
  await page.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.toast-ok').last()).toContainText('Settings saved')

  // Validation under way: one name of two published.
  numbers.progress = await orderFromCatalogue(page, 'progress.example.test')
  await page.getByLabel('Names').fill('progress.example.test www.progress.example.test')
  await page.getByRole('button', { name: 'Generate key and CSR' }).click()
  await expect(page.getByTestId('csr-decoded')).toContainText('www.progress.example.test')
  await page.getByLabel('Validation method').selectOption('http')
  await page.getByRole('button', { name: 'Submit CSR' }).click()
  const box = page.locator('.name-check[data-name="progress.example.test"]')
  const url = new URL(((await box.getByTestId('dcv-url').textContent()) ?? '').replace(/Copy$/, '').trim())
  web.put('progress.example.test', url.pathname, (await box.getByTestId('dcv-content').textContent()) ?? '')
  await page.getByRole('button', { name: 'Re-check now' }).click()
  await expect(box.locator('.badge')).toHaveText('valid')

  // Issued, and checked: nothing answers on its port 443.
  numbers.live = await orderFromCatalogue(page, 'live.example.test')
  await issueOverHttp(page, web, ['live.example.test'])
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Installed where' }) })
  await panel.getByRole('button', { name: 'Check now' }).click()
  await expect(panel.getByTestId('installation-badge')).toHaveText('unreachable', { timeout: 30_000 })

  // Issued; its automatic reissue comes within the month (time passes, below).
  numbers.soon = await orderFromCatalogue(page, 'soon.example.test')
  await issueOverHttp(page, web, ['soon.example.test'])

  // On invoice: one stays unpaid, one is cancelled.
  numbers.idn = await orderFromCatalogue(page, 'bücher.example', 'invoice')
  numbers.gone = await orderFromCatalogue(page, 'gone.example.test', 'invoice')
  await page.getByRole('button', { name: 'Cancel order' }).click()
  await page.getByRole('button', { name: 'Yes, cancel and refund' }).click()
  await expect(page.locator('h1')).toContainText('cancelled')

  // Time passes: the reissue the scheduler planned 14 days before the certificate ends is 9 days
  // away. What the scheduler's own clock would bring, written as any other writer of the store.
  const db = new Database(join(server.dataDir, 'certdesk.sqlite'))
  db.prepare(`UPDATE orders SET next_reissue_at = date('now', '+9 days') WHERE order_number = ?`).run(numbers.soon)
  db.close()
})

test.afterAll(async () => {
  await page?.context().close()
  await server?.stop()
  await web?.close()
  await dns?.close()
})

const hash = (p: Page): string => new URL(p.url()).hash
const row = (p: Page, number: string) => p.getByTestId('orders-list').locator(`[data-order="${number}"]`)
const range = (p: Page) => p.getByTestId('orders-range')
const view = (p: Page, name: RegExp) => p.getByRole('navigation', { name: 'Saved views' }).getByRole('link', { name })

test('saved views hold what needs the reseller, with counts, and each row says what it needs', async () => {
  await nav(page, 'Orders')
  const views = page.getByRole('navigation', { name: 'Saved views' })
  await expect(views.getByRole('link', { name: 'Needs validation 1' })).toBeVisible()
  await expect(views.getByRole('link', { name: 'Renewal due in 30 days 1' })).toBeVisible()
  await expect(views.getByRole('link', { name: 'Installation problems 1' })).toBeVisible()
  await expect(views.getByRole('link', { name: 'Unpaid 1' })).toBeVisible()
  await expect(range(page)).toHaveText(/of 5 rows$/)

  await view(page, /^Needs validation/).click()
  expect(hash(page)).toBe('#/orders?view=needs_validation')
  await expect(range(page)).toHaveText(/of 1 row$/)
  await expect(row(page, numbers.progress)).toContainText('1/2 names valid · HTTP')

  await view(page, /^Renewal due/).click()
  await expect(range(page)).toHaveText(/of 1 row$/)
  const soon = row(page, numbers.soon)
  await expect(soon.getByTestId('renewal-date')).toHaveText(
    new Date(Date.now() + 9 * 86_400_000).toISOString().slice(0, 10)
  )
  await expect(soon).toContainText('automatic reissue')

  await view(page, /^Installation problems/).click()
  await expect(range(page)).toHaveText(/of 1 row$/)
  await expect(row(page, numbers.live).getByTestId('installation-verdict')).toHaveText('unreachable')

  // Unpaid: the order on invoice, not the cancelled one (its invoice is cancelled).
  await view(page, /^Unpaid/).click()
  await expect(range(page)).toHaveText(/of 1 row$/)
  await expect(row(page, numbers.idn)).toContainText('bücher.example')
  await expect(row(page, numbers.gone)).toHaveCount(0)

  // Every order: expiry date and days left, next renewal, product, and a cancelled order is only cancelled.
  await view(page, /^All orders/).click()
  await expect(range(page)).toHaveText(/of 5 rows$/)
  const live = row(page, numbers.live)
  await expect(live.getByTestId('expiry-date')).toHaveText(/^\d{4}-\d\d-\d\d$/)
  await expect(live).toContainText(/\d+ days left/)
  await expect(live).toContainText('PositiveSSL')
  await expect(live.getByTestId('renewal-date')).toHaveText(/^\d{4}-\d\d-\d\d$/)
  const gone = row(page, numbers.gone)
  await expect(gone).toContainText('cancelled')
  await expect(gone).not.toContainText('unpaid')
  // A row opens its order.
  await row(page, numbers.progress).click()
  await expect(page.getByTestId('order-number')).toHaveText(numbers.progress)
})

test('search finds a name as the list shows it and as its A-label; search, view and sort survive reload, Back and a pasted link', async ({
  browser
}) => {
  await nav(page, 'Orders')
  const search = page.getByLabel('Search order number or domain')
  const searched = (): string | null => new URLSearchParams(hash(page).split('?')[1]).get('q')
  for (const term of ['bücher.example', 'BÜCHER', 'xn--bcher-kva']) {
    await search.fill(term)
    await expect.poll(searched).toBe(term)
    await expect(range(page)).toHaveText(/of 1 row$/)
    await expect(row(page, numbers.idn)).toContainText('bücher.example')
  }
  // Typing was one step of history: Back leaves the search as a whole.
  await page.goBack()
  await expect(range(page)).toHaveText(/of 5 rows$/)
  await expect(search).toHaveValue('')
  await page.goForward()
  await expect(search).toHaveValue('xn--bcher-kva')
  await expect(range(page)).toHaveText(/of 1 row$/)

  // A view, a status and a sort, then reload: the same list.
  await view(page, /^All orders/).click()
  await page.getByLabel('Status').selectOption('completed')
  await expect(range(page)).toHaveText(/of 2 rows$/)
  await page
    .getByRole('columnheader', { name: /Expires/ })
    .getByRole('button')
    .click()
  await expect(page.getByRole('columnheader', { name: /Expires/ })).toHaveAttribute('aria-sort', 'ascending')
  const address = hash(page)
  expect(address).toBe('#/orders?status=completed&sort=expiry')
  await page.reload()
  await expect(range(page)).toHaveText(/of 2 rows$/)
  await expect(page.getByLabel('Status')).toHaveValue('completed')
  await expect(page.getByRole('columnheader', { name: /Expires/ })).toHaveAttribute('aria-sort', 'ascending')
  // Back undoes the sort, then the status.
  await page.goBack()
  await expect(page.getByRole('columnheader', { name: /Order/ }).first()).toHaveAttribute('aria-sort', 'descending')
  await page.goBack()
  await expect(page.getByLabel('Status')).toHaveValue('')
  await expect(range(page)).toHaveText(/of 5 rows$/)

  // A pasted link, in another tab of the same session.
  const other = await page.context().newPage()
  await other.goto(`${new URL(page.url()).origin}/ui/#/orders?view=installation_problems`)
  await expect(other.getByTestId('orders-range')).toHaveText(/of 1 row$/)
  await expect(other.getByRole('link', { name: /^Installation problems/ })).toHaveAttribute('aria-current', 'page')
  await other.close()
  void browser
})

/**
 * Text cut short in the orders list: for every cell, the lines whose text runs past their box
 * (an ellipsis in place of the end), with whether the cell carries its full text in a title.
 */
const CUT_CELLS = `(() => {
  const out = []
  for (const cell of document.querySelectorAll('[data-testid="orders-list"] [role="gridcell"]')) {
    if (cell.offsetParent === null) continue
    for (const line of cell.querySelectorAll('.line')) {
      if (line.scrollWidth > line.clientWidth + 1) out.push({ text: line.textContent, titled: !!cell.title })
    }
  }
  return out
})()`

test('at 1024 px nothing a reseller scans is cut; at 1920 px every column shows', async () => {
  await nav(page, 'Orders')
  await expect(range(page)).toHaveText(/of 5 rows$/)
  for (const [width, height] of [
    [1024, 700],
    [1920, 1080]
  ]) {
    await page.setViewportSize({ width, height })
    await expect(row(page, numbers.live).getByTestId('installation-verdict')).toBeVisible()
    const cut = await page.evaluate<{ text: string; titled: boolean }[]>(CUT_CELLS)
    // Only a long domain or product may end in "…", and then its cell holds the whole text.
    expect(
      cut.filter((c) => !c.titled),
      `${width}px`
    ).toEqual([])
    for (const c of cut) expect(c.text, `${width}px`).not.toMatch(/unreach|names valid|days left|reissue|renewal due/)
    const sideways = await page.evaluate<number>(
      `(() => { const c = document.querySelector('.content'); return c.scrollWidth - c.clientWidth })()`
    )
    expect(sideways, `${width}px`).toBeLessThanOrEqual(1)
    await page.screenshot({ path: join(SCREENSHOTS, `worklist-orders-${width}.png`) })
  }
  // The order number and total have their own columns when there is room, under the domain when not.
  await expect(page.getByRole('columnheader', { name: /Total/ })).toBeVisible()
  await page.setViewportSize({ width: 1024, height: 700 })
  await expect(page.getByRole('columnheader', { name: /Total/ })).toBeHidden()
  await expect(row(page, numbers.live)).toContainText(numbers.live)
  await view(page, /^Needs validation/).click()
  await page.screenshot({ path: join(SCREENSHOTS, 'worklist-orders-1024-needs-validation.png') })
  await page.setViewportSize({ width: 1360, height: 860 })
})

test('assistive technology reads the list as a grid with its column headers; focus and title follow each page; a skip link leads past the sidebar', async () => {
  await nav(page, 'Orders')
  await view(page, /^All orders/).click()
  const grid = page.getByRole('grid', { name: 'Orders', exact: true })
  await expect(grid).toBeVisible()
  const headers = grid.getByRole('columnheader')
  await expect(headers.filter({ visible: true })).toHaveText([
    /^Order/,
    /^Domain/,
    /^Status/,
    /^Installation/,
    /^Expires/,
    /^Next renewal/,
    /^Total/
  ])
  // Every row of data is a row of cells, one per column, in the whole list's numbering.
  const first = grid.getByRole('row').nth(1)
  await expect(first).toHaveAttribute('aria-rowindex', '2')
  await expect(first.getByRole('gridcell')).toHaveCount(7)
  await expect(grid).toHaveAttribute('aria-rowcount', '6')
  // The sorted column says so, as a screen reader announces it.
  await expect(headers.first()).toHaveAttribute('aria-sort', 'descending')
  // One stop of Tab; the arrows move the active cell, which names its column; Enter opens the row.
  await grid.focus()
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('ArrowRight')
  const activeId = await grid.getAttribute('aria-activedescendant')
  expect(activeId).toBeTruthy()
  const active = page.locator(`[id="${activeId}"]`)
  await expect(active).toHaveAttribute('role', 'gridcell')
  await expect(active).toContainText('.example')
  await page.keyboard.press('Enter')
  await expect(page.getByTestId('order-number')).toBeVisible()

  // The focus is on the new page's heading after every move, and the window's title names the page.
  await expect(page.locator('h1')).toBeFocused()
  await expect(page).toHaveTitle(/^\S+\.example(\.test)? .*· CertDesk$/)
  for (const [label, title] of [
    ['Billing', 'Billing · CertDesk'],
    ['Expiring', 'Expiring certificates · CertDesk'],
    ['Orders', 'Orders · CertDesk']
  ]) {
    await nav(page, label)
    await expect(page).toHaveTitle(title)
    await expect(page.locator('h1')).toBeFocused()
  }
  await page.goBack()
  await expect(page).toHaveTitle('Expiring certificates · CertDesk')
  await expect(page.locator('h1')).toBeFocused()

  // A fresh load: the first Tab reaches the skip link, which takes the focus to the heading.
  await page.reload()
  await expect(page.locator('h1')).toHaveText('Expiring certificates')
  await page.keyboard.press('Tab')
  const skip = page.getByRole('link', { name: 'Skip to main content' })
  await expect(skip).toBeFocused()
  await expect(skip).toBeInViewport()
  await page.keyboard.press('Enter')
  await expect(page.locator('h1')).toBeFocused()
  await page.keyboard.press('Tab')
  await expect(page.locator('.content :focus')).toHaveCount(1)

  // axe: nothing serious on the list, in every view.
  for (const v of ['', '?view=needs_validation', '?view=renewal_due', '?view=installation_problems', '?view=unpaid']) {
    await page.goto(`${new URL(page.url()).origin}/ui/#/orders${v}`)
    await expect(page.getByTestId('orders-range')).toHaveText(/rows?$/)
    const results = await new AxeBuilder({ page }).analyze()
    const bad = results.violations.filter((x) => x.impact === 'serious' || x.impact === 'critical')
    expect(
      bad.map((x) => `${x.id}: ${x.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      v || 'all orders'
    ).toEqual([])
  }
})
