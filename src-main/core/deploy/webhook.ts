/**
 * A webhook target: a JSON POST signed with HMAC-SHA256 in the scheme Stripe and Slack
 * receivers already know. The signed string is `<timestamp>.<raw body>` and the timestamp
 * travels in its own header, so a receiver that refuses timestamps more than five minutes from
 * its clock (`verifyWebhookSignature`, docs/decisions.md "Webhook signatures") cannot be fed a captured
 * delivery again later, and the timestamp cannot be changed without breaking the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { exchange, OutboundError } from '../outbound'
import { OUTPUT_LIMIT } from './command'

export const SIGNATURE_HEADER = 'x-certdesk-signature'
export const TIMESTAMP_HEADER = 'x-certdesk-timestamp'
export const DELIVERY_HEADER = 'x-certdesk-delivery'
export const EVENT_HEADER = 'x-certdesk-event'
/**
 * A receiver has this long for the whole exchange, from connecting to the last byte of its
 * answer, before it is treated as down and retried later: a receiver acknowledges a delivery and
 * does its work afterwards, as Stripe and GitHub ask of theirs.
 */
export const WEBHOOK_DEADLINE_MS = 10_000
/**
 * How far a delivery's timestamp may be from the receiver's clock: five minutes, the default
 * tolerance of Stripe's and Slack's signature checks. Long enough for a slow delivery and some
 * clock drift, short enough that a captured request is useless soon after.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300

export interface WebhookConfig {
  url: string
}

export interface WebhookResult {
  ok: boolean
  status: number | null
  request: string
  response: string
  /** The admin's detail: may name the URL. */
  summary: string
  /** Why it failed without the URL (a reseller reads it in GET /events); null when delivered. */
  reason: string | null
}

const hmacHex = (secret: string, timestamp: string, body: string | Buffer): string =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, the timestamp in whole Unix seconds. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new RangeError(`could not sign webhook: timestamp ${timestamp} is not whole Unix seconds`)
  return `v1=${hmacHex(secret, String(timestamp), body)}`
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string }

/**
 * The check a receiver makes, exactly as docs/guide.md ("Webhook targets") documents it: the
 * timestamp header is whole Unix seconds within SIGNATURE_TOLERANCE_SECONDS of `now` (older is a
 * replay, much newer a forged or badly skewed clock), and the signature header is `v1=` and the hex
 * HMAC-SHA256 of `<timestamp header>.<raw body>` under the shared secret, compared in constant
 * time. `body` is the bytes as received, before any JSON parsing. Exported for receivers written in
 * TypeScript; CertDesk's own tests receive with it.
 */
export function verifyWebhookSignature(input: {
  secret: string
  timestamp: string | undefined
  signature: string | undefined
  body: string | Buffer
  now: Date
  toleranceSeconds?: number
}): SignatureCheck {
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS
  const ts = input.timestamp ?? ''
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: `${TIMESTAMP_HEADER} is missing or not whole Unix seconds` }
  const age = Math.floor(input.now.getTime() / 1000) - Number(ts)
  if (age > tolerance)
    return {
      ok: false,
      reason: `the timestamp is ${age} s old, more than ${tolerance} s: a replayed or stale delivery`
    }
  if (-age > tolerance)
    return { ok: false, reason: `the timestamp is ${-age} s ahead of this clock, more than ${tolerance} s` }
  const given = /^v1=([0-9a-f]{64})$/.exec(input.signature ?? '')
  if (!given) return { ok: false, reason: `${SIGNATURE_HEADER} is missing or not v1=<64 hex digits>` }
  const expected = Buffer.from(hmacHex(input.secret, ts, input.body), 'hex')
  if (!timingSafeEqual(expected, Buffer.from(given[1], 'hex')))
    return { ok: false, reason: 'the signature does not match the body and timestamp' }
  return { ok: true }
}

export function validateWebhookUrl(url: string): string | null {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return 'is not a URL'
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be http:// or https://'
  if (u.username || u.password) return 'must not carry a user name or password (the signature authenticates CertDesk)'
  return null
}

export async function deliverWebhook(
  config: WebhookConfig,
  secret: string,
  payload: { type: string; delivery: string; [k: string]: unknown },
  timestamp: number
): Promise<WebhookResult> {
  const body = JSON.stringify(payload)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'CertDesk-Deploy/1',
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
    [DELIVERY_HEADER]: payload.delivery,
    [EVENT_HEADER]: payload.type
  }
  // The kept request shows what was sent; the signature is derived data, not the secret.
  const request = `POST ${config.url}\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n\n${body}`
  try {
    const res = await exchange({
      url: new URL(config.url),
      secure: config.url.startsWith('https:'),
      // Redirects are never followed (node:http does not): a receiver cannot send the delivery on.
      options: { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      body,
      deadlineMs: WEBHOOK_DEADLINE_MS,
      maxBytes: OUTPUT_LIMIT,
      // The answer is kept for the run's record only; the rest is never read.
      overLimit: 'keep'
    })
    const text = res.body.toString('utf8')
    const ok = res.status >= 200 && res.status < 300
    return {
      ok,
      status: res.status,
      request,
      response: text,
      summary: ok ? `receiver answered ${res.status}` : `receiver answered ${res.status}; only 2xx counts as delivered`,
      reason: ok ? null : `the receiver answered ${res.status}`
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    const timedOut = err instanceof OutboundError
    return {
      ok: false,
      status: null,
      request,
      response: '',
      summary: `could not deliver webhook to ${config.url}: ${timedOut ? err.message : (e.code ?? e.message)}`,
      reason: timedOut
        ? `the receiver did not answer completely within ${WEBHOOK_DEADLINE_MS / 1000} s`
        : 'the receiver could not be reached'
    }
  }
}
