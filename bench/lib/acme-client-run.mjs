// One ACME client run against one server, the same script for CertDesk and for Pebble:
//   node acme-client-run.mjs <config.json>
// config: { directoryUrl, caFile, eab: { kid, hmacKey }, name, http01Port, inFlight, seconds }
// It makes one account (EAB), then issues certificates for `name` over http-01 for `seconds`,
// `inFlight` at a time, and prints one JSON line: { issued, seconds, failed, firstError }.
// The http-01 answers come from a worker thread of this process (an HTTP server on
// 127.0.0.1:<http01Port>), so serving them never waits behind the client's own work. Every
// response's Replay-Nonce is kept and used for the next request (RFC 8555 §6.5), as a client
// that does not fetch a nonce before each request would.
import { readFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './paths.mjs'

const require = createRequire(join(ROOT, 'package.json'))
const acme = require('acme-client')

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'))

const responder = new Worker(
  `
  const { parentPort, workerData } = require('node:worker_threads')
  const { createServer } = require('node:http')
  const answers = new Map()
  const server = createServer((req, res) => {
    const token = req.url.replace('/.well-known/acme-challenge/', '')
    const v = answers.get(token)
    res.writeHead(v ? 200 : 404, { 'content-type': 'text/plain' }).end(v ?? 'no such token')
  })
  server.keepAliveTimeout = 1000
  parentPort.on('message', (m) => {
    if (m.set) answers.set(m.set, m.value)
    if (m.clear) answers.delete(m.clear)
    parentPort.postMessage({ id: m.id })
  })
  server.listen(workerData.port, '127.0.0.1', () => parentPort.postMessage({ ready: true }))
  `,
  { eval: true, workerData: { port: cfg.http01Port } }
)
let nextId = 0
const waiting = new Map()
responder.on('message', (m) => {
  if (m.id !== undefined) waiting.get(m.id)?.()
})
const tell = (msg) =>
  new Promise((resolve) => {
    const id = nextId++
    waiting.set(id, () => {
      waiting.delete(id)
      resolve()
    })
    responder.postMessage({ ...msg, id })
  })
await new Promise((resolve, reject) => {
  responder.once('message', (m) => (m.ready ? resolve() : reject(new Error('responder did not start'))))
  responder.once('error', reject)
})

acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(cfg.caFile, 'utf8'), keepAlive: true, maxSockets: 64 })
acme.setLogger(() => undefined)

const client = new acme.Client({
  directoryUrl: cfg.directoryUrl,
  accountKey: await acme.crypto.createPrivateEcdsaKey(),
  externalAccountBinding: { kid: cfg.eab.kid, hmacKey: cfg.eab.hmacKey },
  // The same short polling for both servers; a server's Retry-After is not waited for.
  backoffMin: 10,
  backoffMax: 50,
  backoffAttempts: 200
})

// Nonces from responses, used before asking newNonce for one.
const nonces = []
const http = client.http
const plainRequest = http.request.bind(http)
http.request = async (...args) => {
  const resp = await plainRequest(...args)
  const n = resp.headers?.['replay-nonce']
  if (n) nonces.push(n)
  return resp
}
const fetchNonce = http.getNonce.bind(http)
http.getNonce = async () => nonces.pop() ?? fetchNonce()

await client.createAccount({ termsOfServiceAgreed: true, contact: ['mailto:bench@example.com'] })

// One certificate key and CSR for the run: the server decodes and checks it on every finalize.
const [, csr] = await acme.crypto.createCsr(
  { commonName: cfg.name, altNames: [cfg.name] },
  await acme.crypto.createPrivateEcdsaKey()
)

// Milliseconds spent in each step, summed over the run (to see where a server's time goes).
const steps = { order: 0, authz: 0, challenge: 0, finalize: 0, certificate: 0 }

async function issueOne() {
  let mark = performance.now()
  const took = (step) => {
    const now = performance.now()
    steps[step] += now - mark
    mark = now
  }
  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: cfg.name }] })
  took('order')
  const authzs = await client.getAuthorizations(order)
  took('authz')
  for (const authz of authzs) {
    // RFC 8555 §7.1.4: an authorization the server already holds valid needs no challenge.
    if (authz.status === 'valid') continue
    const challenge = authz.challenges.find((c) => c.type === 'http-01')
    if (!challenge) throw new Error('no http-01 challenge offered')
    const keyAuth = await client.getChallengeKeyAuthorization(challenge)
    await tell({ set: challenge.token, value: keyAuth })
    try {
      await client.completeChallenge(challenge)
      await client.waitForValidStatus(challenge)
    } finally {
      await tell({ clear: challenge.token })
    }
  }
  took('challenge')
  const finalized = await client.finalizeOrder(order, csr)
  took('finalize')
  const cert = await client.getCertificate(finalized)
  took('certificate')
  if (!cert.includes('BEGIN CERTIFICATE')) throw new Error('no certificate in the answer')
}

let issued = 0
let failed = 0
let firstError = null
const start = process.hrtime.bigint()
const end = start + BigInt(Math.round(cfg.seconds * 1e9))
async function lane() {
  while (process.hrtime.bigint() < end) {
    try {
      await issueOne()
      issued++
    } catch (err) {
      failed++
      firstError ??= String(err?.message ?? err)
      if (failed > 20) return
    }
  }
}
await Promise.all(Array.from({ length: cfg.inFlight }, lane))
const seconds = Number(process.hrtime.bigint() - start) / 1e9
const msPerIssuance = Object.fromEntries(
  Object.entries(steps).map(([k, v]) => [k, issued ? Math.round((v / issued) * 10) / 10 : null])
)
process.stdout.write(`${JSON.stringify({ issued, seconds, failed, firstError, msPerIssuance })}\n`)
await responder.terminate()
process.exit(0)
