// A separate client process: `n` sequential requests over one keep-alive connection, then
// prints latency percentiles (ms) as JSON. Sequential on purpose: this is the latency one
// user sees, not throughput. `{i:S}` in a path becomes S, S+1, … so no two requests are the same
// and none is answered from the read cache. Usage: node probe.mjs <url> <key> <n> <path> [<path> …]
import http from 'node:http'

const [url, key, n, ...paths] = process.argv.slice(2)
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const get = (path) =>
  new Promise((resolve, reject) => {
    const req = http.get(url + path, { agent, headers: { 'x-api-key': key, accept: 'application/json' } }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }))
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer to GET ${path} in 60 s`)))
    req.on('error', reject)
  })

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const out = {}
const nth = (path, i) => path.replace(/\{i:(\d+)\}/g, (_, start) => String(Number(start) + i))
for (const path of paths) {
  const first = await get(nth(path, Number(n))) // warm-up, and a check that it answers at all
  if (first.status !== 200)
    throw new Error(`GET ${path} answered ${first.status}: ${first.body.toString().slice(0, 200)}`)
  const times = []
  for (let i = 0; i < Number(n); i++) {
    const t = process.hrtime.bigint()
    const r = await get(nth(path, i))
    times.push(Number(process.hrtime.bigint() - t) / 1e6)
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`)
  }
  times.sort((a, b) => a - b)
  out[path] = {
    n: times.length,
    p50: pct(times, 50),
    p95: pct(times, 95),
    p99: pct(times, 99),
    bytes: first.body.length
  }
}
agent.destroy()
process.stdout.write(`${JSON.stringify(out)}\n`)
