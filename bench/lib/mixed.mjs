// The mixed-load section of `npm run bench`: order writes and reads at the same time, the way
// several resellers' scripts use one CertDesk. One request in four places an order, the other
// three read (a page of the order list, the statistics, the catalogue), spread over several
// resellers. The same server also runs the writes alone and the reads alone, in alternating
// rounds; from those two rates follows what the mix would reach if writes and reads did not
// disturb each other (the harmonic combination of their per-request costs), and the figure is
// how close the mix comes to it.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { auditStore, Database, DB_FILE } from './store.mjs'
import { CLI, ROOT } from './paths.mjs'
import { hasWrk } from './load.mjs'
import { cpuMs, median, startCertdesk } from './procs.mjs'

/** One write per WRITE_SHARE requests in the mix. */
export const WRITE_SHARE = 4
export const MIXED_TARGET = 0.7

const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d

/** `certdesk admin --data-dir D …args` in a child process; its JSON answer. */
export function adminAsync(dataDir, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out))
        : reject(new Error(`could not run certdesk admin ${args.join(' ')}: ${err || out}`))
    )
  })
}

/** `count` resellers in the Standard group, each with an API key and credit for every order the runs place. */
async function makeResellers(dataDir, env, count) {
  // The first one alone: it creates the store, which the others then share.
  const one = async (i) => {
    const r = await adminAsync(
      dataDir,
      ['reseller', 'add', '--name', `Mixed ${i}`, '--email', `mixed-${i}@example.test`, '--company', `Mixed ${i}`],
      env
    )
    const id = r.reseller.id
    const k = await adminAsync(dataDir, ['apikey', 'create', '--reseller', String(id)], env)
    await adminAsync(dataDir, ['credit', 'add', '--reseller', String(id), '--amount', '90000000'], env)
    return { id, key: k.api_key }
  }
  const first = await one(1)
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => one(i + 2)))
  return [first, ...rest]
}

/** One load run of `mix` (mixed, writes or reads); returns requests per second and the answers' classes. */
export function drive({ url, keys, mix, seconds, connections, pages }) {
  const env = { ...process.env, CERTDESK_KEYS: keys.join(','), CERTDESK_MIX: mix, CERTDESK_PAGES: String(pages) }
  const wrk = hasWrk()
  const args = wrk
    ? [
        'wrk',
        '-t1',
        `-c${connections}`,
        `-d${seconds}s`,
        '--timeout',
        '10s',
        '-s',
        join(ROOT, 'bench', 'lib', 'mixed.lua'),
        url
      ]
    : [process.execPath, join(ROOT, 'bench', 'lib', 'mixed-autocannon.mjs'), url, String(seconds), String(connections)]
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['--signal=KILL', String(seconds + 60), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (code !== 0 || !line)
        return reject(new Error(`could not run the ${mix} load: exit ${code}: ${(err || out).slice(-500)}`))
      const r = JSON.parse(line)
      resolve({
        tool: wrk ? 'wrk' : 'autocannon',
        rps: r.requests / (r.durationUs / 1e6),
        requests: r.requests,
        seconds: r.durationUs / 1e6,
        non2xx: r.non2xx,
        errors: r.connectErrors + r.readErrors + r.writeErrors + r.timeouts,
        p50Ms: r.p50Ms,
        p99Ms: r.p99Ms
      })
    })
  })
}

function orderCount(dataDir) {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return db.prepare('SELECT COUNT(*) AS n FROM orders').get().n
  } finally {
    db.close()
  }
}

/**
 * Runs the section on a fresh store in `work`. `rounds` of writes alone, reads alone and the mix,
 * `seconds` each; the ratio is the median over the rounds of mix / prediction.
 */
export async function mixedLoad({
  work,
  env,
  seconds = 10,
  rounds = 3,
  connections = 32,
  resellerCount = 8,
  pages = 4,
  log = () => {}
}) {
  const dir = join(work, 'mixed')
  const resellers = await makeResellers(dir, env, resellerCount)
  const keys = resellers.map((r) => r.key)
  const s = await startCertdesk(dir, env)
  // The server's own CPU time per request as well: on a machine shared with other jobs it says
  // what each request cost even when a neighbour took the core away for part of a run.
  const run = async (mix, secs = seconds) => {
    const cpu0 = cpuMs(s.pid)
    const r = await drive({ url: s.url, keys, mix, seconds: secs, connections, pages })
    return { ...r, cpuMsPerRequest: (cpuMs(s.pid) - cpu0) / r.requests }
  }
  const out = { tool: null, connections, resellers: resellerCount, pages, seconds, rounds: [], non2xx: 0, errors: 0 }
  try {
    await run('mixed', 2) // warm-up: JIT, statement cache, first answers
    for (let i = 0; i < rounds; i++) {
      const w = await run('writes')
      const r = await run('reads')
      const before = orderCount(dir)
      const m = await run('mixed')
      const written = orderCount(dir) - before
      // Harmonic combination: a mix of one write to three reads costs (1/W + 3/R) / 4 per request.
      const predicted = 1 / (1 / WRITE_SHARE / w.rps + (WRITE_SHARE - 1) / WRITE_SHARE / r.rps)
      const predictedCpu = w.cpuMsPerRequest / WRITE_SHARE + (r.cpuMsPerRequest * (WRITE_SHARE - 1)) / WRITE_SHARE
      out.tool = m.tool
      out.non2xx += w.non2xx + r.non2xx + m.non2xx
      out.errors += w.errors + r.errors + m.errors
      out.rounds.push({
        writesRps: round(w.rps, 0),
        readsRps: round(r.rps, 0),
        mixedRps: round(m.rps, 0),
        mixedOrdersPerSecond: round(written / m.seconds, 0),
        mixedP99Ms: m.p99Ms,
        predictedRps: round(predicted, 0),
        ratio: round(m.rps / predicted),
        cpuMs: {
          writes: round(w.cpuMsPerRequest, 3),
          reads: round(r.cpuMsPerRequest, 3),
          mixed: round(m.cpuMsPerRequest, 3)
        },
        cpuRatio: round(predictedCpu / m.cpuMsPerRequest)
      })
      log(
        `mixed round ${i + 1}: writes ${round(w.rps, 0)}/s, reads ${round(r.rps, 0)}/s, mix ${round(m.rps, 0)}/s ` +
          `(${round(written / m.seconds, 0)} orders/s) of ${round(predicted, 0)} predicted: ${round(m.rps / predicted)}; ` +
          `server CPU ms/request ${round(w.cpuMsPerRequest, 3)} / ${round(r.cpuMsPerRequest, 3)} / ${round(m.cpuMsPerRequest, 3)}: ${round(predictedCpu / m.cpuMsPerRequest)}`
      )
    }
    const rss = s.rss()
    out.rssMb = round(rss.rssMb, 1)
    out.peakRssMb = round(rss.peakMb, 1)
  } finally {
    await s.stop()
  }
  const pick = (k) => median(out.rounds.map((x) => x[k]))
  out.median = {
    writesRps: pick('writesRps'),
    readsRps: pick('readsRps'),
    mixedRps: pick('mixedRps'),
    mixedOrdersPerSecond: pick('mixedOrdersPerSecond'),
    predictedRps: pick('predictedRps')
  }
  out.ratio = pick('ratio')
  out.cpuRatio = pick('cpuRatio')
  const audit = auditStore(dir)
  out.orders = audit.orders
  out.moneyOk = audit.violations.length === 0
  out.violations = audit.violations.slice(0, 3)
  return out
}

export function mixedMarkdown(x) {
  const lines = [
    `## Mixed load: order writes and reads at once`,
    '',
    `${x.resellers} resellers, ${x.connections} connections (${x.tool}), ${x.seconds} s per run: one POST /orders to three reads ` +
      `(GET /orders?limit=50 at ${x.pages} offsets, GET /stats, GET /products), against the writes alone and the reads ` +
      `alone on the same server in alternating rounds. The prediction is the harmonic combination of their rates: ` +
      `1 / (1/4 ÷ writes + 3/4 ÷ reads).`,
    '',
    '| round | writes alone req/s | reads alone req/s | mix req/s (orders/s) | predicted req/s | mix / predicted | mix p99 ms | server CPU ms/request: writes / reads / mix | CPU ratio |',
    '|---|---|---|---|---|---|---|---|---|',
    ...x.rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.writesRps} | ${r.readsRps} | ${r.mixedRps} (${r.mixedOrdersPerSecond}) | ${r.predictedRps} | ${r.ratio} | ${r.mixedP99Ms} | ` +
        `${r.cpuMs.writes} / ${r.cpuMs.reads} / ${r.cpuMs.mixed} | ${r.cpuRatio} |`
    ),
    '',
    `Median ratio **${x.ratio}** (target ≥ ${MIXED_TARGET}: ${x.ratio >= MIXED_TARGET ? 'meets' : '**below**'}); ` +
      `the same figure from the server's CPU time per request (robust to neighbours on a shared machine): ${x.cpuRatio}; ` +
      `${x.non2xx} non-2xx answers, ${x.errors} errors; server RSS ${x.rssMb} MB (peak ${x.peakRssMb} MB); ` +
      `${x.orders.toLocaleString('en')} orders at the end, books ${x.moneyOk ? 'balance' : `**do not balance**: ${x.violations.join('; ')}`}.`,
    ''
  ]
  return lines.join('\n')
}
