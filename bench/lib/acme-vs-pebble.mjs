// The embedded ACME server against Pebble on the same machine: Debian's Pebble (2.4) with EAB
// required and its artificial sleeps and nonce rejections off (PEBBLE_VA_NOSLEEP=1,
// PEBBLE_WFE_NONCEREJECT=0) and no authorization reuse (PEBBLE_AUTHZREUSE=0, as CertDesk
// validates every order), both checking http-01 through pebble-challtestsrv's DNS. The same
// client script (acme-client-run.mjs) drives each server in alternating rounds, one issuance at a
// time and then 8 in flight; each side's figure is its median round. Server CPU per issuance is
// read from /proc (utime + stime of the server process) around each round.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { admin, makeReseller } from './store.mjs'
import { CLI, ROOT } from './paths.mjs'
import { cpuMs, freePort, median, startNode } from './procs.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 2) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d)
const spread = (xs) => `${Math.min(...xs)}–${Math.max(...xs)}`
const CLIENT = join(ROOT, 'bench', 'lib', 'acme-client-run.mjs')
const NAME = 'bench-acme.example.com'
/** The ACME subscription product of the default catalogue (resources/). */
const ACME_PRODUCT_ID = 12
const PEBBLE_EAB = {
  kid: 'certdesk-bench',
  hmacKey: Buffer.from('a 32-byte key for the bench EAB!').toString('base64url')
}
export const ACME_TARGET = 1.0
const kept = new Set()
process.once('exit', () => {
  for (const c of kept) c.kill('SIGKILL')
})

/** CPU seconds (user + system) the process has used so far. */
const cpuSeconds = (pid) => cpuMs(pid) / 1000

/** A process under `timeout`, so it stops by itself; resolves with the pid of the program itself. */
async function spawnKept(cmd, args, env) {
  const child = spawn('timeout', ['--signal=KILL', '3600', cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  kept.add(child)
  let log = ''
  child.stdout.on('data', (d) => (log += d))
  child.stderr.on('data', (d) => (log += d))
  const exited = new Promise((resolve) => child.on('exit', resolve))
  let pid = null
  for (let i = 0; i < 200 && pid === null; i++) {
    try {
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim()
      if (kids) pid = Number(kids.split(/\s+/)[0])
    } catch {
      // not there yet
    }
    if (pid === null) await sleep(10)
  }
  if (pid === null) throw new Error(`could not start ${cmd}: ${log}`)
  return {
    pid,
    log: () => log,
    alive: () => child.exitCode === null,
    stop: async () => {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // gone
      }
      await exited
      kept.delete(child)
    }
  }
}

function get(url, ca) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: new Agent({ ca }), timeout: 2000 }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end()
  })
}

async function waitFor(what, fn, proc) {
  for (let i = 0; i < 300; i++) {
    try {
      return await fn()
    } catch {
      if (proc && !proc.alive()) break
      await sleep(100)
    }
  }
  throw new Error(`could not start ${what}: ${proc?.log() ?? ''}`)
}

async function challTestSrv() {
  const [dnsPort, mgmtPort] = [await freePort(), await freePort()]
  const p = await spawnKept(
    'pebble-challtestsrv',
    [
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-management',
      `127.0.0.1:${mgmtPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      ''
    ],
    process.env
  )
  await waitFor(
    'pebble-challtestsrv',
    () => fetch(`http://127.0.0.1:${mgmtPort}/clear-txt`, { method: 'POST', body: '{"host":"ready.test."}' }),
    p
  )
  return { ...p, dns: `127.0.0.1:${dnsPort}` }
}

async function pebble(dir, dns, http01Port) {
  mkdirSync(dir, { recursive: true })
  const o = (args) => {
    const r = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 })
    if (r.status !== 0) throw new Error(`could not run openssl ${args[0]}: ${r.stderr}`)
  }
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  o(['req', '-x509', ...ec, '-days', '2', '-subj', '/CN=Pebble bench CA', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem')]) // prettier-ignore
  o(['req', '-new', ...ec, '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'req.pem')])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
  o(['x509', '-req', '-in', join(dir, 'req.pem'), '-CA', join(dir, 'ca.pem'), '-CAkey', join(dir, 'ca.key'),
    '-CAcreateserial', '-days', '2', '-extfile', join(dir, 'ext.cnf'), '-out', join(dir, 'cert.pem')]) // prettier-ignore
  const [port, mgmt, tlsPort] = [await freePort(), await freePort(), await freePort()]
  writeFileSync(
    join(dir, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmt}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: http01Port,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: true,
        externalAccountMACKeys: { [PEBBLE_EAB.kid]: PEBBLE_EAB.hmacKey }
      }
    })
  )
  const p = await spawnKept('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', dns], {
    ...process.env,
    PEBBLE_VA_NOSLEEP: '1',
    PEBBLE_WFE_NONCEREJECT: '0',
    PEBBLE_AUTHZREUSE: '0'
  })
  const directoryUrl = `https://localhost:${port}/dir`
  const ca = readFileSync(join(dir, 'ca.pem'), 'utf8')
  await waitFor('pebble', () => get(directoryUrl, ca), p)
  return { ...p, directoryUrl, caFile: join(dir, 'ca.pem'), eab: PEBBLE_EAB }
}

async function certdesk(dir, env, dns, http01Port, profileDir) {
  const r = makeReseller(dir, env, 'Bench ACME')
  admin(dir, ['credit', 'add', '--reseller', String(r.id), '--amount', '100000'], env)
  admin(dir, ['settings', 'set', 'dcv.dns_resolver', dns], env)
  admin(dir, ['settings', 'set', 'dcv.http_port', String(http01Port)], env)
  admin(dir, ['settings', 'set', 'dcv.allow_private_addresses', 'true'], env)
  const caFile = join(dir, 'root.pem')
  admin(dir, ['ca', 'root', '--out', caFile], env)
  const acmePort = await freePort()
  const s = await startNode(CLI, ['serve', '--data-dir', dir, '--port', '0', '--acme-port', String(acmePort)], {
    env,
    lifetime: 3600,
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
  })
  const directoryUrl = await waitFor('the CertDesk ACME server', async () => {
    const m = /CertDesk ACME directory at (\S+)/.exec(s.log())
    if (!m) throw new Error('not yet')
    return m[1]
  })
  const headers = { 'x-api-key': r.key, 'content-type': 'application/json' }
  const created = await (
    await fetch(`${s.url}/orders`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ product_id: ACME_PRODUCT_ID, domain: NAME })
    })
  ).json()
  if (!created.order_id) throw new Error(`could not subscribe: ${JSON.stringify(created)}`)
  const a = await (await fetch(`${s.url}/orders/${created.order_id}/acme`, { headers })).json()
  return { ...s, directoryUrl, caFile, eab: { kid: a.acme.account.eab_kid, hmacKey: a.acme.account.eab_hmac_key } }
}

/** One client run against `server`; issuances per second and server CPU ms per issuance. */
function clientRun(work, server, http01Port, inFlight, seconds, tag) {
  const cfgFile = join(work, `client-${tag}.json`)
  writeFileSync(
    cfgFile,
    JSON.stringify({
      directoryUrl: server.directoryUrl,
      caFile: server.caFile,
      eab: server.eab,
      name: NAME,
      http01Port,
      inFlight,
      seconds
    })
  )
  return new Promise((resolve, reject) => {
    const cpu0 = cpuSeconds(server.pid)
    const child = spawn('timeout', ['--signal=KILL', String(seconds + 120), process.execPath, CLIENT, cfgFile], {
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    // 'close': after the output is read to its end, not only when the process is gone.
    child.on('close', (code, signal) => {
      const cpu = cpuSeconds(server.pid) - cpu0
      // `timeout` passes on the signal its command died of by dying of it too.
      if (code !== 0)
        return reject(
          new Error(`the ACME client exited with ${code ?? signal}: ${err || out.slice(-500) || 'no output'}`)
        )
      const r = JSON.parse(out.trim().split('\n').pop())
      resolve({
        perSecond: r.issued / r.seconds,
        issued: r.issued,
        failed: r.failed,
        firstError: r.firstError,
        steps: r.msPerIssuance,
        cpuMsPerIssuance: r.issued ? (cpu * 1000) / r.issued : null
      })
    })
  })
}

/**
 * Runs the comparison: `rounds` alternating rounds of `seconds` per side and mode. With
 * `profileDir`, `certdesk serve` runs under `node --cpu-prof` and writes its profile there on stop.
 */
export async function acmeVsPebble({ work, env, rounds = 9, seconds = 8, log, profileDir = null }) {
  mkdirSync(work, { recursive: true })
  const http01Port = await freePort()
  const dns = await challTestSrv()
  const peb = await pebble(join(work, 'pebble'), dns.dns, http01Port)
  const cd = await certdesk(join(work, 'certdesk'), env, dns.dns, http01Port, profileDir)
  const result = { rounds, seconds, modes: {}, notes: [] }
  try {
    for (const inFlight of [1, 8]) {
      const runs = { certdesk: [], pebble: [] }
      // A short warm-up of each side (JIT, caches, first account), not counted.
      await clientRun(work, cd, http01Port, inFlight, 2, 'warm')
      await clientRun(work, peb, http01Port, inFlight, 2, 'warm')
      for (let i = 0; i < rounds; i++) {
        // Alternating who goes first, so a slow stretch of the machine hits both sides alike.
        const order = i % 2 === 0 ? ['certdesk', 'pebble'] : ['pebble', 'certdesk']
        for (const side of order) {
          const r = await clientRun(work, side === 'certdesk' ? cd : peb, http01Port, inFlight, seconds, side)
          runs[side].push(r)
          if (r.failed) result.notes.push(`${side}, ${inFlight} in flight: ${r.failed} failed (${r.firstError})`)
        }
        log?.(
          `acme ${inFlight} in flight, round ${i + 1}: CertDesk ${round(runs.certdesk[i].perSecond)}/s ` +
            `(${round(runs.certdesk[i].cpuMsPerIssuance, 1)} ms CPU), Pebble ${round(runs.pebble[i].perSecond)}/s ` +
            `(${round(runs.pebble[i].cpuMsPerIssuance, 1)} ms CPU)` +
            `; ms per step CertDesk ${JSON.stringify(runs.certdesk[i].steps)} Pebble ${JSON.stringify(runs.pebble[i].steps)}`
        )
      }
      const side = (xs) => ({
        perSecond: round(median(xs.map((x) => x.perSecond))),
        rounds: xs.map((x) => round(x.perSecond, 1)),
        cpuMsPerIssuance: round(median(xs.map((x) => x.cpuMsPerIssuance ?? Infinity)), 1),
        issued: xs.reduce((n, x) => n + x.issued, 0),
        failed: xs.reduce((n, x) => n + x.failed, 0)
      })
      const c = side(runs.certdesk)
      const p = side(runs.pebble)
      // The two sides of a round run back to back, so their ratio sees the same machine; the
      // figure is the median of those paired ratios (a neighbour's burst moves a round, not it).
      const roundRatios = runs.certdesk.map((x, i) => x.perSecond / runs.pebble[i].perSecond)
      result.modes[inFlight] = {
        certdesk: c,
        pebble: p,
        ratio: round(median(roundRatios)),
        ratioOfMedians: round(c.perSecond / p.perSecond),
        roundRatios: roundRatios.map((x) => round(x)),
        cpuRatio: round(c.cpuMsPerIssuance / p.cpuMsPerIssuance)
      }
      log?.(`acme ${inFlight} in flight: ratio ${result.modes[inFlight].ratio}`)
    }
  } finally {
    await cd.stop()
    await peb.stop()
    await dns.stop()
  }
  return result
}

export function acmeMarkdown(a) {
  const mark = (ok) => (ok ? 'meets' : '**below**')
  const lines = [
    '## ACME server against Pebble',
    '',
    `The same acme-client script issues one certificate after another over http-01 (answered from a worker`,
    `thread) against CertDesk's embedded ACME server and Debian's Pebble (EAB required, PEBBLE_VA_NOSLEEP=1,`,
    `PEBBLE_WFE_NONCEREJECT=0, PEBBLE_AUTHZREUSE=0), ${a.rounds} alternating rounds of ${a.seconds} s per side.`,
    `The ratio is the median of the per-round ratios (the two sides of a round run back to back); each side's`,
    `rate is its median round. Server CPU is the server process's user + system time per issuance, median round.`,
    '',
    '| in flight | CertDesk issuances/s (rounds) | Pebble issuances/s (rounds) | ratio, median of rounds (spread) | ratio of the medians | server CPU ms per issuance CertDesk / Pebble | target |',
    '|---|---|---|---|---|---|---|'
  ]
  for (const [n, m] of Object.entries(a.modes)) {
    lines.push(
      `| ${n} | ${m.certdesk.perSecond} (${spread(m.certdesk.rounds)}) | ${m.pebble.perSecond} (${spread(m.pebble.rounds)}) | ` +
        `**${m.ratio}** (${spread(m.roundRatios)}) | ${m.ratioOfMedians} | ${m.certdesk.cpuMsPerIssuance} / ${m.pebble.cpuMsPerIssuance} | ` +
        `≥ ${ACME_TARGET}: ${mark(m.ratio >= ACME_TARGET)} |`
    )
  }
  if (a.notes.length) lines.push('', ...a.notes.map((n) => `- ${n}`))
  lines.push('')
  return lines.join('\n')
}
