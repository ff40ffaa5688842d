/**
 * How an alert leaves the machine: mail through the admin's SMTP relay (nodemailer), and a JSON
 * POST to a webhook. A webhook's host is resolved by the connection itself and every address it
 * resolves to is checked against the IANA special-purpose registries (special-addresses.ts)
 * before connecting, so a name that resolves to 127.0.0.1, a LAN address or a cloud metadata
 * address (169.254.169.254) is refused at the moment of sending, not only when it was saved,
 * unless `alerts.allow_private_addresses` is on.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { exchange, OutboundError, sendThroughRelay } from '../outbound'
import { specialPurpose } from '../special-addresses'

/**
 * A webhook receiver has this long for the whole exchange, from connecting to the last byte of
 * its answer, before it is treated as down and retried later (alerts.md, "Deliveries"): Slack,
 * Teams and a receiver that queues the alert answer in well under a second.
 */
export const SEND_DEADLINE_MS = 10_000
/** How long connecting to the SMTP relay, or its greeting, may take alone (outbound.ts bounds the whole send). */
const SMTP_STEP_MS = 10_000
/** How much of a receiver's answer is kept for the delivery record. */
const ANSWER_LIMIT = 2048

export class SendError extends Error {}

/** Why `host` may not be reached (a loopback, private or other special-purpose address), or null. */
export function refusedAddress(address: string): string | null {
  const what = specialPurpose(address)
  return what
    ? `${address} is ${what}; alerts go to public addresses unless alerts.allow_private_addresses is on`
    : null
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A `lookup` for http.request that refuses special-purpose addresses of the name it resolves. */
function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, [])
      const bad = allowPrivate ? null : addresses.map((a) => refusedAddress(a.address)).find(Boolean)
      if (bad)
        return callback(
          Object.assign(new Error(`could not connect to ${hostname}: ${bad}`), { code: 'EREFUSED_ADDRESS' }),
          []
        )
      if (options.all) return callback(null, addresses)
      callback(null, addresses[0].address, addresses[0].family)
    })
  }
}

/**
 * POSTs `body` as JSON to `url` and answers the receiver's status; 2xx counts as delivered.
 * Redirects are not followed (a receiver cannot send the alert on to another address).
 * Errors name the host only: the path of a Slack or Teams URL is its credential.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean
): Promise<{ status: number; answer: string }> {
  const u = new URL(url)
  const host = u.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !allowPrivate) {
    const bad = refusedAddress(host)
    if (bad) throw new SendError(`could not post to ${u.host}: ${bad}`)
  }
  try {
    const answer = await exchange({
      url: u,
      secure: u.protocol === 'https:',
      options: {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
        lookup: checkedLookup(allowPrivate) as never
      },
      body,
      deadlineMs: SEND_DEADLINE_MS,
      maxBytes: ANSWER_LIMIT,
      // A receiver's answer is kept for the delivery record only; the rest is never read.
      overLimit: 'keep'
    })
    return { status: answer.status, answer: answer.body.toString('utf8').slice(0, ANSWER_LIMIT) }
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    const reason =
      err instanceof OutboundError
        ? err.message
        : e.code === 'EREFUSED_ADDRESS'
          ? e.message.replace(/^could not connect to [^:]+: /, '')
          : (e.code ?? e.message)
    throw new SendError(`could not post to ${u.host}: ${reason}`)
  }
}

export interface SmtpSettings {
  host: string
  port: number
  security: 'starttls' | 'tls' | 'none'
  username: string | null
  password: string | null
  from: string
  to: string[]
}

/** Sends one plain-text message through the relay; STARTTLS is required unless `security` says otherwise. */
export async function sendMail(s: SmtpSettings, mail: { subject: string; text: string }): Promise<string> {
  try {
    const info = await sendThroughRelay(
      {
        host: s.host,
        port: s.port,
        secure: s.security === 'tls',
        requireTLS: s.security === 'starttls',
        ignoreTLS: s.security === 'none',
        auth: s.username ? { user: s.username, pass: s.password ?? '' } : undefined,
        connectionTimeout: SMTP_STEP_MS,
        greetingTimeout: SMTP_STEP_MS,
        socketTimeout: SMTP_STEP_MS,
        // The message is built from alert text only: nodemailer must never read a file or URL for it.
        disableFileAccess: true,
        disableUrlAccess: true
      },
      { from: s.from, to: s.to, subject: mail.subject, text: mail.text }
    )
    return String(info.response ?? 'accepted').slice(0, 200)
  } catch (err) {
    // nodemailer's messages carry the server's reply, never the password.
    throw new SendError(`could not send mail through ${s.host}:${s.port}: ${(err as Error).message.split('\n')[0]}`)
  }
}
