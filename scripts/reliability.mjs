// `npm run test:reliability`: fault tolerance of `certdesk serve` as a user would meet it, on
// real processes, the real keychain and both store engines: the data dir's SQLite file, and a
// database of a private PostgreSQL server started for the run (scripts/postgres-server.mjs).
// On each engine:
//   1. 40 orders race through two servers on one book for credit that covers 10: none overspends;
//   2. kill -9 of the server in the middle of a storm of concurrent orders, repeated; after each
//      restart the books must balance and every order a client saw succeed must exist;
//   3. at least 10,000 generated bad requests: no 5xx, no crash, every answer in the envelope;
// then 4. a secrets scan of the stores (SQLite files, PostgreSQL dumps), the logs and the answers;
// and 5. (not with --short) the fault and backup tests, reported per fault.
// `--short` (run by `npm test`) does fewer crash rounds; `--engine sqlite|postgres` runs one
// engine only. Ends with "reliability: N passed, N failed".
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nextCase, rng } from '../bench/lib/bad-input.mjs'
import { makeClient, parseRaw } from '../bench/lib/http-client.mjs'
import { startCertdesk } from '../bench/lib/procs.mjs'
import { admin, makeReseller } from '../bench/lib/store.mjs'
import { startKeyringSession } from './keyring-session.mjs'
import { startPostgresServer } from './postgres-server.mjs'
import { postgresBook, sqliteBook } from './reliability-books.mjs'
import { lastDollarsRace } from './reliability-race.mjs'
import { build } from './setup.mjs'

const short = process.argv.includes('--short')
const engineArg = process.argv.includes('--engine') ? process.argv[process.argv.indexOf('--engine') + 1] : 'both'
const ENGINES = engineArg === 'both' ? ['sqlite', 'postgres'] : [engineArg]
const CRASH_ROUNDS = Number(process.env.RELIABILITY_CRASH_ROUNDS ?? (short ? 3 : 10))
const BAD_REQUESTS = short ? 10_000 : 30_000
const STORM_WORKERS = 24
const SEED = Number(process.env.RELIABILITY_SEED ?? 7)
/** The whole run stops itself after this long, whatever happens. */
const DEADLINE_MS = (short ? 4 : 15) * 60_000 * ENGINES.length

const say = (msg) => process.stdout.write(`${msg}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let passed = 0
let failed = 0
function check(name, ok, detail = '') {
  if (ok) passed++
  else failed++
  say(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`)
}

/** Everything every server printed, for the secrets scan. */
const logs = []
const answers = { scanned: 0, leaks: [] }
const secrets = new Map() // secret text -> what it is

function scanAnswer(text, where) {
  answers.scanned++
  for (const [secret, what] of secrets) {
    if (text.includes(secret)) answers.leaks.push(`${what} in the answer to ${where}`)
  }
  if (/PRIVATE KEY-----/.test(text)) answers.leaks.push(`a private key in the answer to ${where}`)
}

async function serve(dataDir, env) {
  const s = await startCertdesk(dataDir, env, ['--log-level', 'info'])
  return {
    ...s,
    async kill9() {
      await s.kill9()
      logs.push(s.log())
    },
    async stop() {
      await s.stop()
      logs.push(s.log())
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 1. kill -9 in a storm of orders

async function crashStorm(book) {
  const { dir: dataDir, env, engine } = book
  const r = makeReseller(dataDir, env, 'Storm Hosting')
  secrets.set(r.key, 'the storm API key')
  // Enough for every round's orders at the dearest product, so no refusal hides a lost order.
  admin(dataDir, ['credit', 'add', '--reseller', String(r.id), '--amount', '90000000'], env)
  const seen = new Map() // idempotency key -> { orderId, total, domain }
  const unanswered = new Map() // idempotency key -> body
  const cancelled = new Set()
  const refused = []
  const random = rng(SEED)
  let server = await serve(dataDir, env)

  for (let round = 1; round <= CRASH_ROUNDS; round++) {
    const client = makeClient(server.url, { sockets: STORM_WORKERS })
    let killed = false
    const worker = async (w) => {
      for (let i = 0; !killed; i++) {
        const roll = random.next()
        if (roll < 0.8) {
          const key = `storm-${round}-${w}-${i}`
          const body = JSON.stringify({
            product_id: random.pick([1, 2, 5, 8]),
            domain: `r${round}w${w}i${i}.example.com`
          })
          const res = await client.request({
            method: 'POST',
            path: '/orders',
            headers: { 'x-api-key': r.key, 'content-type': 'application/json', 'idempotency-key': key },
            body
          })
          if (res.status === 200) {
            const b = JSON.parse(res.text)
            scanAnswer(res.text, 'POST /orders')
            seen.set(key, { orderId: b.order_id, total: Math.round(b.total * 100), domain: b.domain })
          } else if (res.status !== undefined) {
            refused.push(`${key}: ${res.status} ${res.text.slice(0, 120)}`)
          } else {
            unanswered.set(key, body)
          }
        } else if (roll < 0.9 && seen.size > 0) {
          const mine = [...seen.values()]
          const target = mine[random.int(mine.length)]
          const res = await client.request({
            method: 'PUT',
            path: `/orders/${target.orderId}`,
            headers: { 'x-api-key': r.key, 'content-type': 'application/json' },
            body: '{"action":"cancel"}'
          })
          if (res.status === 200) cancelled.add(target.orderId)
        } else {
          const res = await client.request({ path: '/balance', headers: { 'x-api-key': r.key } })
          if (res.status === 200) scanAnswer(res.text, 'GET /balance')
        }
      }
    }
    const workers = Array.from({ length: STORM_WORKERS }, (_, w) => worker(w))
    await sleep(300 + random.int(1200))
    await server.kill9()
    killed = true
    await Promise.all(workers)
    client.close()

    server = await serve(dataDir, env)
    const audit = await book.audit()
    const found = await book.ordersById([...seen.values()].map((s) => s.orderId))
    const missing = [...seen.entries()].filter(([, s]) => {
      const o = found.get(s.orderId)
      return !o || o.total_cents !== s.total || o.domain !== s.domain
    })
    const notCancelled = [...cancelled].filter((id) => {
      const o = found.get(id)
      return !o || o.status !== 'cancelled' || o.payment_status !== 'refunded'
    })
    // Retry every order whose answer was lost: each must now exist exactly once.
    const retry = makeClient(server.url)
    let retryFailures = 0
    let firstRetryFailure = ''
    for (const [key, body] of unanswered) {
      const res = await retry.request({
        method: 'POST',
        path: '/orders',
        headers: { 'x-api-key': r.key, 'content-type': 'application/json', 'idempotency-key': key },
        body
      })
      if (res.status !== 200) {
        if (retryFailures++ === 0)
          firstRetryFailure = `${key}: ${res.status ?? res.error} ${(res.text ?? '').slice(0, 120)}`
        continue
      }
      const b = JSON.parse(res.text)
      seen.set(key, { orderId: b.order_id, total: Math.round(b.total * 100), domain: b.domain })
      unanswered.delete(key)
    }
    retry.close()
    const orders = await book.orderCount(r.id)
    const after = await book.audit()
    const problems = [
      ...audit.violations,
      ...after.violations,
      ...missing.slice(0, 3).map(([k]) => `order for ${k} lost or changed`),
      ...notCancelled.slice(0, 3).map((id) => `cancelled order ${id} is not cancelled and refunded`),
      ...refused.slice(0, 3),
      retryFailures ? `${retryFailures} retries of unanswered orders failed, first ${firstRetryFailure}` : '',
      orders !== seen.size ? `${orders} orders in the store for ${seen.size} keys that succeeded (lost or doubled)` : ''
    ].filter(Boolean)
    check(
      `[${engine}] crash round ${round}: kill -9 during ${STORM_WORKERS} concurrent clients, restart, books balance`,
      problems.length === 0,
      problems.length
        ? problems.join('; ')
        : `${orders} orders, ${cancelled.size} cancelled, ${engine === 'SQLite' ? 'integrity ok, ' : ''}balance = ledger`
    )
    refused.length = 0
  }
  await server.stop()
}

// ---------------------------------------------------------------------------------------------
// 2. bad input

async function badInput(book) {
  const { dir: dataDir, env, engine } = book
  const r = makeReseller(dataDir, env, 'Fuzz Hosting')
  admin(dataDir, ['credit', 'add', '--reseller', String(r.id), '--amount', '1000000'], env)
  const revoked = makeReseller(dataDir, env, 'Revoked Hosting')
  admin(
    dataDir,
    [
      'apikey',
      'revoke',
      '--key-id',
      String(admin(dataDir, ['apikey', 'list', '--reseller', String(revoked.id)], env).api_keys[0].id)
    ],
    env
  )
  const disabled = makeReseller(dataDir, env, 'Disabled Hosting')
  admin(dataDir, ['reseller', 'api-access', '--reseller', String(disabled.id), '--disable'], env)
  for (const [k, what] of [
    [r.key, 'the fuzz API key'],
    [revoked.key, 'a revoked API key'],
    [disabled.key, "a disabled reseller's API key"]
  ])
    secrets.set(k, what)
  const wrongKeys = []
  const server = await serve(dataDir, env)
  const client = makeClient(server.url, { sockets: 16 })
  const seed = await client.request({
    method: 'POST',
    path: '/orders',
    headers: { 'x-api-key': r.key, 'content-type': 'application/json' },
    body: '{"product_id":2,"domain":"seed.example.com"}'
  })
  // An ACME subscription: its EAB HMAC key may appear in GET /orders/{id}/acme and nowhere else.
  const acme = await client.request({
    method: 'POST',
    path: '/orders',
    headers: { 'x-api-key': r.key, 'content-type': 'application/json' },
    body: '{"product_id":12,"domain":"acme-fuzz.example.com"}'
  })
  const acmeId = acme.status === 200 ? JSON.parse(acme.text).order_id : null
  const details = acmeId
    ? await client.request({ path: `/orders/${acmeId}/acme`, headers: { 'x-api-key': r.key } })
    : null
  const eab = details?.status === 200 ? JSON.parse(details.text).acme?.account?.eab_hmac_key : undefined
  check(
    `[${engine}] secrets: an ACME subscription hands out its EAB HMAC key where the spec says`,
    typeof eab === 'string' && eab.length >= 16,
    `POST /orders for an ACME product answered ${acme.status}, GET /orders/${acmeId}/acme ${details?.status}`
  )
  if (typeof eab === 'string' && eab) secrets.set(eab, 'the EAB HMAC key')
  const ctx = {
    key: r.key,
    revokedKey: revoked.key,
    disabledKey: disabled.key,
    orderId: JSON.parse(seed.text).order_id,
    wrongKey: () => {
      const k = `cdk_${randomBytes(32).toString('base64url')}`
      if (wrongKeys.length < 2000) wrongKeys.push(k)
      return k
    }
  }
  const random = rng(SEED + 1)
  const tally = {
    sent: 0,
    byStatus: {},
    fiveHundreds: [],
    notEnvelope: [],
    noAnswer: [],
    stack: [],
    notImplemented: 0,
    ordersOk: 0
  }
  const note = (list, text) => list.length < 5 && list.push(text)
  let n = 0
  const worker = async () => {
    while (n < BAD_REQUESTS) {
      n++
      const c = nextCase(random, ctx)
      const where = c.raw
        ? `raw ${JSON.stringify(c.raw.slice(0, 40))}`
        : `${c.method} ${c.path.slice(0, 60)} (${c.kind})`
      let status
      let text
      if (c.raw) {
        // A body over the 1 MiB limit must be refused by its Content-Length alone: wait for that.
        const over = c.rawBody !== undefined && Buffer.byteLength(c.rawBody) > 1024 * 1024
        const res = parseRaw(await client.raw(c.raw, { body: c.rawBody, waitMs: over ? 3000 : 100 }))
        status = res.status
        text = res.text
        if (status === null) {
          note(tally.noAnswer, where)
          continue
        }
      } else {
        const res = await client.request(c)
        if (res.skipped) continue
        if (res.error) {
          note(tally.noAnswer, `${where}: ${res.error}`)
          continue
        }
        status = res.status
        text = res.text
        // Some generated input is valid after all (a field set to 0); each such order must be one.
        if (c.method === 'POST' && c.path === '/orders' && status === 200) tally.ordersOk++
      }
      tally.sent++
      tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1
      scanAnswer(text, where)
      for (const k of wrongKeys) if (text.includes(k)) answers.leaks.push(`a presented wrong key echoed by ${where}`)
      if (status === 501) tally.notImplemented++
      else if (status >= 500) note(tally.fiveHundreds, `${where} -> ${status} ${text.slice(0, 100)}`)
      if (/\n\s+at |node_modules|\.ts:\d+|\.js:\d+/.test(text)) note(tally.stack, where)
      if (c.method === 'HEAD' || status === 204) continue
      if (c.path?.startsWith('/openapi.json') && status === 200) continue
      let body
      try {
        body = JSON.parse(text)
      } catch {
        body = null
      }
      const ok =
        body !== null &&
        typeof body === 'object' &&
        !Array.isArray(body) &&
        (status >= 400
          ? body.success === false &&
            typeof body.error === 'string' &&
            body.error.length > 0 &&
            Object.keys(body).every((k) => k === 'success' || k === 'error')
          : body.success === true)
      if (!ok) note(tally.notEnvelope, `${where} -> ${status} ${text.slice(0, 100)}`)
    }
  }
  const ordersBefore = await book.orderCount(r.id)
  await Promise.all(Array.from({ length: 16 }, worker))
  const alive = server.alive()
    ? (await client.request({ path: '/products', headers: { 'x-api-key': r.key } })).status === 200
    : false
  client.close()
  const ordersAfter = await book.orderCount(r.id)
  await server.stop()
  const audit = await book.audit()
  check(
    `[${engine}] bad input: ${tally.sent} generated requests answered`,
    tally.sent >= 10_000 && tally.noAnswer.length === 0,
    tally.noAnswer.length ? `no answer to ${tally.noAnswer.join('; ')}` : `by status ${JSON.stringify(tally.byStatus)}`
  )
  check(
    `[${engine}] bad input: zero 5xx`,
    tally.fiveHundreds.length === 0,
    tally.fiveHundreds.length
      ? tally.fiveHundreds.join('; ')
      : `(${tally.notImplemented} answers were 501 from endpoints not built yet, in the envelope)`
  )
  check(
    `[${engine}] bad input: every answer in the spec's envelope`,
    tally.notEnvelope.length === 0,
    tally.notEnvelope.join('; ')
  )
  check(
    `[${engine}] bad input: no stack trace or source path in any answer`,
    tally.stack.length === 0,
    tally.stack.join('; ')
  )
  check(`[${engine}] bad input: the server never crashed and still answers`, alive)
  check(
    `[${engine}] bad input: no order but the answered ones, books balance`,
    audit.violations.length === 0 && ordersAfter - ordersBefore === tally.ordersOk,
    audit.violations.length
      ? audit.violations.slice(0, 3).join('; ')
      : `${ordersAfter - ordersBefore} orders for ${tally.ordersOk} valid POSTs`
  )
  for (const k of wrongKeys) secrets.set(k, 'a presented wrong key')
}

// ---------------------------------------------------------------------------------------------
// 3. secrets

function secretsScan(books) {
  const fileLeaks = []
  for (const book of books) {
    for (const { where, bytes } of book.stored()) {
      for (const [secret, what] of secrets) if (bytes.includes(secret)) fileLeaks.push(`${what} in ${where}`)
      if (bytes.includes('PRIVATE KEY-----')) fileLeaks.push(`a PEM private key in ${where}`)
    }
  }
  check(
    `secrets: no API key, EAB HMAC key or private key in the ${books.length} books (SQLite files, PostgreSQL dumps; ${secrets.size} secrets looked for)`,
    fileLeaks.length === 0,
    [...new Set(fileLeaks)].slice(0, 5).join('; ')
  )
  const logText = logs.join('\n')
  const logLeaks = [...secrets].filter(([s]) => logText.includes(s)).map(([, what]) => what)
  if (logText.includes('PRIVATE KEY-----')) logLeaks.push('a PEM private key')
  check(
    `secrets: none in the server logs (${Math.round(logText.length / 1024)} kB at level info)`,
    logLeaks.length === 0,
    [...new Set(logLeaks)].join('; ')
  )
  check(
    `secrets: none in ${answers.scanned} answers`,
    answers.leaks.length === 0,
    [...new Set(answers.leaks)].slice(0, 5).join('; ')
  )
}

// ---------------------------------------------------------------------------------------------
// 4. faults and backups: a full disk, failing writes, the keychain going away, a busy store,
// kill -9 mid-issuance and mid-deploy, clock jumps, a backup during a storm. Each is a vitest
// file on real processes (test/faults, test/core/scheduler-clock-jumps.test.ts) that appends one
// line per fault to CERTDESK_FAULT_REPORT; `npm test` runs the same files, so `--short` skips them.

const FAULT_TESTS = ['test/faults', 'test/core/scheduler-clock-jumps.test.ts']
const FAULTS_EXPECTED = [
  'disk full (ENOSPC',
  'disk full during an issuance and a deploy',
  'failing writes',
  'keychain',
  'busy store',
  'between signing and storing',
  'between the files of a deploy',
  'clock stepping',
  'backup during an order storm'
]

async function faultsAndBackups(work) {
  const reportFile = join(work, 'faults.jsonl')
  const { spawnSync } = await import('node:child_process')
  const run = spawnSync(join('node_modules', '.bin', 'vitest'), ['run', ...FAULT_TESTS], {
    env: { ...process.env, CERTDESK_FAULT_REPORT: reportFile },
    encoding: 'utf8',
    timeout: 10 * 60_000
  })
  let lines = []
  try {
    lines = readFileSync(reportFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  } catch {
    // no file: no fault test got as far as its report; the checks below fail
  }
  for (const f of lines) {
    check(
      `fault: ${f.fault}: ${f.tried} requests tried, ${f.errors} errors returned (503 with Retry-After or a clear refusal), ${f.lost} lost`,
      f.lost === 0
    )
  }
  for (const name of FAULTS_EXPECTED) {
    if (!lines.some((f) => f.fault.includes(name))) check(`fault: ${name}: reported`, false, 'its test did not finish')
  }
  const failedTests = (run.stdout ?? '').split('\n').filter((l) => /\s(×|FAIL)\s/.test(l))
  check(`fault tests (${FAULT_TESTS.join(', ')}) pass`, run.status === 0, failedTests.slice(0, 5).join('; '))
}

async function main() {
  const stopAll = setTimeout(() => {
    say(`FAIL reliability run: still running after ${DEADLINE_MS / 60_000} minutes; stopping`)
    process.exit(1)
  }, DEADLINE_MS)
  stopAll.unref()
  build()
  const session = await startKeyringSession()
  const env = { ...process.env, ...session.env }
  const work = mkdtempSync(join(tmpdir(), 'certdesk-reliability-'))
  process.once('exit', () => rmSync(work, { recursive: true, force: true }))
  const started = Date.now()
  say(
    `reliability${short ? ' (short)' : ''}: ${ENGINES.join(' and ')}, seed ${SEED}, ${CRASH_ROUNDS} crash rounds, ${BAD_REQUESTS} bad requests`
  )
  const books = []
  let postgres = null
  try {
    for (const engine of ENGINES) {
      const at = Date.now()
      const book = async (name) => {
        const dir = join(work, `${engine}-${name}`)
        if (engine === 'sqlite') return sqliteBook(dir, env)
        // PostgreSQL's own defaults: every acknowledged commit is flushed before the answer.
        postgres ??= await startPostgresServer()
        return postgresBook(postgres, name, dir, env)
      }
      const secret = (text, what) => secrets.set(text, what)
      const race = await book('race')
      await lastDollarsRace({ book: race, serve, check, secret })
      const crash = await book('crash')
      await crashStorm(crash)
      const fuzz = await book('fuzz')
      await badInput(fuzz)
      books.push(race, crash, fuzz)
      say(`${engine}: ${Math.round((Date.now() - at) / 1000)} s`)
    }
    secretsScan(books)
    if (!short) await faultsAndBackups(work)
  } finally {
    session.stop()
    await postgres?.stop()
  }
  say(`reliability: ${passed} passed, ${failed} failed (${Math.round((Date.now() - started) / 1000)} s)`)
  process.exit(failed > 0 ? 1 : 0)
}

main().catch((err) => {
  say(`FAIL reliability run: ${err.stack ?? err}`)
  say(`reliability: ${passed} passed, ${failed + 1} failed`)
  process.exit(1)
})
