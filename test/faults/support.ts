/**
 * What the fault tests share: a real `certdesk serve` (optionally under libfiu's fiu-run, so
 * writes can be made to fail from outside), a small HTTP client that tells a dropped connection
 * from an answer, an order storm, an audit of the books, and the per-fault report that
 * `npm run test:reliability` prints.
 */
import { spawn, spawnSync } from 'node:child_process'
import http from 'node:http'
import { appendFileSync, readFileSync } from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { CLI, ROOT } from '../support/cli'

const require = createRequire(join(ROOT, 'package.json'))
const Database = require('better-sqlite3') as typeof BetterSqlite3
export { Database }

export const DB_FILE = 'certdesk.sqlite'
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

export interface FaultReport {
  fault: string
  /** Requests (or commands) tried while the fault was on and after it. */
  tried: number
  /** Answers that were not a success (each must be a 503 in the envelope, or the expected refusal). */
  errors: number
  /** Orders, debits or certificates lost or doubled: must be 0. */
  lost: number
  note?: string
}

/** One line per fault for scripts/reliability.mjs (CERTDESK_FAULT_REPORT names the file). */
export function report(r: FaultReport): void {
  const file = process.env.CERTDESK_FAULT_REPORT
  if (file) appendFileSync(file, `${JSON.stringify(r)}\n`)
}

export interface Served {
  url: string
  pid: number
  alive(): boolean
  log(): string
  kill9(): Promise<unknown>
  stop(): Promise<unknown>
}

/**
 * `certdesk serve` on a free loopback port, under `timeout` so it ends even if this test process
 * is killed; `fiu` runs it under fiu-run (libfiu's POSIX preload, toggled with fiu-ctrl).
 */
export async function startServe(
  dataDir: string,
  opts: { env?: NodeJS.ProcessEnv; fiu?: boolean; lifetime?: number } = {}
): Promise<Served> {
  const cmd = [
    '--signal=KILL',
    String(opts.lifetime ?? 300),
    ...(opts.fiu ? ['fiu-run', '-x'] : []),
    process.execPath,
    CLI,
    'serve',
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--log-level',
    'warn'
  ]
  const child = spawn('timeout', cmd, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 60 s: ${out}`)), 60_000)
    child.stdout.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${String(code)}: ${out}`))
    })
  })
  // The node process under `timeout` (fiu-run execs node, so it is the same process).
  let pid = 0
  for (let i = 0; i < 200 && !pid; i++) {
    try {
      pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]) || 0
    } catch {
      // not there yet
    }
    if (!pid) await sleep(10)
  }
  const kill = (): void => {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  process.once('exit', kill)
  const alive = (): boolean => child.exitCode === null && child.signalCode === null
  return {
    url,
    pid,
    alive,
    log: () => out,
    kill9: () => {
      kill()
      return exited
    },
    stop: () => {
      if (alive()) process.kill(pid, 'SIGTERM')
      return exited
    }
  }
}

/** A second process that takes the write lock, says so, and holds it for `ms`. */
export function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<void>; held: () => boolean }> {
  const script = `
    const Database = require(${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3'))})
    const db = new Database(${JSON.stringify(file)})
    db.exec('BEGIN IMMEDIATE')
    process.stdout.write('locked\\n')
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); process.exit(0) }, ${ms})`
  const child = spawn('timeout', ['--signal=KILL', '60', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let done = false
  const released = new Promise<void>((resolve) =>
    child.on('exit', () => {
      done = true
      resolve()
    })
  )
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (String(d).includes('locked')) resolve({ released, held: () => !done })
    })
    child.on('exit', (c) => reject(new Error(`the lock holder exited with ${c}`)))
  })
}

/** Toggles a libfiu failure point in a process started with `fiu: true`. */
export function fiuCtrl(pid: number, command: string): void {
  const r = spawnSync('fiu-ctrl', ['-c', command, String(pid)], { encoding: 'utf8', timeout: 10_000 })
  if (r.status !== 0) throw new Error(`could not run fiu-ctrl ${command}: ${r.stderr}`)
}

export interface Answer {
  status?: number
  retryAfter?: string
  body?: { success?: boolean; error?: string; [k: string]: unknown }
  /** A connection that closed without an answer (must never happen). */
  dropped?: string
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })

export function call(
  url: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}
): Promise<Answer> {
  const base = new URL(url)
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body)
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers }
  if (opts.key) headers['x-api-key'] = opts.key
  if (payload) headers['content-type'] = 'application/json'
  return new Promise((resolve) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, headers, agent, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let body: Answer['body']
          try {
            body = JSON.parse(text) as Answer['body']
          } catch {
            body = { success: undefined, error: `not JSON: ${text.slice(0, 200)}` }
          }
          const ra = res.headers['retry-after']
          resolve({ status: res.statusCode, retryAfter: Array.isArray(ra) ? ra[0] : ra, body })
        })
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ dropped: e.code ?? e.message }))
      }
    )
    req.on('timeout', () => req.destroy(new Error('TIMEOUT')))
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ dropped: e.code ?? e.message }))
    if (payload) req.write(payload)
    req.end()
  })
}

/** An answer a fault may produce: 503 in the spec's envelope with a Retry-After in seconds. */
export const isRetryLater = (a: Answer): boolean =>
  a.status === 503 && a.body?.success === false && typeof a.body.error === 'string' && /^\d+$/.test(a.retryAfter ?? '')

/** `certdesk admin …` with its JSON answer and exit code. */
export function admin(
  dataDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env
): { code: number; json: Record<string, unknown>; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    encoding: 'utf8',
    env,
    timeout: 60_000
  })
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(r.stdout || r.stderr.split('\n').find((l) => l.startsWith('{')) || '{}') as Record<
      string,
      unknown
    >
  } catch {
    // the test looks at stderr
  }
  return { code: r.status ?? -1, json, stderr: r.stderr }
}

/** A reseller in the Standard group with `usd` credit and an API key. */
export function makeReseller(dataDir: string, name: string, usd: number, env?: NodeJS.ProcessEnv) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
  const r = admin(dataDir, ['reseller', 'add', '--name', name, '--email', `${slug}@example.test`], env)
  if (r.code !== 0) throw new Error(`could not add reseller: ${r.stderr}`)
  const id = (r.json.reseller as { id: number }).id
  if (usd > 0) admin(dataDir, ['credit', 'add', '--reseller', String(id), '--amount', String(usd)], env)
  const k = admin(dataDir, ['apikey', 'create', '--reseller', String(id)], env)
  return { id, key: k.json.api_key as string }
}

export interface Storm {
  /** Idempotency key -> order id, for every order the client saw succeed. */
  ok: Map<string, number>
  /** Idempotency key -> answer, for every order that did not succeed. */
  failed: Map<string, Answer>
  tried: number
}

/** `count` orders from `workers` concurrent clients, each with its own Idempotency-Key. */
export async function orderStorm(
  url: string,
  key: string,
  prefix: string,
  count: number,
  workers = 8,
  storm: Storm = { ok: new Map(), failed: new Map(), tried: 0 }
): Promise<Storm> {
  let next = 0
  const one = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      const idem = `${prefix}-${i}`
      storm.tried++
      const a = await call(url, 'POST', '/orders', {
        key,
        headers: { 'idempotency-key': idem },
        body: { product_id: 1, domain: `${prefix}-${i}.example.com` }
      })
      if (a.status === 200) storm.ok.set(idem, a.body?.order_id as number)
      else storm.failed.set(idem, a)
    }
  }
  await Promise.all(Array.from({ length: workers }, one))
  return storm
}

/** Retries every failed order of a storm with its own Idempotency-Key; returns what still fails. */
export async function retryFailed(url: string, key: string, storm: Storm): Promise<Answer[]> {
  const still: Answer[] = []
  for (const [idem] of storm.failed) {
    storm.tried++
    const prefix = idem.replace(/-\d+$/, '')
    const i = idem.slice(prefix.length + 1)
    const a = await call(url, 'POST', '/orders', {
      key,
      headers: { 'idempotency-key': idem },
      body: { product_id: 1, domain: `${prefix}-${i}.example.com` }
    })
    if (a.status === 200) {
      storm.ok.set(idem, a.body?.order_id as number)
      storm.failed.delete(idem)
    } else still.push(a)
  }
  return still
}

/**
 * The books as a user would check them: integrity, every balance equal to its ledger, every
 * paid order with exactly one debit of its total and one invoice, and every order a client saw
 * succeed present exactly once. Returns the problems (none expected).
 */
export function audit(dataDir: string, expectOrders?: Map<string, number>, resellerId?: number): string[] {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    const bad: string[] = []
    const integrity = db.pragma('integrity_check', { simple: true })
    if (integrity !== 'ok') bad.push(`integrity_check: ${String(integrity)}`)
    for (const r of db
      .prepare(
        `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
           FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id GROUP BY r.id`
      )
      .all() as { id: number; balance: number; ledger: number }[]) {
      if (r.balance !== r.ledger) bad.push(`reseller ${r.id}: balance ${r.balance} != ledger ${r.ledger}`)
    }
    for (const o of db
      .prepare(
        `SELECT o.id, o.total_cents AS total, o.payment_status AS pay,
           (SELECT COUNT(*) FROM invoices i WHERE i.order_id = o.id) AS invoices,
           (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debits,
           (SELECT COALESCE(SUM(-t.amount_cents), 0) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debited
         FROM orders o`
      )
      .all() as { id: number; total: number; pay: string; invoices: number; debits: number; debited: number }[]) {
      if (o.invoices !== 1) bad.push(`order ${o.id}: ${o.invoices} invoices`)
      const paid = o.pay !== 'unpaid' && o.total > 0
      if (o.debits !== (paid ? 1 : 0)) bad.push(`order ${o.id}: ${o.debits} debits`)
      if (paid && o.debited !== o.total) bad.push(`order ${o.id}: debited ${o.debited} of ${o.total}`)
    }
    if (expectOrders && resellerId !== undefined) {
      const ids = new Set(
        (db.prepare('SELECT id FROM orders WHERE reseller_id = ?').all(resellerId) as { id: number }[]).map((r) => r.id)
      )
      const missing = [...expectOrders.values()].filter((id) => !ids.has(id))
      if (missing.length) bad.push(`${missing.length} orders a client saw succeed are missing`)
      if (ids.size !== expectOrders.size)
        bad.push(`${ids.size} orders stored for ${expectOrders.size} that succeeded (doubled or lost)`)
    }
    return bad
  } finally {
    db.close()
  }
}
