/**
 * Receivers for alert deliveries on loopback: an SMTP server (smtp-server) that requires
 * authentication, and an HTTP server that keeps each JSON body it is sent (a Slack or Teams
 * incoming webhook stands in for it). Both answer as the test tells them and stop in `close()`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface MailSink {
  host: string
  port: number
  messages: { from: string; to: string[]; user: string; raw: string; subject: string; text: string }[]
  /** Logins refused (wrong user or password). */
  refusedLogins: number
  close(): Promise<void>
}

/** Subject header, unfolded and decoded from RFC 2047 encoded words when nodemailer used them. */
function subjectOf(raw: string): string {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ')
  const line = /^Subject: (.*)$/im.exec(head)?.[1] ?? ''
  return line.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1'
        ).toString('utf8')
  )
}

/** The body of a single-part message, decoded from quoted-printable (RFC 2045 §6.7) when it is that. */
function textOf(raw: string): string {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/)
  const body = rest.join('\n\n')
  if (!/^Content-Transfer-Encoding: quoted-printable/im.test(head)) return body.replace(/\r\n/g, '\n')
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
  return Buffer.from(bytes, 'latin1').toString('utf8').replace(/\r\n/g, '\n')
}

export async function startMailSink(user: string, password: string): Promise<MailSink> {
  const sink: MailSink = { host: '127.0.0.1', port: 0, messages: [], refusedLogins: 0, close: async () => undefined }
  const server = new SMTPServer({
    // STARTTLS off so the loopback test reads the session plainly; AUTH is required (authOptional false).
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) return callback(null, { user })
      sink.refusedLogins += 1
      callback(new Error('Invalid username or password'))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        sink.messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: String(session.user),
          raw,
          subject: subjectOf(raw),
          text: textOf(raw)
        })
        callback()
      })
    }
  })
  sink.port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port))
  })
  sink.close = () => new Promise((resolve) => server.close(() => resolve()))
  return sink
}

export interface JsonSink {
  url: string
  bodies: { path: string; body: Record<string, unknown> }[]
  /** Status for the next requests, in order; 200 once used up. */
  answers: number[]
  close(): Promise<void>
}

export async function startJsonSink(path = '/services/T0001/B0001/secretpart'): Promise<JsonSink> {
  const sink: JsonSink = { url: '', bodies: [], answers: [], close: async () => undefined }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      sink.bodies.push({
        path: req.url ?? '',
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      })
      const status = sink.answers.shift() ?? 200
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no')
    })
  })
  server.keepAliveTimeout = 100
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  sink.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return sink
}
