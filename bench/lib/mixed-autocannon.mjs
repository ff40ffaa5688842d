// The mixed-load cycle of mixed.lua for machines without wrk: the same requests in the same
// order, sent by autocannon from its own process, and the same one-line JSON answer.
//   CERTDESK_KEYS=k1,k2 CERTDESK_MIX=mixed|writes|reads CERTDESK_PAGES=4 \
//     node mixed-autocannon.mjs <url> <seconds> <connections>
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './paths.mjs'

const autocannon = createRequire(join(ROOT, 'package.json'))('autocannon')
const [url, seconds, connections] = process.argv.slice(2)
const keys = (process.env.CERTDESK_KEYS ?? '').split(',').filter(Boolean)
if (keys.length === 0) throw new Error('CERTDESK_KEYS is empty')
const mix = process.env.CERTDESK_MIX ?? 'mixed'
const pages = Number(process.env.CERTDESK_PAGES ?? 4)
const body = JSON.stringify({ product_id: 2, domain: 'mixed-load.example.com', period: 12 })

let n = 0
const post = (key) => ({
  method: 'POST',
  path: '/orders',
  headers: { 'x-api-key': key, 'content-type': 'application/json' },
  body
})
const get = (path, key) => ({ method: 'GET', path, headers: { 'x-api-key': key, accept: 'application/json' } })
const reads = [
  (key, round) => get(`/orders?limit=50&offset=${50 * (round % pages)}`, key),
  (key) => get('/stats', key),
  (key) => get('/products', key)
]
const next = () => {
  const i = n++
  if (mix === 'writes') return post(keys[i % keys.length])
  const width = mix === 'reads' ? 3 : 4
  let slot = i % width
  const group = Math.floor(i / width)
  const key = keys[group % keys.length]
  const round = Math.floor(group / keys.length)
  if (mix === 'mixed') {
    if (slot === 0) return post(key)
    slot -= 1
  }
  return reads[slot](key, round)
}

const r = await autocannon({
  url,
  connections: Number(connections),
  duration: Number(seconds),
  requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }]
})
process.stdout.write(
  `${JSON.stringify({
    requests: r.requests.total,
    durationUs: Math.round(r.duration * 1e6),
    connectErrors: 0,
    readErrors: r.errors,
    writeErrors: 0,
    non2xx: r.non2xx,
    timeouts: r.timeouts,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99
  })}\n`
)
