// Load from a separate process: autocannon's CLI on loopback, its JSON summary parsed.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from './paths.mjs'

const AUTOCANNON = join(ROOT, 'node_modules', 'autocannon', 'autocannon.js')

/**
 * `connections` clients for `duration` seconds against url+path; returns req/s, latency
 * percentiles in ms, and the count of answers by class. A warm-up run comes first.
 */
export async function load({
  url,
  path,
  key,
  method = 'GET',
  body,
  connections = 64,
  duration = 10,
  warmup = 3,
  amount
}) {
  const args = ['-c', String(connections), '-m', method, '-j']
  if (key) args.push('-H', `x-api-key=${key}`)
  if (body !== undefined) args.push('-H', 'content-type=application/json', '-b', JSON.stringify(body))
  if (warmup > 0) await run([...args, '-d', String(warmup), url + path])
  // A fixed amount waits for every answer, so a writer's rows can be matched to its answers.
  const r = await run([...args, ...(amount ? ['-a', String(amount)] : ['-d', String(duration)]), url + path])
  return {
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

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['--signal=KILL', '120', process.execPath, AUTOCANNON, ...args], {
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`could not run autocannon: exit ${code}: ${err.slice(-500)}`))
      try {
        resolve(JSON.parse(out))
      } catch {
        reject(new Error(`could not read autocannon's answer: ${out.slice(0, 300)}`))
      }
    })
  })
}
