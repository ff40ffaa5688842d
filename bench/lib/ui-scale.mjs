// The desktop UI at scale, in Debian's Chromium against browser mode: jumps to the oldest order
// and the oldest ledger row (End key, rows shown), 100 spread-out jumps ("Go to row"), a CSV
// export of the whole ledger written by the main process (rows/s, main-process RSS growth, tab
// heap before and after), and the tab's JS heap after reading through the whole orders list.
// Stores come from the bench generator (store.mjs); each size gets its own server.
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './paths.mjs'
import { median, startCertdesk } from './procs.mjs'
import { Database, DB_FILE, fillOrders, makeReseller, markWorklist } from './store.mjs'

const require = createRequire(join(ROOT, 'package.json'))
const { chromium } = require('playwright-core')

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run']
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d

/** Targets on the biggest store (the desktop-UI issue's table). */
export const UI_TARGETS = { jumpMs: 300, ratio: 3, exportRowsPerSecond: 100_000, exportRssMb: 100, readHeapMb: 50 }

async function loginUrl(server) {
  for (let i = 0; i < 600; i++) {
    const m = /open once: (http:\/\/\S+)/.exec(server.log())
    if (m) return m[1]
    await sleep(50)
  }
  throw new Error('could not sign in to browser mode: the server printed no sign-in link')
}

/** Waits until row `n` (1-based) of a list shows its data, not "Loading…". */
async function rowShown(page, list, n, text) {
  const row = page.locator(`[data-testid="${list}-list"] .vlist-row[data-row="${n}"]`)
  await row.filter({ hasText: text }).waitFor({ timeout: 60_000 })
}

async function heapMb(cdp) {
  await cdp.send('HeapProfiler.collectGarbage')
  const h = await cdp.send('Runtime.getHeapUsage')
  return h.usedSize / 1024 / 1024
}

/** One store: the measures above. */
async function measure(dir, env, log) {
  const db = new Database(join(dir, DB_FILE), { readonly: true })
  const orders = db.prepare('SELECT COUNT(*) AS n FROM orders').get().n
  const oldestOrder = db.prepare('SELECT order_number AS n FROM orders ORDER BY id LIMIT 1').get().n
  const ledger = db.prepare('SELECT COUNT(*) AS n FROM credit_transactions').get().n
  const oldestTx = db.prepare('SELECT created_at AS t FROM credit_transactions ORDER BY id LIMIT 1').get().t
  const idAt = db.prepare('SELECT id FROM orders ORDER BY id DESC').pluck().all()
  db.close()
  const server = await startCertdesk(dir, env, ['--ui'])
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS })
  try {
    const page = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage()
    const cdp = await page.context().newCDPSession(page)
    await page.goto(await loginUrl(server))
    await page.getByTestId('balance').waitFor()
    const out = { orders, ledgerRows: ledger }

    const jump = async (screen, list, total, text) => {
      await page.locator('.sidebar').getByText(screen, { exact: true }).click()
      await page
        .getByTestId(`${list}-range`)
        .filter({ hasText: `of ${total.toLocaleString('en-US')} rows` })
        .waitFor()
      const body = page.getByTestId(`${list}-list`)
      const times = []
      for (let i = 0; i < 3; i++) {
        await body.focus()
        await page.keyboard.press('Home')
        await rowShown(page, list, 1, /\S/)
        const t0 = process.hrtime.bigint()
        await page.keyboard.press('End')
        await rowShown(page, list, total, text)
        times.push(ms(t0))
      }
      return median(times)
    }
    out.jumpOldestOrderMs = round(await jump('Orders', 'orders', orders, oldestOrder))
    out.jumpOldestLedgerMs = round(await jump('Billing', 'transactions', ledger, oldestTx))

    // 100 jumps spread over the orders list, in an order that never walks to a neighbour.
    await page.locator('.sidebar').getByText('Orders', { exact: true }).click()
    await page
      .getByTestId('orders-range')
      .filter({ hasText: `of ${orders.toLocaleString('en-US')} rows` })
      .waitFor()
    const go = page.getByLabel('Go to row of orders')
    const jumps = Array.from({ length: 100 }, (_, k) => Math.floor((((k * 37) % 100) + 0.5) * (orders / 100)) + 1)
    let t0 = process.hrtime.bigint()
    for (const n of jumps) {
      await go.fill(String(n))
      await go.press('Enter')
      await rowShown(page, 'orders', n, `-${String(idAt[n - 1]).padStart(6, '0')}`)
    }
    out.hundredJumpsMs = round(ms(t0))

    // The saved views of the worklist: from all orders to each view, until its count and first
    // row show (median of 3 rounds over the four views); the counts are read from tallies.
    const views = page.getByRole('navigation', { name: 'Saved views' })
    const allOrders = views.getByRole('link', { name: 'All orders' })
    const rangeOf = (n) => (n === 0 ? '0 rows' : `of ${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'}`)
    const viewTimes = []
    out.viewCounts = {}
    for (let round = 0; round < 3; round++) {
      for (const label of ['Needs validation', 'Renewal due in 30 days', 'Installation problems', 'Unpaid']) {
        await allOrders.click()
        // From the top of all orders (the jumps before left the view deep in the list).
        await page.getByTestId('orders-list').focus()
        await page.keyboard.press('Home')
        await rowShown(page, 'orders', 1, /ORD-/)
        const link = views.getByRole('link', { name: new RegExp(`^${label} [\\d,]+$`) })
        const count = Number(((await link.locator('.count').textContent()) ?? '').replace(/,/g, ''))
        out.viewCounts[label] = count
        t0 = process.hrtime.bigint()
        await link.click()
        await page
          .getByTestId('orders-range')
          .filter({ hasText: rangeOf(count) })
          .waitFor({ timeout: 60_000 })
        if (count > 0) await rowShown(page, 'orders', 1, /ORD-/)
        viewTimes.push(ms(t0))
      }
    }
    out.viewSwitchMs = round(median(viewTimes))
    await allOrders.click()

    // Reading through the whole orders list: a screen at a time would be 60,000 key presses at
    // a million rows, so the read visits 200 evenly spread places and pages down 20 screens at
    // each of the first 10; the kept pages are what the heap holds.
    const heapStart = await heapMb(cdp)
    for (let k = 0; k < 200; k++) {
      const n = Math.floor(((k + 0.5) * orders) / 200) + 1
      await go.fill(String(n))
      await go.press('Enter')
      await rowShown(page, 'orders', n, /ORD-/)
      if (k < 10) {
        await page.getByTestId('orders-list').focus()
        for (let p = 0; p < 20; p++) await page.keyboard.press('PageDown')
      }
    }
    await page.getByTestId('orders-list').focus()
    await page.keyboard.press('End')
    await rowShown(page, 'orders', orders, oldestOrder)
    out.readHeapStartMb = round(heapStart)
    out.readHeapMb = round(await heapMb(cdp))

    // The whole ledger to a CSV file chosen in the page (browser mode: an edited path).
    await page.locator('.sidebar').getByText('Billing', { exact: true }).click()
    await page.getByTestId('transactions-range').filter({ hasText: 'rows' }).waitFor()
    const heapBefore = await heapMb(cdp)
    const rssBefore = server.rss().rssMb
    let rssMax = rssBefore
    const file = join(dir, `ledger-${Date.now()}.csv`)
    await page.getByRole('button', { name: 'Export CSV' }).click()
    await page.getByLabel('Export file').fill(file)
    t0 = process.hrtime.bigint()
    await page.getByRole('button', { name: 'Export', exact: true }).click()
    const job = page.locator('[data-testid="export-job"]', { hasText: 'credit ledger' })
    for (;;) {
      rssMax = Math.max(rssMax, server.rss().rssMb)
      if ((await job.getAttribute('data-state').catch(() => null)) === 'done') break
      await sleep(100)
    }
    const seconds = ms(t0) / 1000
    out.exportRowsPerSecond = Math.round(ledger / seconds)
    out.exportSeconds = round(seconds)
    out.exportRssGrowthMb = round(rssMax - rssBefore)
    out.exportHeapBeforeMb = round(heapBefore)
    out.exportHeapAfterMb = round(await heapMb(cdp))
    log(`ui at ${orders} orders: ${JSON.stringify(out)}`)
    return out
  } finally {
    await browser.close()
    await server.stop()
  }
}

/** Generates a store per size (or reuses `stores[n]`) and measures each; returns { [n]: measures }. */
export async function uiScale({ work, env, sizes, log, stores = {} }) {
  const results = {}
  for (const n of sizes) {
    let dir = stores[n]
    if (!dir) {
      dir = join(work, `ui-${n}`)
      mkdirSync(dir, { recursive: true })
      const r = makeReseller(dir, env)
      const t = Date.now()
      fillOrders(dir, r.id, n)
      const marked = markWorklist(dir)
      log(
        `ui: ${n} orders generated in ${((Date.now() - t) / 1000).toFixed(1)} s (${marked.problems} with installation problems, ${marked.validating} in validation)`
      )
    }
    results[n] = await measure(dir, env, log)
  }
  return results
}

const mark = (ok) => (ok ? 'meets' : '**below**')

export function uiMarkdown(r) {
  const sizes = Object.keys(r).map(Number)
  const small = r[sizes[0]]
  const big = r[sizes[sizes.length - 1]]
  const row = (label, k, target) => `| ${label} | ${sizes.map((n) => r[n][k]).join(' | ')} | ${target} |`
  const ratio = (k) => round(big[k] / small[k], 2)
  const t = UI_TARGETS
  return [
    '## Desktop UI at scale (Chromium, browser mode)',
    '',
    `| measure | ${sizes.map((n) => `${n.toLocaleString('en')} orders`).join(' | ')} | target |`,
    `|---|${sizes.map(() => '---').join('|')}|---|`,
    `| ledger rows | ${sizes.map((n) => r[n].ledgerRows.toLocaleString('en')).join(' | ')} | |`,
    row(
      'jump to the oldest order (End), rows shown, median of 3, ms',
      'jumpOldestOrderMs',
      `< ${t.jumpMs} and < ${t.ratio}× (×${ratio('jumpOldestOrderMs')}): ${mark(big.jumpOldestOrderMs < t.jumpMs && ratio('jumpOldestOrderMs') < t.ratio)}`
    ),
    row(
      'jump to the oldest ledger row (End), ms',
      'jumpOldestLedgerMs',
      `< ${t.jumpMs} and < ${t.ratio}× (×${ratio('jumpOldestLedgerMs')}): ${mark(big.jumpOldestLedgerMs < t.jumpMs && ratio('jumpOldestLedgerMs') < t.ratio)}`
    ),
    row(
      '100 spread-out jumps (Go to row), ms',
      'hundredJumpsMs',
      `< ${t.ratio}× (×${ratio('hundredJumpsMs')}): ${mark(ratio('hundredJumpsMs') < t.ratio)}`
    ),
    row(
      'CSV export of the whole ledger, rows/s',
      'exportRowsPerSecond',
      `≥ ${t.exportRowsPerSecond.toLocaleString('en')}: ${mark(big.exportRowsPerSecond >= t.exportRowsPerSecond)}`
    ),
    row('CSV export of the whole ledger, s', 'exportSeconds', ''),
    row(
      'main-process RSS growth during the export, MB',
      'exportRssGrowthMb',
      `< ${t.exportRssMb}: ${mark(big.exportRssGrowthMb < t.exportRssMb)}`
    ),
    row('tab JS heap before the export, MB', 'exportHeapBeforeMb', ''),
    row(
      'tab JS heap after the export, MB',
      'exportHeapAfterMb',
      `unchanged: ${mark(Math.abs(big.exportHeapAfterMb - big.exportHeapBeforeMb) < 2)}`
    ),
    row(
      'from all orders to a saved view, its count and first row shown, median of 12, ms',
      'viewSwitchMs',
      `< ${t.jumpMs} and < ${t.ratio}× (×${ratio('viewSwitchMs')}): ${mark(big.viewSwitchMs < t.jumpMs && ratio('viewSwitchMs') < t.ratio)}`
    ),
    row(
      'tab JS heap after reading through the orders list, MB',
      'readHeapMb',
      `< ${t.readHeapMb}: ${mark(big.readHeapMb < t.readHeapMb)}`
    ),
    '',
    'Reading through the list visits 200 evenly spread places (Go to row) and pages down 20 screens',
    'at ten of them, then End; the heap is measured after a forced garbage collection.',
    ''
  ].join('\n')
}
