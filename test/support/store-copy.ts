/**
 * For the `certdesk admin store copy` tests: a desktop book on a real SQLite file, filled through
 * the real API (orders paid from credit, a cancelled and refunded one, one validated over HTTP
 * and issued, an ACME subscription), and readers that take every row of every table from a
 * SQLite file or a PostgreSQL database, knowing nothing of the copy.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { expect } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { usdToCents } from '../../src-main/core/billing/money'
import { openService } from '../../src-main/core/service'
import { copyPlan } from '../../src-main/core/store/copy-plan'
import { buildServer, listen } from '../../src-main/http/server'
import { CLI } from './cli'
import { x509Csr } from './csr'
import { startDns, startWeb } from './dcv-servers'

/** The environment of a shell that has set nothing of CertDesk's store. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env }
  delete env.CERTDESK_DATABASE
  delete env.CERTDESK_DATA_DIR
  return { ...env, ...extra }
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export function certdesk(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: cleanEnv(opts.env),
    cwd: opts.cwd,
    timeout: 120_000
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** One line on stderr that says what is wrong (after the tables copied so far): no stack, no password. */
export function oneLine(r: Run, password?: string): string {
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !/^certdesk: cop(ied|ying) \w+ \(\d+\/\d+\): /.test(l))
  expect(lines, r.stderr).toHaveLength(1)
  expect(r.stderr).not.toMatch(/\n\s+at |Error:|node_modules/)
  if (password) expect(r.stderr + r.stdout).not.toContain(password)
  expect(lines[0]).toMatch(/^certdesk: could not /)
  return lines[0]
}

export interface SeededBook {
  dataDir: string
  /** The PostgreSQL URL of the book, when it is not the data dir's SQLite file. */
  database?: string
  /** The first reseller's API key and id. */
  key: string
  resellerId: number
  /** GET /orders and GET /balance as the source's server answered them. */
  orders: unknown
  balance: unknown
  maxOrderId: number
}

/**
 * A desktop book in a new data dir (or in the PostgreSQL database `database`): two resellers
 * with credit and API keys; orders paid from credit, one cancelled (refunded), one validated
 * over HTTP and issued by the local CA, one ACME subscription; their invoices, ledger rows and
 * events.
 */
export async function seedDesktopBook(database?: string): Promise<SeededBook> {
  const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-copy-source-'))
  const [dns, web] = await Promise.all([startDns(), startWeb()])
  const service = await openService({ dataDir, database })
  const app = await listen(await buildServer(service))
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.httpsPort, String(web.httpsPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    const reseller = async (name: string, usd: number) => {
      const r = await service.resellers.create({
        name,
        email: `${name.toLowerCase().replace(/\W+/g, '-')}@example.test`,
        company: `${name} Ltd`,
        groupId: 1
      })
      await service.ledger.topUp(r.id, usdToCents(usd))
      return { id: r.id, key: (await service.resellers.createApiKey(r.id)).key }
    }
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(app.url + path, {
        method,
        headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined
      })
      const json = (await res.json()) as Record<string, unknown>
      expect(res.status, `${method} ${path}: ${JSON.stringify(json)}`).toBe(200)
      return json
    }
    const a = await reseller("O'Brien; Hosting", 5000)
    const b = await reseller('Second Hosting', 800)
    const ids: number[] = []
    for (const domain of ['one.example.com', 'two.example.com', 'three.example.com']) {
      ids.push((await call(a.key, 'POST', '/orders', { product_id: 2, domain })).order_id as number)
    }
    await call(a.key, 'PUT', `/orders/${ids[1]}`, { action: 'cancel' })
    // Validated over HTTP on the loopback web server, then issued: a certificate and its DCV rows.
    const conf = await call(a.key, 'POST', '/ssl/configure', {
      order_id: ids[2],
      csr: await x509Csr(['three.example.com'], 'P-256'),
      dcv_method: 'http'
    })
    for (const v of conf.validation as { instructions: Record<string, string> }[]) {
      const url = new URL(v.instructions.url)
      web.put(url.hostname, url.pathname, `${v.instructions.file_content}\n`)
    }
    expect((await call(a.key, 'GET', `/ssl/${ids[2]}`)).status).toBe('completed')
    ids.push((await call(a.key, 'POST', '/orders', { product_id: 12, domain: 'acme.example.com' })).order_id as number)
    ids.push((await call(b.key, 'POST', '/orders', { product_id: 1, domain: 'second.example.net' })).order_id as number)
    const orders = await call(a.key, 'GET', '/orders')
    const balance = await call(a.key, 'GET', '/balance')
    return { dataDir, database, key: a.key, resellerId: a.id, orders, balance, maxOrderId: Math.max(...ids) }
  } finally {
    await app.app.close()
    await service.close()
    await Promise.all([dns.close(), web.close()])
  }
}

/** A value as text, the same whichever engine and driver read it (bigint text, Buffer, REAL). */
const norm = (v: unknown): string | null =>
  v === null || v === undefined
    ? null
    : Buffer.isBuffer(v)
      ? `x'${v.toString('hex')}'`
      : typeof v === 'number' || typeof v === 'bigint'
        ? String(v)
        : String(v)

export type Contents = Map<string, string[]>

function contentsOf(read: (table: string, columns: string[]) => unknown[][]): Contents {
  const out: Contents = new Map()
  for (const t of copyPlan().tables) {
    const rows = read(t.name, t.columns).map((r) => JSON.stringify(r.map(norm)))
    out.set(t.name, rows.sort())
  }
  return out
}

/** Every row of every table of the SQLite store `file`. */
export function sqliteContents(file: string): Contents {
  const db = new Database(file, { readonly: true })
  try {
    return contentsOf(
      (t, cols) =>
        db
          .prepare(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${t}"`)
          .raw(true)
          .all() as unknown[][]
    )
  } finally {
    db.close()
  }
}

/** Every row of every table of the PostgreSQL database at `url`. */
export async function postgresContents(url: string): Promise<Contents> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const rows = new Map<string, unknown[][]>()
    for (const t of copyPlan().tables) {
      const r = await client.query({
        text: `SELECT ${t.columns.map((c) => `"${c}"`).join(', ')} FROM "${t.name}"`,
        rowMode: 'array'
      })
      rows.set(t.name, r.rows as unknown[][])
    }
    return contentsOf((t) => rows.get(t) ?? [])
  } finally {
    await client.end()
  }
}

/** One value from the PostgreSQL database at `url`. */
export async function pgValue(url: string, sql: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query({ text: sql, rowMode: 'array' })).rows[0]?.[0]
  } finally {
    await client.end()
  }
}

/** Row counts per table, from contents. */
export const counts = (c: Contents): Record<string, number> =>
  Object.fromEntries([...c].map(([t, rows]) => [t, rows.length]))

/** Every reseller's balance and ledger sum in the SQLite store `file`. */
export function sqliteBooks(file: string): { id: number; balance: number; ledger: number }[] {
  const db = new Database(file, { readonly: true })
  try {
    return db
      .prepare(
        `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
           FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id GROUP BY r.id ORDER BY r.id`
      )
      .all() as { id: number; balance: number; ledger: number }[]
  } finally {
    db.close()
  }
}

/** The same from PostgreSQL. */
export async function postgresBooks(url: string): Promise<{ id: number; balance: number; ledger: number }[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const r = await client.query(
      `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
         FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id GROUP BY r.id ORDER BY r.id`
    )
    return r.rows.map((x: Record<string, string>) => ({
      id: Number(x.id),
      balance: Number(x.balance),
      ledger: Number(x.ledger)
    }))
  } finally {
    await client.end()
  }
}
