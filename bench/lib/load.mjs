// Load from a separate process on loopback: wrk (a C load generator, which leaves more of a
// small machine to the server than a Node one) with bench/lib/load.lua, or autocannon's CLI
// where wrk is missing. Both answer in the same shape.
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from './paths.mjs'
import { cpuMs } from './procs.mjs'

const AUTOCANNON = join(ROOT, 'node_modules', 'autocannon', 'autocannon.js')
export const hasWrk = () => spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0

/**
 * `connections` clients for `duration` seconds against url+path; returns req/s, latency
 * percentiles in ms, and the count of answers by class. A warm-up run comes first (its 2xx
 * answers in `warmupOk`). `amount`
 * (autocannon only) sends exactly that many requests and waits for every answer. With `pid`,
 * the server's CPU time per request (µs) comes back as `cpuUsPerRequest`.
 */
export async function load(opts) {
  const { warmup = 3, amount } = opts
  const tool = hasWrk() && !amount ? runWrk : runAutocannon
  const warm = warmup > 0 ? await tool({ ...opts, duration: warmup, amount: undefined }) : null
  // The server's own CPU time per request too (`pid`): on a machine shared with other jobs it
  // says what a request cost even when a neighbour took the core away for part of a run.
  const cpu0 = opts.pid ? cpuMs(opts.pid) : null
  const r = await tool(opts)
  const cpuUsPerRequest = cpu0 === null ? null : ((cpuMs(opts.pid) - cpu0) * 1000) / Math.max(1, r.requests)
  // What the warm-up answered counts for a writer's books.
  return { ...r, cpuUsPerRequest, warmupOk: warm?.ok ?? 0 }
}

function runWrk({ url, path, key, method = 'GET', body, connections = 64, duration = 10 }) {
  const env = {
    ...process.env,
    CERTDESK_METHOD: method,
    CERTDESK_KEY: key ?? '',
    CERTDESK_BODY: body === undefined ? '' : JSON.stringify(body)
  }
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${duration}s`,
    '--timeout',
    '10s',
    '-s',
    join(ROOT, 'bench', 'lib', 'load.lua')
  ]
  return spawnJson('wrk', [...args, url + path], env, duration).then((r) => {
    const seconds = r.durationUs / 1e6
    const errors = r.connectErrors + r.readErrors + r.writeErrors + r.timeouts
    return {
      tool: 'wrk',
      rps: (r.requests - r.non2xx) / seconds,
      requests: r.requests,
      ok: r.requests - r.non2xx,
      non2xx: r.non2xx,
      errors,
      p50: r.p50Ms,
      p99: r.p99Ms,
      bytesPerSecond: r.bytes / seconds
    }
  })
}

async function runAutocannon({ url, path, key, method = 'GET', body, connections = 64, duration = 10, amount }) {
  const args = ['-c', String(connections), '-m', method, '-j']
  if (key) args.push('-H', `x-api-key=${key}`)
  if (body !== undefined) args.push('-H', 'content-type=application/json', '-b', JSON.stringify(body))
  const r = await spawnJson(
    process.execPath,
    [AUTOCANNON, ...args, ...(amount ? ['-a', String(amount)] : ['-d', String(duration)]), url + path],
    process.env,
    duration
  )
  return {
    tool: 'autocannon',
    rps: amount ? r['2xx'] / r.duration : r.requests.average,
    requests: r.requests.total,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bytesPerSecond: r.throughput.average
  }
}

function spawnJson(cmd, args, env, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['--signal=KILL', String(Math.max(120, seconds + 60)), cmd, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (code !== 0 || !line)
        return reject(new Error(`could not run ${cmd}: exit ${code}: ${(err || out).slice(-500)}`))
      try {
        resolve(JSON.parse(line))
      } catch {
        reject(new Error(`could not read ${cmd}'s answer: ${out.slice(0, 300)}`))
      }
    })
  })
}
