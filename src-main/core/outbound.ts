/**
 * How CertDesk talks to servers it does not run: a customer's web server (domain validation,
 * BR §3.2.2.4.18; ACME http-01, RFC 8555 §8.3), a webhook receiver or chat service (alerts and
 * deploys), an SMTP relay (approval mail, alerts). Every exchange ends by one TOTAL deadline that
 * counts everything from opening the connection to the last byte of the answer (connect, TLS,
 * headers, body), and reads at most a fixed number of bytes.
 *
 * An idle time-out alone bounds nothing: a peer that sends one byte every few seconds is never
 * idle, and would hold the exchange, and whatever waits for it (a scheduler pass, an API
 * request), for as long as it likes. Each caller names its deadline as a constant with the
 * reason for its value; docs/security.md ("Slow peers") lists them.
 */
import http from 'node:http'
import https from 'node:https'
import nodemailer from 'nodemailer'
import type SMTPTransport from 'nodemailer/lib/smtp-transport'

/**
 * An SMTP relay has this long to take one message, from connecting to its final reply. RFC 5321
 * §4.5.3.2 lets a relaying MTA wait minutes per command because the next hop may be slow; the
 * relay CertDesk submits to answers each command at once and queues the message, and 30 s
 * leaves room for TLS, login and a before-queue content filter on a busy relay.
 */
export const SMTP_DEADLINE_MS = 30_000

/** Why an exchange ended early: its deadline passed, or the answer was longer than its limit. */
export class OutboundError extends Error {
  constructor(
    readonly code: 'EDEADLINE' | 'ETOOLARGE',
    message: string
  ) {
    super(message)
    this.name = 'OutboundError'
  }
}

/** The reason a deadline gives, the same for every kind of peer. */
export const noCompleteAnswer = (ms: number): string => `no complete answer within ${ms / 1000} s`

export interface Exchange {
  /** A URL to request (its host is connected to), or null when `options` says where. */
  url: URL | null
  /** node:http(s) options; an agent is never used (a fresh connection per exchange). */
  options: https.RequestOptions
  secure: boolean
  body?: string
  deadlineMs: number
  /** Bytes of the answer's body read at most. */
  maxBytes: number
  /**
   * A longer body: `keep` answers with its first `maxBytes` (a receiver's reply, kept for the
   * record) and hangs up; a string fails the exchange with that reason (a validation file).
   */
  overLimit: 'keep' | string
}

export interface Answer {
  status: number
  body: Buffer
  /** True when the body was longer than `maxBytes` and only its start was read. */
  cut: boolean
}

/**
 * One request and its answer under the deadline. Rejects with an OutboundError when the
 * deadline passes or the body is too long, or with the connection's own error (its `code`
 * says what: ECONNREFUSED, ECONNRESET, …). The socket is destroyed in every case.
 */
export function exchange(x: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let settled = false
    const finish = (err: Error | null, answer?: Answer): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      if (err) reject(err)
      else resolve(answer as Answer)
    }
    const lib = x.secure ? https : http
    const options = { ...x.options, agent: false }
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        if (settled) return
        if (size + c.length > x.maxBytes) {
          if (x.overLimit !== 'keep') return finish(new OutboundError('ETOOLARGE', x.overLimit))
          chunks.push(c.subarray(0, x.maxBytes - size))
          return finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks), cut: true })
        }
        size += c.length
        chunks.push(c)
      })
      res.on('end', () => finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks), cut: false }))
      res.on('error', (err) => finish(err))
    }
    const req = x.url ? lib.request(x.url, options, onResponse) : lib.request(options, onResponse)
    const timer = setTimeout(() => finish(new OutboundError('EDEADLINE', noCompleteAnswer(x.deadlineMs))), x.deadlineMs)
    req.on('error', (err) => finish(err))
    req.end(x.body)
  })
}

/**
 * Sends one message through an SMTP relay under SMTP_DEADLINE_MS. nodemailer's own time-outs
 * stay as the caller sets them (they end a dead relay sooner); the signal ends one that is slow
 * in every step, and a closing socket is destroyed at once rather than left for the relay to end.
 * A missed deadline rejects with an OutboundError; nodemailer's errors come as they are.
 */
export async function sendThroughRelay(
  options: SMTPTransport.Options,
  message: { from: string; to: string | string[]; subject: string; text: string }
): Promise<SMTPTransport.SentMessageInfo> {
  const transport = nodemailer.createTransport({ ...options, socketCloseTimeout: 0 })
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), SMTP_DEADLINE_MS)
  try {
    return await transport.sendMail({ ...message, signal: deadline.signal })
  } catch (err) {
    if (deadline.signal.aborted) throw new OutboundError('EDEADLINE', noCompleteAnswer(SMTP_DEADLINE_MS))
    throw err
  } finally {
    clearTimeout(timer)
    transport.close()
  }
}
