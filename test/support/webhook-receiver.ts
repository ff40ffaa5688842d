/**
 * A real webhook receiver on loopback: checks each delivery's HMAC signature the way the README
 * tells receivers to, keeps every delivery, and answers with the status the test chooses.
 */
import { createServer, type Server } from 'node:http'
import { verifyWebhook } from '../../src-main/core/deploy/webhook'

export interface Delivery {
  headers: Record<string, string>
  body: Record<string, unknown>
  raw: string
  signatureValid: boolean
}

export interface Receiver {
  url: string
  deliveries: Delivery[]
  secret: string
  /** Status for the next deliveries, in order; 200 once the list is used up. */
  answers: number[]
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const r: Receiver = { url: '', deliveries: [], secret: '', answers: [], close: async () => undefined }
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      const h = req.headers as Record<string, string>
      const signatureValid = verifyWebhook(
        r.secret,
        h['x-certdesk-timestamp'] ?? '',
        raw,
        h['x-certdesk-signature'] ?? ''
      )
      r.deliveries.push({ headers: h, body: JSON.parse(raw) as Record<string, unknown>, raw, signatureValid })
      const status = signatureValid ? (r.answers.shift() ?? 200) : 401
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 200 ? 'installed' : `refused with ${status}`)
    })
  })
  server.keepAliveTimeout = 100
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address()
  r.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks/certdesk`
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return r
}

/** A loopback URL where nothing listens: a port that was free a moment ago. */
export async function unreachableUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : 0
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}/down`
}
