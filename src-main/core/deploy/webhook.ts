/**
 * A webhook target: a JSON POST signed with HMAC-SHA256, the scheme Stripe and GitHub
 * receivers already know. The signed string is `<timestamp>.<body>`, so a captured delivery
 * cannot be replayed with another timestamp; the receiver recomputes it with the shared secret
 * (README, "Webhook signatures").
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { OUTPUT_LIMIT } from './command'

export const SIGNATURE_HEADER = 'x-certdesk-signature'
export const TIMESTAMP_HEADER = 'x-certdesk-timestamp'
export const DELIVERY_HEADER = 'x-certdesk-delivery'
export const EVENT_HEADER = 'x-certdesk-event'
/** A receiver that has not answered in this time is treated as down and retried later. */
export const WEBHOOK_TIMEOUT_MS = 10_000

export interface WebhookConfig {
  url: string
}

export interface WebhookResult {
  ok: boolean
  status: number | null
  request: string
  response: string
  summary: string
}

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}

/** What a receiver does; exported for receivers written in TypeScript and for the tests. */
export function verifyWebhook(secret: string, timestamp: string, body: string, signature: string): boolean {
  const expected = Buffer.from(signWebhook(secret, Number(timestamp), body))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
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
    const res = await fetch(config.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)
    })
    const text = (await res.text()).slice(0, OUTPUT_LIMIT)
    const ok = res.status >= 200 && res.status < 300
    return {
      ok,
      status: res.status,
      request,
      response: text,
      summary: ok ? `receiver answered ${res.status}` : `receiver answered ${res.status}; only 2xx counts as delivered`
    }
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } }
    const reason =
      e.name === 'TimeoutError'
        ? `no answer in ${WEBHOOK_TIMEOUT_MS / 1000} s`
        : (e.cause?.code ?? e.cause?.message ?? e.message)
    return {
      ok: false,
      status: null,
      request,
      response: '',
      summary: `could not deliver webhook to ${config.url}: ${reason}`
    }
  }
}
