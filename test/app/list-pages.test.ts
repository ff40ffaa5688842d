/**
 * The desktop lists paged by key over the bridge: every sort order walked forwards by key,
 * backwards by key and by position from either end gives each row exactly once, in the order a
 * plain ORDER BY gives; another reseller's rows never appear, whatever cursor is sent; hostile
 * filter values are read literally or refused with 400. CSV exports write exactly the filtered
 * rows with money as decimal text, and refuse paths that would escape, overwrite or follow a link.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { centsText } from '../../src-main/core/orders/list-pages'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import type { OrderSort, RowKey } from '../../src-shared/list-records'

let dataDir: string
let outDir: string
let service: Service
let h: AppHandlers
let a: number
let b: number
const DOMAINS = ['zeta', 'alpha', "o'brien", 'mid_dle', 'per%cent', 'beta', 'gamma', 'delta']

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-list-pages-'))
  outDir = mkdtempSync(join(tmpdir(), 'certdesk-list-exports-'))
  service = await openService({ dataDir })
  const mk = async (name: string) =>
    (await service.resellers.create({ name, email: `${name.toLowerCase()}@example.test`, company: name })).id
  a = await mk('Alpha')
  b = await mk('Bravo')
  await service.ledger.topUp(a, 1_000_000)
  await service.ledger.topUp(b, 1_000_000)
  // Interleaved: the other reseller's rows sit between this one's in every index.
  for (let i = 0; i < 37; i++) {
    const who = i % 3 === 2 ? b : a
    const word = DOMAINS[i % DOMAINS.length].replace(/[^a-z]/g, '')
    await service.orders.create(
      await service.resellers.get(who),
      { productId: 2, domain: `${word}${i}.example.test` },
      i % 4 === 0 ? 'invoice' : 'credit'
    )
  }
  h = createHandlers(service, { transport: 'browser', listenerUrl: () => 'http://127.0.0.1:1', apiVersion: '3.0' })
})
afterAll(async () => {
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(outDir, { recursive: true, force: true })
})

const SORT_SQL: Record<OrderSort, string> = {
  date: 'id DESC',
  domain: 'domain ASC, id ASC',
  status: 'status ASC, id ASC',
  expiry: `IFNULL(cert_valid_till, '~') ASC, id ASC`,
  renewal: `IFNULL(renewal_due, '~') ASC, id ASC`
}
const db = () => service.ctx.store

describe('keyset pages', () => {
  for (const sort of ['date', 'domain', 'status', 'expiry'] as OrderSort[]) {
    it(`walk the ${sort} order by key both ways and by position, each row once, only this reseller's`, async () => {
      const expected = (
        (await db().all(`SELECT id FROM orders WHERE reseller_id = ? ORDER BY ${SORT_SQL[sort]}`, a)) as {
          id: number
        }[]
      ).map((r) => r.id)
      const limit = 5
      const forward: number[] = []
      let after: RowKey | undefined
      const edges: RowKey[][] = []
      for (let position = 0; position < expected.length; position += limit) {
        const p = await h.orderPage(a, { filter: {}, sort, position, limit, after })
        expect(p.total).toBe(expected.length)
        forward.push(...p.items.map((o) => o.id))
        edges.push(p.keys)
        after = p.keys.at(-1)
      }
      expect(forward).toEqual(expected)
      // Backwards from the last page, each page read before the first row of the one after it.
      const backward: number[][] = []
      let before: RowKey | undefined
      for (let i = edges.length - 1; i >= 0; i--) {
        const p = await h.orderPage(a, { filter: {}, sort, position: i * limit, limit, before })
        backward.unshift(p.items.map((o) => o.id))
        before = p.keys[0]
      }
      expect(backward.flat()).toEqual(expected)
      // By position, from the nearer end.
      for (const position of [0, 7, expected.length - 3, expected.length - 1]) {
        const p = await h.orderPage(a, { filter: {}, sort, position, limit: 4 })
        expect(p.items.map((o) => o.id)).toEqual(expected.slice(position, position + 4))
        expect(p.position).toBe(position)
      }
    })
  }

  it('never show another reseller’s rows, even after a cursor taken from them', async () => {
    const theirs = (await db().all('SELECT id, domain FROM orders WHERE reseller_id = ? ORDER BY id', b)) as {
      id: number
      domain: string
    }[]
    const p = await h.orderPage(a, {
      filter: {},
      sort: 'domain',
      position: 0,
      limit: 500,
      after: { key: '', id: theirs[0].id }
    })
    expect(p.items.length).toBeGreaterThan(0)
    expect(p.items.every((o) => o.resellerId === a)).toBe(true)
    const ledger = await h.ledgerPage(a, { filter: {}, position: 0, limit: 500 })
    const own = (await db().get('SELECT COUNT(*) AS n FROM credit_transactions WHERE reseller_id = ?', a)) as {
      n: number
    }
    expect(ledger.items).toHaveLength(own.n)
    const answer = await callHandler(h, 'orderPage', [999_999, { filter: {}, position: 0, limit: 5 }])
    expect(answer.status).toBe(404)
  })

  it('read hostile search text literally and refuse values outside the contract with 400', async () => {
    for (const search of [`o'brien`, `"; DROP TABLE orders; --`, '%', '_', '\\', 'per%cent', '%%%', "' OR 1=1 --"]) {
      const p = await h.orderPage(a, { filter: { search }, position: 0, limit: 100 })
      const literal = (
        (await db().get(
          `SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ? AND instr(domain, ?) > 0`,
          a,
          search.toLowerCase()
        )) as { n: number }
      ).n
      expect(p.total).toBe(literal)
      expect(p.items).toHaveLength(literal)
    }
    expect(((await db().get('SELECT COUNT(*) AS n FROM orders')) as { n: number }).n).toBe(37)
    const refused: unknown[] = [
      { filter: {}, position: 1e20, limit: 5 },
      { filter: {}, position: -1, limit: 5 },
      { filter: {}, position: 0, limit: 1_000_000 },
      { filter: { status: 'bogus' }, position: 0, limit: 5 },
      { filter: { search: 'x'.repeat(10_000) }, position: 0, limit: 5 },
      { filter: {}, position: 0, limit: 5, sort: 'o.id; DROP TABLE orders' },
      { filter: {}, position: 0, limit: 5, after: { key: 'x'.repeat(1000), id: 1 } },
      { filter: {}, position: 0, limit: 5, after: { key: '', id: 1.5 } },
      { filter: {}, position: 0, limit: 5, extra: 1 }
    ]
    for (const q of refused) {
      const answer = await callHandler(h, 'orderPage', [a, q])
      expect(answer.status, JSON.stringify(q).slice(0, 80)).toBe(400)
      expect(answer.body.success).toBe(false)
    }
    // The largest position the contract takes lands on the last row.
    const last = await h.orderPage(a, { filter: {}, position: Number.MAX_SAFE_INTEGER, limit: 5 })
    expect(last.items).toHaveLength(1)
  })

  it('search order numbers by prefix and filter unpaid orders', async () => {
    const first = (await db().get('SELECT order_number AS n FROM orders WHERE reseller_id = ? ORDER BY id', a)) as {
      n: string
    }
    const byNumber = await h.orderPage(a, { filter: { search: first.n.toLowerCase() }, position: 0, limit: 10 })
    expect(byNumber.items.map((o) => o.orderNumber)).toEqual([first.n])
    const unpaid = await h.orderPage(a, { filter: { unpaid: true }, position: 0, limit: 100 })
    const n = (
      (await db().get(`SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ? AND payment_status = 'unpaid'`, a)) as {
        n: number
      }
    ).n
    expect(n).toBeGreaterThan(0)
    expect(unpaid.total).toBe(n)
    expect(unpaid.items.every((o) => o.paymentStatus === 'unpaid')).toBe(true)
  })
})

describe('CSV exports', () => {
  const exportAndWait = async (req: Parameters<AppHandlers['startExport']>[1]) => {
    const job = await h.startExport(a, req)
    for (let i = 0; i < 200; i++) {
      const now = (await h.exportJobs()).find((j) => j.id === job.id)!
      if (now.state !== 'running') return now
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error('export did not finish')
  }

  it('write the filtered rows with money as decimal text', async () => {
    const path = join(outDir, 'unpaid.csv')
    const job = await exportAndWait({ list: 'orders', filter: { unpaid: true }, path })
    expect(job.state).toBe('done')
    const lines = readFileSync(path, 'utf8').trimEnd().split('\r\n')
    const rows = await db().arrays<[string, number]>(
      `SELECT order_number, total_cents FROM orders WHERE reseller_id = ? AND payment_status = 'unpaid'
         AND status != 'cancelled' ORDER BY id DESC`,
      a
    )
    expect(lines[0]).toBe(
      'order_number,created_at,domain,product,status,payment_status,total_usd,cert_valid_till,purchase_end_date,next_renewal,installation'
    )
    expect(lines.slice(1).map((l) => [l.split(',')[0], l.split(',')[6]])).toEqual(
      rows.map(([n, c]) => [n, centsText(c)])
    )
    const ledger = join(outDir, 'ledger.csv')
    expect((await exportAndWait({ list: 'transactions', filter: {}, path: ledger })).state).toBe('done')
    const debit = readFileSync(ledger, 'utf8').split('\r\n')[1].split(',')
    expect(debit[2]).toBe('debit')
    expect(debit[3]).toMatch(/^-\d+\.\d\d$/)
  })

  it('write through a private temp file beside the target, never through links planted beside it', async () => {
    const dir = mkdtempSync(join(outDir, 'planted-'))
    const elsewhere = join(outDir, 'elsewhere.txt')
    writeFileSync(elsewhere, 'mine\n')
    for (const n of ['all.csv.partial', 'all.csv.tmp', '.all.csv.partial']) symlinkSync(elsewhere, join(dir, n))
    const job = await exportAndWait({ list: 'orders', filter: {}, path: join(dir, 'all.csv') })
    expect(job.state).toBe('done')
    expect(readFileSync(elsewhere, 'utf8')).toBe('mine\n')
    expect(lstatSync(join(dir, 'all.csv')).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(dir, 'all.csv'), 'utf8')).toMatch(/^order_number,/)
    expect(readdirSync(dir).sort()).toEqual(['.all.csv.partial', 'all.csv', 'all.csv.partial', 'all.csv.tmp'])
  })

  it('write cents exactly as decimal text', () => {
    expect([0, 5, -5, 100, 3120, -3120, 123456789].map(centsText)).toEqual([
      '0.00',
      '0.05',
      '-0.05',
      '1.00',
      '31.20',
      '-31.20',
      '1234567.89'
    ])
  })

  it('refuse paths that escape, overwrite, follow a link or are not CSV files, and write nothing', async () => {
    const existing = join(outDir, 'mine.csv')
    writeFileSync(existing, 'keep me\n')
    mkdirSync(join(outDir, 'dir.csv'))
    symlinkSync(join(outDir, 'target.csv'), join(outDir, 'dangling.csv'))
    const cases: [string, RegExp][] = [
      [`${outDir}/../escape.csv`, /must not hold a "\.\." segment/],
      ['escape.csv', /must be absolute/],
      [existing, /a file of that name exists already/],
      [join(outDir, 'dir.csv'), /a folder of that name exists already/],
      [join(outDir, 'dangling.csv'), /a symbolic link of that name exists already/],
      [join(outDir, 'x.sh'), /must end in \.csv/],
      [join(outDir, 'nowhere', 'x.csv'), /its folder does not exist/],
      [`${outDir}/x\0.csv`, /NUL/]
    ]
    for (const [path, reason] of cases) {
      const answer = await callHandler(h, 'startExport', [a, { list: 'orders', filter: {}, path }])
      expect(answer.status, path).toBe(400)
      expect(answer.body).toEqual({ success: false, error: expect.stringMatching(reason) })
    }
    expect(readFileSync(existing, 'utf8')).toBe('keep me\n')
    expect(existsSync(join(outDir, 'target.csv'))).toBe(false)
    expect(existsSync(join(tmpdir(), 'escape.csv'))).toBe(false)
    const badName = await callHandler(h, 'chooseExportPath', ['../../etc/x.csv'])
    expect(badName.status).toBe(400)
  })
})
