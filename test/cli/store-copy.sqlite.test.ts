/**
 * `certdesk admin store copy`: a desktop book on a real SQLite file, filled through the API,
 * copied into the real test PostgreSQL and back into a new SQLite file. Every row of every
 * table arrives (read back by plain drivers, not by the copy), balances still equal their
 * ledgers, and `certdesk serve` on the copy answers GET /orders as the desk did and numbers the
 * next order after the copied ones. (SQLite-only by name: it reads the SQLite files itself.)
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redactUrl } from '../../src-main/core/store/postgres-errors'
import { serve } from '../support/cli'
import { createTestDatabase, type TestDatabase } from '../support/postgres'
import {
  certdesk,
  counts,
  postgresBooks,
  postgresContents,
  seedDesktopBook,
  sqliteBooks,
  sqliteContents,
  type Contents,
  type SeededBook
} from '../support/store-copy'

let book: SeededBook
let db: TestDatabase
const work = mkdtempSync(join(tmpdir(), 'certdesk-copy-'))
const dirs: string[] = [work]

beforeAll(async () => {
  ;[book, db] = await Promise.all([seedDesktopBook(), createTestDatabase({ empty: true })])
  dirs.push(book.dataDir)
})
afterAll(async () => {
  await db?.drop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function answers(url: string, key: string): Promise<{ orders: unknown; balance: unknown }> {
  const get = async (path: string) => (await fetch(url + path, { headers: { 'x-api-key': key } })).json()
  return { orders: await get('/orders'), balance: await get('/balance') }
}

async function orderOn(url: string, key: string, domain: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/orders`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ product_id: 2, domain })
  })
  const body = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(200)
  return body
}

/**
 * Every row of the source is in the copy, and nothing else but the copy's own audit entry and
 * its outcome: the copy is an admin action, kept in the copy's log with the source it came from.
 */
function expectSameRows(copy: Contents, source: Contents, copiedFrom: string): void {
  for (const [table, rows] of source) {
    const copied = copy.get(table) ?? []
    if (table !== 'audit_log' && table !== 'audit_outcomes') {
      expect(copied, table).toEqual(rows)
      continue
    }
    const added = copied.filter((r) => !rows.includes(r))
    expect(
      copied.filter((r) => rows.includes(r)),
      table
    ).toEqual(rows)
    expect(added, table).toHaveLength(1)
    if (table === 'audit_log') {
      const entry = JSON.parse(added[0]!) as unknown[]
      expect(entry[6]).toBe('cli store copy')
      expect(JSON.parse(entry[7] as string)).toEqual({ from: copiedFrom })
    }
  }
}

describe('certdesk admin store copy', () => {
  let source: Contents

  it('copies a desktop book into an empty PostgreSQL database, every row and id, and checks it', async () => {
    source = sqliteContents(join(book.dataDir, 'certdesk.sqlite'))
    const c = counts(source)
    // The book holds what a desk accumulates: each kind of row the copy must carry.
    for (const table of [
      'orders',
      'credit_transactions',
      'invoices',
      'certificates',
      'dcv_checks',
      'acme_subscriptions',
      'events',
      'api_keys',
      'order_tallies',
      'installation_status'
    ])
      expect(c[table], table).toBeGreaterThan(0)

    const r = certdesk(['admin', '--data-dir', book.dataDir, 'store', 'copy', '--to', db.tcpUrl])
    expect(r.code, r.stderr).toBe(0)
    const answer = JSON.parse(r.stdout) as Record<string, unknown>
    expect(answer).toMatchObject({ success: true, to: expect.not.stringContaining(db.password) })
    expect(answer.tables).toEqual(c)
    expect(answer.checked).toMatch(/balances of 2 resellers/)
    // The answer says the secrets stay in the keychain and how they move.
    expect(answer.secrets).toMatch(/not in the store.*secrets export.*secrets import/)
    // Progress: a line for each table with rows, naming it.
    expect(r.stderr).toMatch(new RegExp(`copied orders \\(\\d+/\\d+\\): ${c.orders} rows`))
    expect(r.stderr).not.toContain(db.password)

    expectSameRows(await postgresContents(db.tcpUrl), source, join(book.dataDir, 'certdesk.sqlite'))
    expect(JSON.stringify([...(await postgresContents(db.tcpUrl)).get('audit_log')!])).not.toContain(db.password)
    // The source is only read: its own log does not gain the copy.
    expect(sqliteContents(join(book.dataDir, 'certdesk.sqlite'))).toEqual(source)
    const books = await postgresBooks(db.tcpUrl)
    expect(books).toEqual(sqliteBooks(join(book.dataDir, 'certdesk.sqlite')))
    for (const b of books) expect(b.balance).toBe(b.ledger)
  })

  it('serves the copy: GET /orders answers as the desk did, and the next order follows the copied ones', async () => {
    const server = await serve(join(work, 'served'), ['--database', db.tcpUrl])
    try {
      expect(await answers(server.url, book.key)).toEqual({ orders: book.orders, balance: book.balance })
      const placed = await orderOn(server.url, book.key, 'after-copy.example.com')
      expect(placed.order_id).toBe(book.maxOrderId + 1)
      expect(placed.order_number).toMatch(new RegExp(`-${String(book.maxOrderId + 1).padStart(6, '0')}$`))
      // The invoice and ledger sequences moved past the copied ids too: the order wrote both.
      const books = await postgresBooks(db.tcpUrl)
      for (const b of books) expect(b.balance).toBe(b.ledger)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })

  it('moves the secrets the way the answer says: an export of the desk imports into the copy, not elsewhere', async () => {
    const file = join(work, 'secrets.json')
    const passphrase = { CERTDESK_SECRETS_PASSPHRASE: 'a long passphrase for the move' }
    const exported = certdesk(['admin', '--data-dir', book.dataDir, 'secrets', 'export', '--out', file], {
      env: passphrase
    })
    expect(exported.code, exported.stderr).toBe(0)
    const count = (JSON.parse(exported.stdout) as { secrets: number }).secrets
    expect(count).toBeGreaterThan(0)
    // The copy kept the install id the export is bound to.
    const imported = certdesk(['admin', '--database', db.tcpUrl, 'secrets', 'import', '--from', file], {
      env: passphrase
    })
    expect(imported.code, imported.stderr).toBe(0)
    expect(JSON.parse(imported.stdout)).toMatchObject({ success: true })
    // Another book (a new database a server started on) refuses it.
    const other = await createTestDatabase()
    try {
      expect(certdesk(['admin', '--database', other.tcpUrl, 'reseller', 'list']).code).toBe(0)
      const refused = certdesk(['admin', '--database', other.tcpUrl, 'secrets', 'import', '--from', file], {
        env: passphrase
      })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('it holds the secrets of another data dir')
    } finally {
      await other.drop()
    }
  })

  it('copies the book back from PostgreSQL into a new SQLite file that serves the same answers', async () => {
    const dataDir = join(work, 'back')
    const file = join(dataDir, 'certdesk.sqlite')
    // The data dir exists; the file does not.
    mkdirSync(dataDir, { mode: 0o700 })
    const r = certdesk(['admin', '--database', db.tcpUrl, 'store', 'copy', '--to', file])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ success: true, to: file })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    // Only the store: no temporary file, no journal left beside it.
    expect(readdirSync(dataDir)).toEqual(['certdesk.sqlite'])

    const fromPostgres = await postgresContents(db.tcpUrl)
    expectSameRows(sqliteContents(file), fromPostgres, redactUrl(db.tcpUrl))
    expect(sqliteBooks(file)).toEqual(await postgresBooks(db.tcpUrl))

    const server = await serve(dataDir)
    try {
      const seen = await answers(server.url, book.key)
      // The search index SQLite keeps by triggers (PostgreSQL has a GIN index) was built from the copied orders.
      const found = await fetch(`${server.url}/orders?domain=after-copy`, { headers: { 'x-api-key': book.key } })
      expect(((await found.json()) as { orders: { domain: string }[] }).orders.map((o) => o.domain)).toEqual([
        'after-copy.example.com'
      ])
      const placed = await orderOn(server.url, book.key, 'back-home.example.com')
      expect(placed.order_id).toBe(book.maxOrderId + 2)
      expect((seen.orders as { orders: unknown[] }).orders).toHaveLength(
        (book.orders as { orders: unknown[] }).orders.length + 1
      )
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })
})
