// The API measurements `npm run bench` makes on either engine: the same GET repeated against a
// bare node:http server sending the very bytes CertDesk answered, POST /orders against a raw
// baseline doing the same storage work, and the sequential latency probe. What differs between
// SQLite and PostgreSQL (where the store is, its baseline writer, its audit) comes in a
// `storage` object; see `sqliteStorage` here and bench/lib/postgres-bench.mjs.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { load } from './load.mjs'
import { ROOT } from './paths.mjs'
import { median, startCertdesk, startNode } from './procs.mjs'
import { admin, auditStore, Database, DB_FILE, makeReseller } from './store.mjs'

export const round = (x, d = 2) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d)

/**
 * Load results of the rounds of one side, summed up: the median round's req/s and p99 (a
 * neighbour's burst on a shared machine moves one round, not the median), their spread, and
 * every answer and error of every round.
 */
export const summary = (runs) => ({
  rps: median(runs.map((x) => x.rps)),
  p99: median(runs.map((x) => x.p99)),
  rpsRounds: runs.map((x) => round(x.rps, 0)),
  p99Rounds: runs.map((x) => x.p99),
  cpuUs: runs.every((x) => x.cpuUsPerRequest !== null) ? median(runs.map((x) => x.cpuUsPerRequest)) : null,
  ok: runs.reduce((n, x) => n + x.ok, 0),
  non2xx: runs.reduce((n, x) => n + x.non2xx, 0),
  errors: runs.reduce((n, x) => n + x.errors, 0),
  tool: runs[0]?.tool
})
/** The range of a figure over its rounds; an earlier run's JSON may not have them. */
export const spread = (xs) => (xs?.length ? `${Math.min(...xs)}–${Math.max(...xs)}` : 'n/a')

/** Sequential GETs of each path over one connection (bench/lib/probe.mjs): p50, p95, p99 in ms. */
export function probe(url, key, n, paths) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bench', 'lib', 'probe.mjs'), url, key, String(n), ...paths], {
    encoding: 'utf8',
    timeout: 600_000
  })
  if (r.status !== 0) throw new Error(`could not probe ${paths.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/**
 * GET /products and GET /orders?limit=50 repeated on a running CertDesk (`url`, process `pid`)
 * against a bare node:http server sending the very bytes CertDesk answered, in alternating
 * rounds (`opts`: rounds, seconds, connections, log). Fills `reads[path]`.
 */
export async function apiReads({ work, url, pid, key, reads, notes, opts }) {
  const paths = ['/products', '/orders?limit=50']
  const bodies = {}
  for (const path of paths) {
    const res = await fetch(url + path, { headers: { 'x-api-key': key } })
    bodies[path] = await res.text()
  }
  const file = join(work, `bare-bodies-${pid}.json`)
  writeFileSync(file, JSON.stringify(bodies))
  const bare = await startNode(join(ROOT, 'bench', 'lib', 'bare-server.mjs'), [file])
  for (const path of paths) {
    const bareRuns = []
    const apiRuns = []
    for (let i = 0; i < opts.rounds; i++) {
      const warmup = i === 0 ? 3 : 1
      const common = { path, connections: opts.connections, duration: opts.seconds, warmup }
      bareRuns.push(await load({ ...common, url: bare.url, pid: bare.pid }))
      apiRuns.push(await load({ ...common, url, key, pid }))
    }
    const base = summary(bareRuns)
    const api = summary(apiRuns)
    if (api.non2xx || api.errors)
      notes.push(`GET ${path}: ${api.non2xx} non-2xx answers, ${api.errors} errors under load`)
    reads[path] = {
      bytes: Buffer.byteLength(bodies[path]),
      tool: api.tool,
      bare: { rps: round(base.rps, 0), p99Ms: base.p99, rpsRounds: base.rpsRounds, p99Rounds: base.p99Rounds },
      certdesk: { rps: round(api.rps, 0), p99Ms: api.p99, rpsRounds: api.rpsRounds, p99Rounds: api.p99Rounds },
      rpsRatio: round(api.rps / base.rps),
      p99Ratio: round(base.p99 / Math.max(api.p99, 0.001)),
      roundRatios: apiRuns.map((x, i) => round(x.rps / bareRuns[i].rps)),
      cpuUsPerRequest: { bare: round(base.cpuUs, 1), certdesk: round(api.cpuUs, 1) },
      cpuRatio: base.cpuUs && api.cpuUs ? round(base.cpuUs / api.cpuUs) : null
    }
    opts.log(`GET ${path}: ${round(api.rps, 0)} req/s vs bare ${round(base.rps, 0)} (${reads[path].rpsRatio})`)
  }
  await bare.stop()
}

/**
 * The SQLite side of `orderWrites`: a data dir per store, raw better-sqlite3 behind bare
 * node:http as the baseline (raw-writes.mjs), and an in-process loop of the same transactions.
 */
export const sqliteStorage = (work, env) => ({
  name: 'raw better-sqlite3',
  async fresh(name) {
    const dir = join(work, name)
    const r = makeReseller(dir, env)
    admin(dir, ['credit', 'add', '--reseller', String(r.id), '--amount', '90000000'], env)
    return { dir, r, env }
  },
  async balanceOf(store) {
    const db = new Database(join(store.dir, DB_FILE), { readonly: true })
    try {
      return {
        balance: db.prepare('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?').get(store.r.id).b,
        orders: db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(total_cents), 0) AS t FROM orders').get()
      }
    } finally {
      db.close()
    }
  },
  audit: async (store) => auditStore(store.dir),
  startRaw: (store) =>
    startNode(join(ROOT, 'bench', 'lib', 'raw-writes.mjs'), [store.dir, String(store.r.id), 'serve']),
  // The same rows sharing COMMITs the way CertDesk's SQLite engine shares them.
  second: {
    key: 'rawShared',
    label: 'sharing commits',
    start: (store) => startNode(join(ROOT, 'bench', 'lib', 'raw-writes.mjs'), [store.dir, String(store.r.id), 'shared'])
  },
  inProcess(store) {
    const loop = spawnSync(
      process.execPath,
      [join(ROOT, 'bench', 'lib', 'raw-writes.mjs'), store.dir, String(store.r.id), 'loop', '20000'],
      { encoding: 'utf8', timeout: 300_000 }
    )
    return JSON.parse(loop.stdout).perSecond
  }
})

/**
 * POST /orders on a fresh store against the storage's raw baseline doing the same writes behind
 * a bare node:http server, in alternating rounds; then the money check. Answers the figures
 * (`opts`: rounds, seconds, connections, serverNodeArgs, log); problems go to `notes`.
 */
export async function orderWrites({ storage, notes, opts }) {
  const body = { product_id: 2, domain: 'bench-writes.example.com', period: 12 }
  // The books after the load: balance moved by exactly the orders' totals, the audit clean, and
  // an order for every successful answer. wrk stops on time, so up to one request per
  // connection and load run may have been written while its answer was never read.
  const check = async (label, store, before, result) => {
    const after = await storage.balanceOf(store)
    const audit = await storage.audit(store)
    const lost = before.balance - after.balance - (after.orders.t - before.orders.t)
    const written = after.orders.n - before.orders.n
    const unread = result.tool === 'wrk' ? opts.connections * result.runs : 0
    const ok = audit.violations.length === 0 && lost === 0 && written >= result.ok && written <= result.ok + unread
    if (!ok) {
      notes.push(
        `${label}: money check failed: ${audit.violations.slice(0, 3).join('; ')} balance drift ${lost} cents, ` +
          `${written} orders for ${result.ok} successful answers`
      )
    }
    return { orders: written, moneyOk: ok }
  }
  const run = (url, key, i, pid) =>
    load({
      pid,
      url,
      path: '/orders',
      key,
      method: 'POST',
      body,
      connections: opts.connections,
      duration: opts.seconds,
      warmup: i === 0 ? 2 : 1
    })

  const apiStore = await storage.fresh('writes-api')
  const before = await storage.balanceOf(apiStore)
  const s = await startCertdesk(apiStore.dir, apiStore.env, [], opts.serverNodeArgs)
  const rawStore = await storage.fresh('writes-raw')
  const rawBefore = await storage.balanceOf(rawStore)
  const raw = await storage.startRaw(rawStore)
  // A second raw writer, where the storage has one (`storage.second`): the same rows written the
  // way CertDesk's engine writes them (pipelined, or sharing COMMITs), beside the first.
  const second = storage.second
  const secondStore = second ? await storage.fresh(`writes-raw-${second.label.replace(/ /g, '-')}`) : null
  const secondBefore = secondStore ? await storage.balanceOf(secondStore) : null
  const secondRaw = secondStore ? await second.start(secondStore) : null
  // Alternating rounds, the median round of each side (see the reads); every answer of every
  // run, warm-ups included, counted for the books.
  const apiRuns = []
  const rawRuns = []
  const secondRuns = []
  for (let i = 0; i < opts.rounds; i++) {
    apiRuns.push(await run(s.url, apiStore.r.key, i, s.pid))
    rawRuns.push(await run(raw.url, undefined, i, raw.pid))
    if (secondRaw) secondRuns.push(await run(secondRaw.url, undefined, i, secondRaw.pid))
  }
  await s.stop()
  await raw.stop()
  await secondRaw?.stop()
  const api = summary(apiRuns)
  const rawRes = summary(rawRuns)
  // The warm-up runs wrote orders too: the books count them through the answers the store holds.
  const answered = (runs) => ({ ok: runs.reduce((n, x) => n + x.ok + (x.warmupOk ?? 0), 0), runs: runs.length * 2 })
  const apiCheck = await check('POST /orders', apiStore, before, { tool: api.tool, ...answered(apiRuns) })
  const rawCheck = await check(storage.name, rawStore, rawBefore, { tool: rawRes.tool, ...answered(rawRuns) })
  const secondRes = secondRaw ? summary(secondRuns) : null
  const secondCheck = secondRaw
    ? await check(`${storage.name}, ${second.label}`, secondStore, secondBefore, {
        tool: secondRes.tool,
        ...answered(secondRuns)
      })
    : null
  const inProcess = storage.inProcess ? storage.inProcess(await storage.fresh('writes-loop')) : null
  const secondFigures = secondRes
    ? {
        rps: round(secondRes.rps, 0),
        p99Ms: secondRes.p99,
        rpsRounds: secondRes.rpsRounds,
        non2xx: secondRes.non2xx,
        errors: secondRes.errors,
        cpuUsPerRequest: round(secondRes.cpuUs, 1),
        ...secondCheck,
        rpsRatio: round(api.rps / secondRes.rps),
        roundRatios: apiRuns.map((x, i) => round(x.rps / secondRuns[i].rps))
      }
    : null
  const writes = {
    tool: api.tool,
    certdesk: {
      rps: round(api.rps, 0),
      p99Ms: api.p99,
      rpsRounds: api.rpsRounds,
      non2xx: api.non2xx,
      errors: api.errors,
      ...apiCheck
    },
    rawHttp: {
      rps: round(rawRes.rps, 0),
      p99Ms: rawRes.p99,
      rpsRounds: rawRes.rpsRounds,
      non2xx: rawRes.non2xx,
      errors: rawRes.errors,
      ...rawCheck
    },
    ...(second ? { [second.key]: secondFigures } : {}),
    roundRatios: apiRuns.map((x, i) => round(x.rps / rawRuns[i].rps)),
    cpuUsPerRequest: { rawHttp: round(rawRes.cpuUs, 1), certdesk: round(api.cpuUs, 1) },
    cpuRatio: rawRes.cpuUs && api.cpuUs ? round(rawRes.cpuUs / api.cpuUs) : null,
    rawInProcess: inProcess === null ? null : { perSecond: round(inProcess, 0) },
    rpsRatio: round(api.rps / rawRes.rps),
    inProcessRatio: inProcess === null ? null : round(api.rps / inProcess)
  }
  opts.log(
    `POST /orders: ${round(api.rps, 0)} req/s vs ${storage.name} ${round(rawRes.rps, 0)} (${writes.rpsRatio})` +
      (secondRes ? `, ${second.label} ${round(secondRes.rps, 0)} (${writes[second.key].rpsRatio})` : '') +
      `; money ${apiCheck.moneyOk ? 'ok' : 'WRONG'}`
  )
  return writes
}
