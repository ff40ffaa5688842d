// `npm run bench`: CertDesk's speed, scale and start-up, each figure against a baseline measured
// in the same run on the same machine, so the ratios hold on a noisy machine. Load
// comes from separate processes on loopback (wrk; autocannon where wrk is missing). Writes
// bench/results/latest.{md,json}.
//   --quick   10k and 100k orders only and shorter load runs (a smoke run, not for the README)
//   --mixed-only [--mixed-seconds S] [--mixed-rounds N]   only the mixed-load section, printed
//   --team-only [--team-seconds S] [--team-rounds N]   only the mixed load on two nodes over one
//               PostgreSQL against one node, printed
//   --ui-only   only the desktop UI at scale (jumps, 100 jumps, ledger CSV export, tab heap), printed
//   --http-only [--orders N]   only the API reads (on a store of N orders, 1,000,000 unless given)
//               and the order writes, each against its baseline, printed
//   --writes-only   only the order writes against raw better-sqlite3, printed
//   --acme-only [--acme-rounds N] [--acme-seconds S] [--acme-profile DIR]   only the ACME server
//               against Pebble, printed (DIR: a CPU profile of `certdesk serve` is written there)
//   --crypto-only   only the crypto rows, printed
//   --renderer-only   only the renderer's start-up script (built, then measured), printed
//   --postgres-only [--orders N]   only the PostgreSQL column (bench/lib/postgres-bench.mjs): the
//               latencies and API reads on a book of N orders (1,000,000 unless given) and the
//               order writes, each against its baseline, printed
//   --cpu-prof DIR   CertDesk servers of the read and write sections run under `node --cpu-prof`,
//               their profiles written to DIR when they stop
//   --from-json FILE   the markdown of an earlier run's JSON
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { apiReads, orderWrites, probe, round, spread, sqliteStorage } from '../bench/lib/api-bench.mjs'
import { Database, DB_FILE, fillOrders, makeReseller } from '../bench/lib/store.mjs'
import { mixedLoad, mixedMarkdown } from '../bench/lib/mixed.mjs'
import { teamLoad, teamMarkdown } from '../bench/lib/team.mjs'
import { ROOT } from '../bench/lib/paths.mjs'
import { median, startCertdesk } from '../bench/lib/procs.mjs'
import { buildCoreBench } from '../bench/lib/build-core-bench.mjs'
import { uiMarkdown, uiScale } from '../bench/lib/ui-scale.mjs'
import { READ_PROFILE_NOTES, WRITE_PROFILE_NOTES } from '../bench/lib/read-profile-notes.mjs'
import { measureRendererStartup, rendererMarkdown } from '../bench/lib/renderer-startup.mjs'
import { acmeMarkdown, acmeVsPebble } from '../bench/lib/acme-vs-pebble.mjs'
import { postgresFigures, postgresMarkdown } from '../bench/lib/postgres-bench.mjs'
import { startKeyringSession } from './keyring-session.mjs'
import { build } from './setup.mjs'

const quick = process.argv.includes('--quick')
const mixedOnly = process.argv.includes('--mixed-only')
// --ui-only: only the desktop UI at scale (bench/lib/ui-scale.mjs), printed.
const uiOnly = process.argv.includes('--ui-only')
const httpOnly = process.argv.includes('--http-only')
const writesOnly = process.argv.includes('--writes-only')
const rendererOnly = process.argv.includes('--renderer-only')
const postgresOnly = process.argv.includes('--postgres-only')
const stringArg = (name) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const CPU_PROF = stringArg('--cpu-prof')
/** Node flags of the CertDesk servers whose load is measured against a baseline. */
const SERVER_NODE_ARGS = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : []
const UI_SIZES = quick ? [10_000, 100_000] : [10_000, 1_000_000]
const numberArg = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const MIXED = { seconds: numberArg('--mixed-seconds', quick ? 4 : 10), rounds: numberArg('--mixed-rounds', 3) }
const teamOnly = process.argv.includes('--team-only')
const TEAM = { seconds: numberArg('--team-seconds', quick ? 4 : 10), rounds: numberArg('--team-rounds', quick ? 3 : 5) }
// The ACME server against Pebble (bench/lib/acme-vs-pebble.mjs).
const acmeOnly = process.argv.includes('--acme-only')
const cryptoOnly = process.argv.includes('--crypto-only')
const ACME = {
  rounds: numberArg('--acme-rounds', quick ? 3 : 9),
  seconds: numberArg('--acme-seconds', quick ? 4 : 8),
  profileDir: process.argv.includes('--acme-profile') ? process.argv[process.argv.indexOf('--acme-profile') + 1] : null
}
const SIZES = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
/** Seconds of each read round (ROUNDS of them per side). */
const READ_SECONDS = quick ? 2 : 4
/** Seconds of each write round. */
const WRITE_SECONDS = quick ? 2 : 4
const CONNECTIONS = 64
const log = (msg) => process.stderr.write(`bench: ${msg}\n`)
/** Alternating rounds of CertDesk and its baseline; each side's median round is its figure. */
const ROUNDS = quick ? 3 : 5
/** How the API reads and the order writes are loaded (bench/lib/api-bench.mjs). */
const READS = { rounds: ROUNDS, seconds: READ_SECONDS, connections: CONNECTIONS, log }
const WRITES = {
  rounds: ROUNDS,
  seconds: WRITE_SECONDS,
  connections: CONNECTIONS,
  serverNodeArgs: SERVER_NODE_ARGS,
  log
}
/** Targets from the issue; `higher` says which way is good. */
const TARGETS = {
  readRatio: 0.7,
  writeRatio: 0.7,
  domainP50Ms: 20,
  domainGrowth: 3,
  statusP50Ms: 20,
  statsP50Ms: 100,
  schedulerPassMs: 200,
  rssMb: 300
}

/** Milliseconds from spawning `certdesk serve` to its first answered API request. */
async function startupMs(dataDir, key, env) {
  const times = []
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint()
    const s = await startCertdesk(dataDir, env)
    const res = await fetch(`${s.url}/products`, { headers: { 'x-api-key': key } })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`could not start: first request answered ${res.status}`)
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    await s.stop()
  }
  return median(times)
}

async function main() {
  log('building CertDesk')
  build()
  const coreBench = await buildCoreBench(join(ROOT, 'out', 'bench'))
  const core = (args) => {
    const r = spawnSync(process.execPath, [coreBench, ...args], { encoding: 'utf8', env, timeout: 600_000 })
    if (r.status !== 0) throw new Error(`could not run core-bench ${args[0]}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const session = await startKeyringSession()
  const env = { ...process.env, ...session.env }
  const work = mkdtempSync(join(tmpdir(), 'certdesk-bench-'))
  process.once('exit', () => rmSync(work, { recursive: true, force: true }))
  const started = Date.now()
  if (mixedOnly) {
    const mixed = await mixedLoad({ work, env, ...MIXED, log })
    session.stop()
    process.stdout.write(mixedMarkdown(mixed))
    return
  }
  if (teamOnly) {
    const team = await teamLoad({ work, env, ...TEAM, log })
    session.stop()
    process.stdout.write(teamMarkdown(team))
    return
  }
  if (cryptoOnly) {
    session.stop()
    process.stdout.write(cryptoMarkdown(cryptoFigures(core, work)).join('\n'))
    return
  }
  if (acmeOnly) {
    const a = await acmeVsPebble({ work: join(work, 'acme'), env, ...ACME, log })
    session.stop()
    process.stdout.write(acmeMarkdown(a))
    return
  }
  if (postgresOnly) {
    const n = numberArg('--orders', 1_000_000)
    const pg = await postgresFigures({ work, env, log, sizes: [n], reads: READS, writes: WRITES })
    session.stop()
    process.stdout.write(
      `${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}, Node ${process.version}\n\n`
    )
    process.stdout.write(postgresMarkdown(pg, null, TARGETS))
    return
  }
  if (uiOnly) {
    const ui = await uiScale({ work, env, sizes: UI_SIZES, log })
    session.stop()
    process.stdout.write(uiMarkdown(ui))
    return
  }
  const sqlite = new Database(':memory:').prepare('SELECT sqlite_version() AS v').get().v
  const results = {
    date: new Date().toISOString(),
    quick,
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, sqlite },
    startup: {},
    scale: {},
    reads: {},
    writes: {},
    scheduler: null,
    crypto: null,
    notes: []
  }
  // The renderer as built above: its start-up script (bench/lib/renderer-startup.mjs).
  results.renderer = measureRendererStartup()
  log(`renderer start-up script: ${results.renderer.gzipBytes} bytes gzipped`)
  if (rendererOnly) {
    session.stop()
    process.stdout.write(rendererMarkdown(results.renderer))
    return
  }
  if (httpOnly || writesOnly) {
    if (httpOnly) {
      const n = numberArg('--orders', 1_000_000)
      const dir = join(work, `orders-${n}`)
      const r = makeReseller(dir, env)
      fillOrders(dir, r.id, n)
      log(`${n} orders generated`)
      const s = await startCertdesk(dir, env, [], SERVER_NODE_ARGS)
      await apiReads({
        work,
        url: s.url,
        pid: s.pid,
        key: r.key,
        reads: results.reads,
        notes: results.notes,
        opts: READS
      })
      results.readsStoreOrders = n
      await s.stop()
    }
    results.writes = await orderWrites({ storage: sqliteStorage(work, env), notes: results.notes, opts: WRITES })
    session.stop()
    process.stdout.write(
      [header(results), httpOnly ? readsMarkdown(results) : '', writesMarkdown(results), notesMarkdown(results)].join(
        '\n'
      )
    )
    return
  }

  // Start-up baseline: an empty store (one reseller, no orders).
  const emptyDir = join(work, 'empty')
  const emptyReseller = makeReseller(emptyDir, env)
  results.startup.emptyMs = round(await startupMs(emptyDir, emptyReseller.key, env), 1)
  {
    const s = await startCertdesk(emptyDir, env)
    probe(s.url, emptyReseller.key, 20, ['/products', '/orders?limit=50', '/stats'])
    results.startup.emptyRssMb = round(s.rss().peakMb, 1)
    await s.stop()
  }
  log(`empty store: first answer after ${results.startup.emptyMs} ms`)

  let big
  for (const n of SIZES) {
    const dir = join(work, `orders-${n}`)
    const r = makeReseller(dir, env)
    const t = Date.now()
    fillOrders(dir, r.id, n)
    const genSeconds = (Date.now() - t) / 1000
    const ledgerRows = new Database(join(dir, DB_FILE), { readonly: true })
      .prepare('SELECT COUNT(*) AS n FROM credit_transactions')
      .get().n
    log(`${n} orders, ${ledgerRows} ledger rows generated in ${genSeconds.toFixed(1)} s`)
    const startMs = await startupMs(dir, r.key, env)
    const s = await startCertdesk(dir, env, [], SERVER_NODE_ARGS)
    // Every request differs ({i:S} counts up from S), so none is answered from the read cache:
    // a customer looking for one shop, a broad word that 5% of all domains contain, and pages.
    const shop = Math.floor(n * 0.7)
    const paths = {
      domain: `/orders?domain=-{i:${shop}}.`,
      domainBroad: '/orders?domain=nimbus&offset={i:0}',
      status: '/orders?status=pending&offset={i:0}',
      list: '/orders?limit=50&offset={i:0}',
      stats: '/stats',
      credits: '/credits?offset={i:0}'
    }
    const p = probe(s.url, r.key, n >= 1_000_000 ? 30 : 50, Object.values(paths))
    const entry = { orders: n, ledgerRows, generateSeconds: round(genSeconds, 1), startupMs: round(startMs, 1) }
    for (const [name, path] of Object.entries(paths))
      entry[name] = { path, p50Ms: round(p[path].p50), p95Ms: round(p[path].p95) }
    entry.rssMb = round(s.rss().peakMb, 1)
    // A pass of the reissue scheduler with nothing due, in its own process on the same store.
    const pass = core(['scheduler', dir, '7'])
    entry.schedulerPass = { medianMs: round(pass.medianMs), maxMs: round(pass.maxMs), actions: pass.actionsInLastPass }
    if (pass.actionsInLastPass !== 0)
      results.notes.push(
        `scheduler on ${n} orders: the pass did ${pass.actionsInLastPass} things; the store was meant to have nothing due`
      )
    results.scale[n] = entry
    log(
      `${n}: domain ${entry.domain.p50Ms} ms, status ${entry.status.p50Ms} ms, stats ${entry.stats.p50Ms} ms, rss ${entry.rssMb} MB`
    )
    if (n === SIZES[SIZES.length - 1]) big = { dir, r, s }
    else await s.stop()
  }

  // API reads on the biggest store against a bare node:http server sending the same bytes.
  await apiReads({
    work,
    url: big.s.url,
    pid: big.s.pid,
    key: big.r.key,
    reads: results.reads,
    notes: results.notes,
    opts: READS
  })
  results.scale[SIZES[SIZES.length - 1]].rssAfterLoadMb = round(big.s.rss().peakMb, 1)
  await big.s.stop()

  // Order writes: POST /orders against raw better-sqlite3 writing the same rows.
  results.writes = await orderWrites({ storage: sqliteStorage(work, env), notes: results.notes, opts: WRITES })

  // Writes and reads at once, against each alone on the same server (bench/lib/mixed.mjs).
  results.mixed = await mixedLoad({ work, env, ...MIXED, log })
  if (results.mixed.non2xx || results.mixed.errors)
    results.notes.push(`mixed load: ${results.mixed.non2xx} non-2xx answers, ${results.mixed.errors} errors`)
  if (!results.mixed.moneyOk)
    results.notes.push(`mixed load: the books do not balance: ${results.mixed.violations.join('; ')}`)

  // The same reads, writes and latencies with the book in PostgreSQL, on the biggest size.
  results.postgres = await postgresFigures({
    work,
    env,
    log,
    sizes: [SIZES[SIZES.length - 1]],
    reads: READS,
    writes: WRITES
  })

  // The same mix on two nodes over one PostgreSQL, against one of them (bench/lib/team.mjs).
  results.team = await teamLoad({ work, env, ...TEAM, log })
  if (results.team.non2xx || results.team.errors)
    results.notes.push(`team: ${results.team.non2xx} non-2xx answers, ${results.team.errors} errors`)
  if (!results.team.moneyOk) results.notes.push(`team: the books do not balance: ${results.team.violations.join('; ')}`)

  results.crypto = cryptoFigures(core, work)
  results.acme = await acmeVsPebble({ work: join(work, 'acme'), env, ...ACME, log })
  results.ui = await uiScale({ work, env, sizes: UI_SIZES, log })
  results.seconds = Math.round((Date.now() - started) / 1000)
  session.stop()

  const outDir = join(ROOT, 'bench', 'results')
  mkdirSync(outDir, { recursive: true })
  const name = quick ? 'quick' : 'latest'
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(join(outDir, `${name}.md`), markdown(results))
  process.stdout.write(markdown(results))
  log(`done in ${results.seconds} s; wrote bench/results/${name}.md and .json`)
}

const mark = (ok) => (ok ? 'meets' : '**below**')

// Crypto: local CA issuance and CSR decode against the bare node:crypto sign and verify they
// build on, same key type, alternating rounds (bench/src/core-bench.ts).
function cryptoFigures(core, work) {
  const c = core(['crypto', join(work, 'crypto'), quick ? '0.5' : '1', quick ? '3' : '5'])
  const keys = ['bareSignP256', 'issueP256', 'issueRsa2048', 'bareVerifyP256', 'importedVerifyP256', 'decodeP256', 'bareVerifyRsa2048', 'importedVerifyRsa2048', 'decodeRsa2048'] // prettier-ignore
  const out = { rounds: c.rounds }
  for (const k of keys) {
    out[`${k}PerSecond`] = round(c[`${k}PerSecond`], 0)
    out[`${k}Rounds`] = c.perRound[k].map((x) => round(x, 0))
  }
  for (const k of [
    'issueP256Ratio',
    'issueRsa2048Ratio',
    'decodeP256Ratio',
    'decodeRsa2048Ratio',
    'decodeP256ToImportedRatio',
    'decodeRsa2048ToImportedRatio'
  ])
    // prettier-ignore
    out[k] = round(c[k], 3)
  log(`crypto: ${JSON.stringify(out)}`)
  return out
}

/** Targets of the crypto rows: a share of the bare operation with the same key type. */
const CRYPTO_TARGETS = { issue: 0.25, decode: 0.3 }

function cryptoMarkdown(c) {
  // A run from before these rows had other figures (see its own markdown).
  if (!c || c.issueP256Ratio === undefined) return []
  const row = (what, k, base, ratio, target) =>
    `| ${what} | ${c[`${k}PerSecond`]} (${spread(c[`${k}Rounds`])}) | ${c[`${base}PerSecond`]} | **${c[ratio]}** | ≥ ${target}: ${mark(c[ratio] >= target)} |`
  return [
    '## Crypto (in-process, one core)',
    '',
    `Each operation against the bare node:crypto operation it is built on, with the same key type, in ${c.rounds}`,
    'alternating rounds; the rate is the median round, the ratio the median of the per-round ratios. Issuance',
    "signs with the CA intermediate's key (ECDSA P-256) whatever the leaf's key, so its baseline is a bare",
    'P-256 / SHA-256 sign of a TBSCertificate-sized message; storage is not part of it. CSR decode checks the',
    "request's signature with the key the request carries: its baseline is one bare `crypto.verify` of that",
    'signature from those key bytes (SubjectPublicKeyInfo DER). For context, the same verify with the key imported',
    `beforehand: ${c.importedVerifyP256PerSecond}/s P-256 (decode ${c.decodeP256ToImportedRatio} of it), ` +
      `${c.importedVerifyRsa2048PerSecond}/s RSA 2048 (decode ${c.decodeRsa2048ToImportedRatio} of it); OpenSSL's import of`,
    'a P-256 key costs more than the verify itself.',
    '',
    '| operation | per second, median (rounds) | baseline per second | ratio | target |',
    '|---|---|---|---|---|',
    row('local CA issuance, P-256 leaf (baseline: bare P-256 sign)', 'issueP256', 'bareSignP256', 'issueP256Ratio', CRYPTO_TARGETS.issue),
    row('local CA issuance, RSA 2048 leaf (baseline: bare P-256 sign)', 'issueRsa2048', 'bareSignP256', 'issueRsa2048Ratio', CRYPTO_TARGETS.issue),
    row('CSR decode with signature check, P-256 (baseline: bare P-256 verify from the key bytes)', 'decodeP256', 'bareVerifyP256', 'decodeP256Ratio', CRYPTO_TARGETS.decode),
    row('CSR decode with signature check, RSA 2048 (baseline: bare RSA 2048 verify from the key bytes)', 'decodeRsa2048', 'bareVerifyRsa2048', 'decodeRsa2048Ratio', CRYPTO_TARGETS.decode),
    ''
  ] // prettier-ignore
}

/** Date, machine and how the ratios are measured. */
function header(r) {
  return [
    `# CertDesk benchmarks`,
    '',
    `${r.date}, ${r.machine.cores} × ${r.machine.cpu}, Node ${r.machine.node}, SQLite ${r.machine.sqlite}` +
      (r.quick ? ' (quick run: not the full sizes)' : ''),
    '',
    `Every ratio compares CertDesk with a baseline measured in the same run; load comes from a separate`,
    `${r.reads[Object.keys(r.reads)[0]]?.tool ?? r.writes?.tool ?? 'wrk'} process on loopback, ${CONNECTIONS} connections. CertDesk and its baseline run in`,
    `${ROUNDS} alternating rounds; each side's figure is its median round (the spread of the rounds beside it),`,
    `so a neighbour's burst on a shared machine moves one round, not the figure. A target is met when the median meets it.`,
    ''
  ].join('\n')
}

function readsMarkdown(r) {
  const sizes = Object.keys(r.scale).map(Number)
  const orders = r.readsStoreOrders ?? r.scale[sizes[sizes.length - 1]].orders
  const lines = [
    '## API reads (store of ' + orders.toLocaleString('en') + ' orders)',
    '',
    'The same GET repeated, as a polling script sends it: CertDesk answers it from its read cache while',
    'the store is unchanged (checked on every request). The uncached cost of each query is under Scale.',
    '',
    '| request | CertDesk req/s (rounds) | bare node:http req/s (rounds) | ratio (per round) | p99 CertDesk / bare ms (rounds) | p99 ratio | target |',
    '|---|---|---|---|---|---|---|'
  ]
  for (const [path, x] of Object.entries(r.reads)) {
    lines.push(
      `| GET ${path} | ${x.certdesk.rps} (${spread(x.certdesk.rpsRounds)}) | ${x.bare.rps} (${spread(x.bare.rpsRounds)}) | ` +
        `**${x.rpsRatio}** (${spread(x.roundRatios)}) | ${x.certdesk.p99Ms} / ${x.bare.p99Ms} (${spread(x.certdesk.p99Rounds)} / ${spread(x.bare.p99Rounds)}) | ` +
        `**${x.p99Ratio}** | ≥ ${TARGETS.readRatio} both: ${mark(x.rpsRatio >= TARGETS.readRatio && x.p99Ratio >= TARGETS.readRatio)} |`
    )
  }
  lines.push(
    '',
    'Server CPU time per request (µs, median round; robust to neighbours on a shared machine): ' +
      Object.entries(r.reads)
        .map(
          ([path, x]) =>
            `GET ${path} CertDesk ${x.cpuUsPerRequest.certdesk} / bare ${x.cpuUsPerRequest.bare} (ratio ${x.cpuRatio})`
        )
        .join('; ') +
      '.',
    '',
    READ_PROFILE_NOTES,
    ''
  )
  return lines.join('\n')
}

function writesMarkdown(r) {
  const w = r.writes
  return [
    '## Order writes',
    '',
    '| | req/s, median (rounds) | p99 ms | money check |',
    '|---|---|---|---|',
    `| POST /orders (CertDesk) | ${w.certdesk.rps} (${spread(w.certdesk.rpsRounds)}) | ${w.certdesk.p99Ms} | ${w.certdesk.moneyOk ? `ok, ${w.certdesk.orders} orders` : '**FAILED**'} |`,
    `| raw better-sqlite3 behind bare node:http | ${w.rawHttp.rps} (${spread(w.rawHttp.rpsRounds)}) | ${w.rawHttp.p99Ms} | ${w.rawHttp.moneyOk ? 'ok' : '**FAILED**'} |`,
    ...(w.rawShared
      ? [
          `| raw better-sqlite3 sharing COMMITs as CertDesk does (not a target) | ${w.rawShared.rps} (${spread(w.rawShared.rpsRounds)}) | ${w.rawShared.p99Ms} | ${w.rawShared.moneyOk ? 'ok' : '**FAILED**'} |`
        ]
      : []),
    `| raw better-sqlite3 in-process loop | ${w.rawInProcess.perSecond} | | |`,
    '',
    `Ratio CertDesk / raw over HTTP: **${w.rpsRatio}** (per round ${spread(w.roundRatios)}; target ≥ ${TARGETS.writeRatio}: ${mark(w.rpsRatio >= TARGETS.writeRatio)}); ` +
      `CertDesk / raw in-process: ${w.inProcessRatio}; server CPU µs per request CertDesk ${w.cpuUsPerRequest.certdesk} / raw ${w.cpuUsPerRequest.rawHttp} ` +
      `(ratio ${w.cpuRatio}). ` +
      (w.rawShared
        ? `CertDesk shares one COMMIT among orders that arrive together; the raw writer doing the same: ` +
          `ratio ${w.rawShared.rpsRatio} (per round ${spread(w.rawShared.roundRatios)}), server CPU µs per request ${w.rawShared.cpuUsPerRequest}. `
        : '') +
      `The money check: balance moved by exactly the orders' totals, ` +
      `the audit (bench/lib/store.mjs) clean, and an order for every successful answer.`,
    '',
    WRITE_PROFILE_NOTES,
    ''
  ].join('\n')
}

function notesMarkdown(r) {
  return ['## Notes', '', ...(r.notes.length ? r.notes.map((n) => `- ${n}`) : ['- none']), ''].join('\n')
}

export function markdown(r) {
  const sizes = Object.keys(r.scale).map(Number)
  const big = r.scale[sizes[sizes.length - 1]]
  const small = r.scale[sizes[0]]
  const growth = (k) => sizes.map((n) => r.scale[n][k].p50Ms).join(' → ')
  const c = r.crypto
  const lines = [header(r), readsMarkdown(r), writesMarkdown(r)]
  lines.push(
    ...(r.mixed ? [mixedMarkdown(r.mixed)] : []),
    ...(r.postgres ? [postgresMarkdown(r.postgres, r, TARGETS)] : []),
    ...(r.team ? [teamMarkdown(r.team)] : []),
    '## Scale',
    '',
    `| store | ${sizes.map((n) => n.toLocaleString('en') + ' orders').join(' | ')} | target |`,
    `|---|${sizes.map(() => '---').join('|')}|---|`,
    `| ledger rows | ${sizes.map((n) => r.scale[n].ledgerRows.toLocaleString('en')).join(' | ')} | |`,
    `| GET /orders?domain=<one shop> p50 ms | ${growth('domain')} | < 20: ${mark(big.domain.p50Ms < TARGETS.domainP50Ms)} |`.replace(
      / → /g,
      ' | '
    ),
    `| GET /orders?status=pending p50 ms | ${growth('status')} | < 20: ${mark(big.status.p50Ms < TARGETS.statusP50Ms)} |`.replace(
      / → /g,
      ' | '
    ),
    `| GET /stats p50 ms | ${growth('stats')} | < 100: ${mark(big.stats.p50Ms < TARGETS.statsP50Ms)} |`.replace(
      / → /g,
      ' | '
    ),
    `| GET /orders?limit=50 p50 ms | ${growth('list')} | |`.replace(/ → /g, ' | '),
    `| GET /credits p50 ms | ${growth('credits')} | |`.replace(/ → /g, ' | '),
    `| GET /orders?domain=nimbus (5% of orders match) p50 ms | ${growth('domainBroad')} | < ${TARGETS.domainP50Ms}, growth < ×${TARGETS.domainGrowth}: ${mark(big.domainBroad.p50Ms < TARGETS.domainP50Ms && big.domainBroad.p50Ms / small.domainBroad.p50Ms < TARGETS.domainGrowth)} |`.replace(
      / → /g,
      ' | '
    ),
    `| scheduler pass, nothing due, median ms | ${sizes.map((n) => r.scale[n].schedulerPass.medianMs).join(' | ')} | < 200: ${mark(big.schedulerPass.medianMs < TARGETS.schedulerPassMs)} |`,
    `| main-process peak RSS MB | ${sizes.map((n) => r.scale[n].rssMb).join(' | ')} | < 300: ${mark((big.rssAfterLoadMb ?? big.rssMb) < TARGETS.rssMb)} |`,
    '',
    `Peak RSS on the biggest store after the read load runs too: ${big.rssAfterLoadMb ?? big.rssMb} MB (empty store: ${r.startup.emptyRssMb} MB).`,
    `Growth from ${sizes[0].toLocaleString('en')} to ${sizes[sizes.length - 1].toLocaleString('en')} orders: domain ×${round(big.domain.p50Ms / small.domain.p50Ms, 1)}, ` +
      `domain=nimbus ×${round(big.domainBroad.p50Ms / small.domainBroad.p50Ms, 1)}, ` +
      `status ×${round(big.status.p50Ms / small.status.p50Ms, 1)}, stats ×${round(big.stats.p50Ms / small.stats.p50Ms, 1)}.`,
    '',
    ...(r.acme ? [acmeMarkdown(r.acme)] : []),
    ...(r.ui ? [uiMarkdown(r.ui)] : []),
    ...(r.renderer ? [rendererMarkdown(r.renderer)] : []),
    '## Start-up',
    '',
    `\`certdesk serve\` to its first answered request (median of 3): empty store ${r.startup.emptyMs} ms, ` +
      sizes.map((n) => `${n.toLocaleString('en')} orders ${r.scale[n].startupMs} ms`).join(', ') +
      `; ratio biggest / empty: ${round(big.startupMs / r.startup.emptyMs)}.`,
    '',
    ...cryptoMarkdown(c),
    '## Notes',
    '',
    ...(r.notes.length ? r.notes.map((n) => `- ${n}`) : ['- none']),
    '',
    `Whole run: ${r.seconds} s.`,
    ''
  )
  return lines.join('\n')
}

// --from-json FILE: the markdown of an earlier run's JSON, printed (the tables re-rendered).
const fromJson = process.argv.indexOf('--from-json')
const run =
  fromJson >= 0
    ? async () => process.stdout.write(markdown(JSON.parse(readFileSync(process.argv[fromJson + 1], 'utf8'))))
    : main
run().catch((err) => {
  process.stderr.write(`bench: ${err.stack ?? err}\n`)
  process.exit(1)
})
