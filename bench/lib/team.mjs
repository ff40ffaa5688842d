// The team section of `npm run bench`: the mixed load (bench/lib/mixed.mjs: one POST /orders to
// three reads, several resellers) on two `certdesk serve` nodes over one PostgreSQL, against the
// same load on one of those nodes. Both go through HAProxy in HTTP mode (each request to the next
// node), so the balancer's own cost is in both figures; both nodes run all the time, so the
// second node's background work (its share of leadership, its connections) is in both too. Runs
// alternate (one node, two nodes, then two, one, …) so a neighbour's burst on the shared machine
// moves both sides; the figure is the median over the rounds of two nodes' rate / one node's.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { CLI } from './paths.mjs'
import { adminAsync, drive } from './mixed.mjs'
import { PG_BIN, PG_USER, startPostgresServer } from '../../scripts/postgres-server.mjs'
import { cpuMs, freePort, median, startNode } from './procs.mjs'

export const TEAM_TARGET = 0.9
const HAPROXY = '/usr/sbin/haproxy'
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d
/**
 * PostgreSQL's settings for a team's book beyond its defaults (docs/team-server.md, "The book
 * on PostgreSQL"): predicate locks kept per row further before they cover a whole page, so
 * orders of different resellers do not refuse each other for sharing a page.
 */
export const PG_SETTINGS = {
  max_pred_locks_per_page: '64',
  max_pred_locks_per_transaction: '256',
  // PostgreSQL's own default, which the shared starter lowers for the tests
  shared_buffers: '128MB'
}

/**
 * The bench's PostgreSQL (the tests' starter, with fsync and synchronous_commit on as a team
 * server keeps them), and psql over its socket for the few readings taken between runs.
 */
async function startTeamPostgres() {
  const server = await startPostgresServer({ settings: PG_SETTINGS })
  const psql = (database, sql) => {
    const r = spawnSync(
      join(PG_BIN, 'psql'),
      [
        '-h',
        server.info.socketDir,
        '-p',
        String(server.info.port),
        '-U',
        PG_USER,
        '-d',
        database,
        '-v',
        'ON_ERROR_STOP=1',
        '-qAtc',
        sql
      ],
      { encoding: 'utf8' }
    )
    if (r.status !== 0) throw new Error(`could not query PostgreSQL: ${(r.stderr || r.stdout || '').trim()}`)
    return r.stdout
  }
  return {
    psql,
    database(name) {
      psql('postgres', `CREATE DATABASE ${name}`)
      return server.socketUrl(name)
    },
    stop: () => server.stop()
  }
}
/** The balancer's frontends: node a alone, a and b in turn, a and b by API key. */
const SIDES = ['one', 'two', 'sticky']

async function makeResellers(database, dataDir, env, count) {
  const admin = (args) => adminAsync(dataDir, ['--database', database, ...args], env)
  const one = async (i) => {
    const r = await admin([
      'reseller',
      'add',
      '--name',
      `Team ${i}`,
      '--email',
      `team-${i}@example.test`,
      '--company',
      `Team ${i}`
    ])
    const k = await admin(['apikey', 'create', '--reseller', String(r.reseller.id)])
    await admin(['credit', 'add', '--reseller', String(r.reseller.id), '--amount', '90000000'])
    return k.api_key
  }
  const keys = []
  for (let i = 1; i <= count; i++) keys.push(await one(i))
  return keys
}

/** HAProxy with a frontend per set of nodes, HTTP mode, round robin; stops with this process. */
async function startBalancer(dir, sets) {
  const ports = {}
  const lines = [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  option http-keep-alive'
  ]
  for (const [name, { nodes, balance }] of Object.entries(sets)) {
    ports[name] = await freePort()
    lines.push(
      `frontend ${name}`,
      `  bind 127.0.0.1:${ports[name]}`,
      `  default_backend ${name}_nodes`,
      `backend ${name}_nodes`,
      ...balance,
      ...nodes.map((n, i) => `  server n${i + 1} ${new URL(n).host}`)
    )
  }
  const cfg = join(dir, 'haproxy.cfg')
  writeFileSync(cfg, `${lines.join('\n')}\n`)
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', HAPROXY, '-db', '-f', cfg], {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let log = ''
  child.stderr.on('data', (d) => (log += d))
  for (const port of Object.values(ports)) {
    for (let i = 0; ; i++) {
      const up = await new Promise((resolve) => {
        const s = createServer()
        s.once('error', () => resolve(true))
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)))
      })
      if (up) break
      if (i > 300 || child.exitCode !== null) throw new Error(`could not start HAProxy: ${log}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return {
    urls: Object.fromEntries(Object.entries(ports).map(([k, p]) => [k, `http://127.0.0.1:${p}`])),
    pid: child.pid,
    stop: () => child.kill('SIGTERM')
  }
}

/** Books of the team's database: every balance its ledger's sum, one debit and one invoice per order. */
function audit(pg) {
  const bad = pg.psql(
    'bench_team',
    `SELECT 'reseller ' || r.id || ': balance ' || r.credit_balance_cents || ' != ledger ' || COALESCE(SUM(t.amount_cents), 0)
       FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id
      GROUP BY r.id HAVING r.credit_balance_cents <> COALESCE(SUM(t.amount_cents), 0)
     UNION ALL
     SELECT 'order ' || o.id || ': ' || (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit')
            || ' debits, ' || (SELECT COUNT(*) FROM invoices i WHERE i.order_id = o.id) || ' invoices'
       FROM orders o
      WHERE (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') <> 1
         OR (SELECT COUNT(*) FROM invoices i WHERE i.order_id = o.id) <> 1`
  )
  const orders = Number(pg.psql('bench_team', 'SELECT COUNT(*) FROM orders').trim())
  return { violations: bad.split('\n').filter(Boolean), orders }
}

export async function teamLoad({
  work,
  env,
  seconds = 10,
  rounds = 3,
  connections = 32,
  resellerCount = 8,
  pages = 4,
  log = () => {}
}) {
  const dir = join(work, 'team')
  mkdirSync(dir, { recursive: true })
  const pg = await startTeamPostgres()
  const nodes = []
  let balancer = null
  try {
    const database = pg.database('bench_team')
    log('team: PostgreSQL up; resellers')
    const keys = await makeResellers(database, join(dir, 'admin'), env, resellerCount)
    for (const name of ['a', 'b']) {
      nodes.push(
        await startNode(
          CLI,
          ['serve', '--database', database, '--data-dir', join(dir, name), '--port', '0', '--acme-port', '0'],
          { env }
        )
      )
    }
    const both = [nodes[0].url, nodes[1].url]
    balancer = await startBalancer(dir, {
      one: { nodes: [nodes[0].url], balance: ['  balance roundrobin'] },
      two: { nodes: both, balance: ['  balance roundrobin'] },
      // Each reseller's requests to one node (by its API key), the next node when that one is down.
      sticky: { nodes: both, balance: ['  balance hdr(x-api-key)', '  hash-type consistent'] }
    })
    // Transactions PostgreSQL rolled back (serialization failures the nodes then ran again, and
    // statements refused), from its own statistics.
    const rollbacks = () =>
      Number(pg.psql('bench_team', "SELECT xact_rollback FROM pg_stat_database WHERE datname = 'bench_team'").trim())
    const orderCount = () => Number(pg.psql('bench_team', 'SELECT COUNT(*) FROM orders').trim())
    const run = async (side, secs = seconds) => {
      const cpu0 = nodes.map((n) => cpuMs(n.pid))
      const [rb0, o0] = [rollbacks(), orderCount()]
      const r = await drive({ url: balancer.urls[side], keys, mix: 'mixed', seconds: secs, connections, pages })
      const cpu = nodes.map((n, i) => cpuMs(n.pid) - cpu0[i])
      // pg_stat counters reach the view at the end of each transaction, give or take a moment.
      await new Promise((resolve) => setTimeout(resolve, 600))
      const orders = orderCount() - o0
      return {
        ...r,
        cpuMsPerRequest: cpu.reduce((a, b) => a + b, 0) / r.requests,
        rollbacksPerOrder: orders > 0 ? (rollbacks() - rb0) / orders : 0
      }
    }
    log('team: warm-up')
    for (const side of SIDES) await run(side, 2)
    const out = { connections, resellers: resellerCount, pages, seconds, rounds: [], non2xx: 0, errors: 0, tool: null }
    for (let i = 0; i < rounds; i++) {
      // Each round starts with the next side, so no side always runs first or last.
      const got = {}
      for (let k = 0; k < SIDES.length; k++) {
        const side = SIDES[(i + k) % SIDES.length]
        got[side] = await run(side)
      }
      out.tool = got.one.tool
      const row = { ratio: round(got.two.rps / got.one.rps), stickyRatio: round(got.sticky.rps / got.one.rps) }
      for (const side of SIDES) {
        const r = got[side]
        out.non2xx += r.non2xx
        out.errors += r.errors
        row[side] = {
          rps: round(r.rps, 0),
          p99Ms: r.p99Ms,
          cpuMs: round(r.cpuMsPerRequest, 3),
          rollbacksPerOrder: round(r.rollbacksPerOrder)
        }
      }
      out.rounds.push(row)
      log(
        `team round ${i + 1}: ` +
          SIDES.map(
            (side) =>
              `${side} ${row[side].rps}/s (p99 ${row[side].p99Ms} ms, CPU ${row[side].cpuMs} ms/request, ` +
              `${row[side].rollbacksPerOrder} rollbacks/order)`
          ).join(', ') +
          `; two / one ${row.ratio}, sticky / one ${row.stickyRatio}`
      )
    }
    out.ratio = median(out.rounds.map((r) => r.ratio))
    out.stickyRatio = median(out.rounds.map((r) => r.stickyRatio))
    out.median = Object.fromEntries(SIDES.map((side) => [side, median(out.rounds.map((r) => r[side].rps))]))
    const books = audit(pg)
    out.orders = books.orders
    out.moneyOk = books.violations.length === 0
    out.violations = books.violations.slice(0, 3)
    out.date = new Date().toISOString().slice(0, 10)
    return out
  } finally {
    balancer?.stop()
    for (const n of nodes) await n.stop()
    await pg.stop()
  }
}

export function teamMarkdown(x) {
  const pgSettings = Object.entries(PG_SETTINGS)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ')
  const cell = (r, side) =>
    `${r[side].rps} (p99 ${r[side].p99Ms} ms; ${r[side].cpuMs} ms CPU; ${r[side].rollbacksPerOrder} rb)`
  return [
    '## A team: two nodes over one PostgreSQL',
    '',
    `${x.date}. The mixed load (${x.resellers} resellers, ${x.connections} connections (${x.tool}), ${x.seconds} s per run: ` +
      'one POST /orders to three reads) through HAProxy in HTTP mode over one local PostgreSQL 15 with its default ' +
      `settings (fsync on) and ${pgSettings}: to node a alone (**one**), to nodes a and b in turn request by ` +
      'request (**two**, `balance roundrobin`), and to a and b by the API key (**sticky**, `balance hdr(x-api-key)` ' +
      'with `hash-type consistent`: each reseller on one node while it is up). Both nodes run throughout; only the ' +
      "balancer's list changes. Runs alternate, each round starting with the next side. Per cell: req/s, p99, the " +
      "nodes' CPU ms per request, and transactions PostgreSQL rolled back per order placed (serialization failures run again).",
    '',
    '| round | one | two | sticky | two / one | sticky / one |',
    '|---|---|---|---|---|---|',
    ...x.rounds.map(
      (r, i) =>
        `| ${i + 1} | ${cell(r, 'one')} | ${cell(r, 'two')} | ${cell(r, 'sticky')} | ${r.ratio} | ${r.stickyRatio} |`
    ),
    '',
    `Median two / one **${x.ratio}**, sticky / one **${x.stickyRatio}** (target ≥ ${TEAM_TARGET}: ` +
      `two ${x.ratio >= TEAM_TARGET ? 'meets' : '**below**'}, sticky ${x.stickyRatio >= TEAM_TARGET ? 'meets' : '**below**'}); ` +
      `${x.non2xx} non-2xx answers, ${x.errors} errors; ${x.orders.toLocaleString('en')} orders at the end, ` +
      `books ${x.moneyOk ? 'balance' : `**do not balance**: ${x.violations.join('; ')}`}.`,
    ''
  ].join('\n')
}
