// The PostgreSQL column of `npm run bench`: the same measurements as on SQLite, on books in a
// private PostgreSQL 15 server started for the run (scripts/postgres-server.mjs), reached over
// TCP on loopback as a team's nodes reach theirs. Each figure has its baseline in the same run:
// the API reads against bare node:http sending the same bytes, POST /orders against raw `pg`
// doing the same rows in the same transaction shape (raw-writes-postgres.mjs), and the
// uncached list, filter and search latencies on a million orders against their targets.
import { join } from 'node:path'
import { startPostgresServer } from '../../scripts/postgres-server.mjs'
import { apiReads, orderWrites, probe, round, spread } from './api-bench.mjs'
import { auditPostgres, fillOrdersPostgres, postgresBalance } from './postgres-store.mjs'
import { ROOT } from './paths.mjs'
import { startCertdesk, startNode } from './procs.mjs'
import { admin, makeReseller } from './store.mjs'

/**
 * The server's settings beyond PostgreSQL's defaults. Commits are not flushed one by one
 * (`synchronous_commit = off`), as SQLite's WAL with `synchronous = NORMAL` does not flush
 * them either (sqlite.org/pragma.html#pragma_synchronous): a crash of the machine may lose the
 * last commits, never corrupt the store; fsync and full-page writes stay on.
 */
export const POSTGRES_SETTINGS = { shared_buffers: '256MB', synchronous_commit: 'off', max_connections: '200' }

/** The uncached latencies of the Scale section (scripts/bench.mjs), on PostgreSQL. */
const scalePaths = (n) => {
  const shop = Math.floor(n * 0.7)
  return {
    domain: `/orders?domain=-{i:${shop}}.`,
    domainBroad: '/orders?domain=nimbus&offset={i:0}',
    status: '/orders?status=pending&offset={i:0}',
    list: '/orders?limit=50&offset={i:0}',
    stats: '/stats',
    credits: '/credits?offset={i:0}'
  }
}

/** A book in its own database: the data dir only names the keychain; CERTDESK_DATABASE holds the book. */
function postgresBook(server, work, env, name) {
  const database = name.replace(/[^a-z0-9_]/g, '_')
  return {
    database,
    url: server.tcpUrl(database),
    dir: join(work, `pg-${name}`),
    env: { ...env, CERTDESK_DATABASE: server.tcpUrl(database) }
  }
}

/** The PostgreSQL side of `orderWrites` (api-bench.mjs). */
const postgresStorage = (server, work, env) => ({
  name: 'raw pg',
  async fresh(name) {
    const book = postgresBook(server, work, env, name)
    await server.query(`CREATE DATABASE ${book.database}`)
    const r = makeReseller(book.dir, book.env)
    admin(book.dir, ['credit', 'add', '--reseller', String(r.id), '--amount', '90000000'], book.env)
    return { ...book, r }
  },
  balanceOf: (store) => postgresBalance(store.url, store.r.id),
  audit: (store) => auditPostgres(store.url),
  startRaw: (store) =>
    startNode(join(ROOT, 'bench', 'lib', 'raw-writes-postgres.mjs'), [store.url, String(store.r.id), 'sequential'], {
      env: store.env
    }),
  // The same rows sent the way CertDesk's engine sends them (pipelined).
  second: {
    key: 'rawPipelined',
    label: 'pipelined',
    start: (store) =>
      startNode(join(ROOT, 'bench', 'lib', 'raw-writes-postgres.mjs'), [store.url, String(store.r.id), 'pipelined'], {
        env: store.env
      })
  }
})

/**
 * Every PostgreSQL figure: `sizes` (orders per book) for the latencies, the API reads on the
 * largest, and the order writes. `opts`: { reads, writes } as the SQLite side takes them.
 */
export async function postgresFigures({ work, env, log, sizes, reads: readOpts, writes: writeOpts }) {
  const server = await startPostgresServer({ settings: POSTGRES_SETTINGS })
  const version = (await server.query('SHOW server_version')).rows[0].server_version
  const out = { version, settings: POSTGRES_SETTINGS, scale: {}, reads: {}, writes: null, notes: [] }
  try {
    for (const n of sizes) {
      const book = postgresBook(server, work, env, `orders_${n}`)
      await server.query(`CREATE DATABASE ${book.database}`)
      const r = makeReseller(book.dir, book.env)
      const t = Date.now()
      await fillOrdersPostgres(book.url, r.id, n)
      const generateSeconds = round((Date.now() - t) / 1000, 1)
      log(`PostgreSQL: ${n} orders generated in ${generateSeconds} s`)
      const s = await startCertdesk(book.dir, book.env, [], writeOpts.serverNodeArgs)
      try {
        const paths = scalePaths(n)
        const p = probe(s.url, r.key, n >= 1_000_000 ? 30 : 50, Object.values(paths))
        const entry = { orders: n, generateSeconds }
        for (const [name, path] of Object.entries(paths))
          entry[name] = { path, p50Ms: round(p[path].p50), p95Ms: round(p[path].p95) }
        out.scale[n] = entry
        log(
          `PostgreSQL ${n}: list ${entry.list.p50Ms} ms, status ${entry.status.p50Ms} ms, domain ${entry.domain.p50Ms} ms, nimbus ${entry.domainBroad.p50Ms} ms`
        )
        if (n === sizes[sizes.length - 1]) {
          await apiReads({
            work,
            url: s.url,
            pid: s.pid,
            key: r.key,
            reads: out.reads,
            notes: out.notes,
            opts: readOpts
          })
          out.readsStoreOrders = n
          out.rssMb = round(s.rss().peakMb, 1)
        }
      } finally {
        await s.stop()
      }
    }
    out.writes = await orderWrites({ storage: postgresStorage(server, work, env), notes: out.notes, opts: writeOpts })
  } finally {
    await server.stop()
  }
  return out
}

const mark = (ok) => (ok ? 'meets' : '**below**')

/**
 * The PostgreSQL column beside SQLite's figures of the same run (`sqlite`: the run's results,
 * or null when only PostgreSQL ran).
 */
export function postgresMarkdown(pg, sqlite, targets) {
  const sizes = Object.keys(pg.scale).map(Number)
  const n = sizes[sizes.length - 1]
  const big = pg.scale[n]
  const sqliteBig = sqlite?.scale?.[n]
  const dash = '–'
  const read = (r, path) => {
    const x = r?.reads?.[path]
    return x
      ? `**${x.rpsRatio}** (${spread(x.roundRatios)}; ${x.certdesk.rps} vs ${x.bare.rps}/s), p99 **${x.p99Ratio}**`
      : dash
  }
  const readOk = (path) => {
    const x = pg.reads[path]
    return x && x.rpsRatio >= targets.readRatio && x.p99Ratio >= targets.readRatio
  }
  const write = (w) =>
    w ? `**${w.rpsRatio}** (${spread(w.roundRatios)}; ${w.certdesk.rps} vs ${w.rawHttp.rps}/s)${w.certdesk.moneyOk && w.rawHttp.moneyOk ? ', books balance' : ', **money check FAILED**'}` : dash // prettier-ignore
  const piped = (x) =>
    x ? `**${x.rpsRatio}** (${spread(x.roundRatios)}; ${x.rps}/s)${x.moneyOk ? ', books balance' : ', **money check FAILED**'}` : dash // prettier-ignore
  const p50 = (entry, k) => (entry?.[k] ? `${entry[k].p50Ms} ms` : dash)
  const latency = (label, k) =>
    `| ${label}, ${n.toLocaleString('en')} orders, p50 | ${p50(sqliteBig, k)} | ${p50(big, k)} | < ${targets.domainP50Ms} ms: ${mark(big[k].p50Ms < targets.domainP50Ms)} |`
  return [
    `## PostgreSQL beside SQLite`,
    '',
    `The same figures with the book in PostgreSQL ${pg.version} (a private server started for the run, reached over TCP`,
    `on loopback, ${Object.entries(pg.settings)
      .map(([k, v]) => `${k} = ${v}`)
      .join(', ')}; the pool is CertDesk's default of 10`,
    `connections). Each ratio has its baseline in the same run: the reads against bare node:http sending the same bytes, POST /orders`,
    `against raw \`pg\` writing the same rows in a transaction of the same shape (SERIALIZABLE, ids from the sequences, the same retry;`,
    `bench/lib/raw-writes-postgres.mjs) behind bare node:http, awaiting each statement's answer before the next (the target's baseline);`,
    `the row after it sets CertDesk beside the same raw writer sending its statements in the groups CertDesk's engine sends them`,
    `(pipelined). Books of ${sizes.map((x) => x.toLocaleString('en')).join(', ')} orders generated in the server`,
    `(generate_series, ${sizes.map((x) => `${pg.scale[x].generateSeconds} s`).join(', ')}).`,
    '',
    '| figure | SQLite | PostgreSQL | target (PostgreSQL) |',
    '|---|---|---|---|',
    `| GET /products against bare node:http, req/s ratio (rounds; req/s), p99 ratio | ${read(sqlite, '/products')} | ${read(pg, '/products')} | ≥ ${targets.readRatio} both: ${mark(readOk('/products'))} |`,
    `| GET /orders?limit=50 against bare node:http, the same | ${read(sqlite, '/orders?limit=50')} | ${read(pg, '/orders?limit=50')} | ≥ ${targets.readRatio} both: ${mark(readOk('/orders?limit=50'))} |`,
    `| POST /orders against the raw writer of its engine behind bare node:http | ${write(sqlite?.writes)} | ${write(pg.writes)} | ≥ ${targets.writeRatio}: ${mark(pg.writes.rpsRatio >= targets.writeRatio)} |`,
    `| POST /orders against the raw \`pg\` writer sending the same groups pipelined | ${dash} | ${piped(pg.writes?.rawPipelined)} | (not a target) |`,
    latency('GET /orders?limit=50&offset=i (list)', 'list'),
    latency('GET /orders?status=pending (filter)', 'status'),
    latency('GET /orders?domain=<one shop> (substring search)', 'domain'),
    latency('GET /orders?domain=nimbus, 5% match (substring search)', 'domainBroad'),
    `| GET /stats, p50 | ${p50(sqliteBig, 'stats')} | ${p50(big, 'stats')} | |`,
    `| GET /credits?offset=i, p50 | ${p50(sqliteBig, 'credits')} | ${p50(big, 'credits')} | |`,
    '',
    `Server CPU µs per POST /orders: CertDesk ${pg.writes.cpuUsPerRequest.certdesk} / raw pg ${pg.writes.cpuUsPerRequest.rawHttp}` +
      (pg.writes.rawPipelined ? ` / raw pg pipelined ${pg.writes.rawPipelined.cpuUsPerRequest} ` : ' ') +
      `(the database server's own CPU is not in either). Peak RSS of \`certdesk serve\` on the ${n.toLocaleString('en')}-order book: ${pg.rssMb} MB.`,
    ...(pg.notes.length ? ['', ...pg.notes.map((x) => `- ${x}`)] : []),
    ''
  ].join('\n')
}
