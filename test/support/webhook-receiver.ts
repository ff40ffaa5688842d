/**
 * A real webhook receiver on loopback: checks each delivery with `verifyWebhookSignature`, the
 * check the README tells receivers to make (timestamp within five minutes of the receiver's
 * clock, HMAC over "<timestamp>.<raw body>"), keeps every delivery, and answers with the status
 * the test chooses. Its clock is the test's, like the sender's.
 */
import { createServer, type Server } from 'node:http'
import { verifyWebhookSignature } from '../../src-main/core/deploy/webhook'
import type { Clock } from '../../src-main/core/time'

export interface Delivery {
  headers: Record<string, string>
  body: Record<string, unknown>
  raw: string
  signatureValid: boolean
  /** Why the check refused the delivery, null when it passed. */
  refusal: string | null
}

export interface Receiver {
  url: string
  deliveries: Delivery[]
  secret: string
  /** Status for the next deliveries, in order; 200 once the list is used up. */
  answers: number[]
  close(): Promise<void>
}

export async function startReceiver(opts: { clock?: Clock } = {}): Promise<Receiver> {
  const clock = opts.clock ?? (() => new Date())
  const r: Receiver = { url: '', deliveries: [], secret: '', answers: [], close: async () => undefined }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      // The signature covers the bytes as sent: checked before any decoding or JSON parsing.
      const bytes = Buffer.concat(chunks)
      const raw = bytes.toString('utf8')
      const h = req.headers as Record<string, string>
      const check = verifyWebhookSignature({
        secret: r.secret,
        timestamp: h['x-certdesk-timestamp'],
        signature: h['x-certdesk-signature'],
        body: bytes,
        now: clock()
      })
      const signatureValid = check.ok
      const refusal = check.ok ? null : check.reason
      r.deliveries.push({ headers: h, body: JSON.parse(raw) as Record<string, unknown>, raw, signatureValid, refusal })
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
