/**
 * Webhook signatures carry their time: a fresh delivery verifies at a real receiver on
 * loopback, the same request sent again six minutes later is refused, and so is a delivery
 * whose body or timestamp was changed on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  deliverWebhook,
  SIGNATURE_TOLERANCE_SECONDS,
  signWebhook,
  verifyWebhookSignature
} from '../../src-main/core/deploy/webhook'
import { manualClock } from '../support/clock'
import { startReceiver, type Receiver } from '../support/webhook-receiver'

const clock = manualClock('2026-11-21T10:00:00Z')
const SECRET = 'whsec_test-secret-of-enough-length'
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver({ clock: clock.clock })
  receiver.secret = SECRET
})
afterAll(() => receiver.close())

const seconds = (): number => Math.floor(clock.now().getTime() / 1000)
const minutes = (m: number): void => clock.set(new Date(clock.now().getTime() + m * 60_000))

/** Sends a captured delivery again as an attacker would: the same headers, maybe a new body. */
async function resend(headers: Record<string, string>, body: string): Promise<number> {
  const res = await fetch(receiver.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-certdesk-timestamp': headers['x-certdesk-timestamp'],
      'x-certdesk-signature': headers['x-certdesk-signature']
    },
    body
  })
  await res.text()
  return res.status
}

describe('webhook signatures', () => {
  it('a fresh delivery verifies; six minutes later the same request is a refused replay', async () => {
    const sent = await deliverWebhook(
      { url: receiver.url },
      SECRET,
      { type: 'certificate.issued', delivery: 'run-1', domain: 'shop.example.com' },
      seconds()
    )
    expect(sent).toMatchObject({ ok: true, status: 200 })
    const first = receiver.deliveries.at(-1)!
    expect(first.headers['x-certdesk-timestamp']).toBe(String(seconds()))
    expect(first.headers['x-certdesk-signature']).toMatch(/^v1=[0-9a-f]{64}$/)
    expect(first).toMatchObject({ signatureValid: true, refusal: null })

    // Within the five minutes a receiver still takes it (a slow network, a retry of the same send).
    minutes(4)
    expect(await resend(first.headers, first.raw)).toBe(200)
    minutes(2)
    expect(await resend(first.headers, first.raw)).toBe(401)
    expect(receiver.deliveries.at(-1)!.refusal).toBe(
      'the timestamp is 360 s old, more than 300 s: a replayed or stale delivery'
    )
  })

  it('refuses a changed body, a moved timestamp and a malformed header', async () => {
    const body = JSON.stringify({ type: 'certificate.issued', delivery: 'run-2', domain: 'shop.example.com' })
    const ts = seconds()
    const headers = { 'x-certdesk-timestamp': String(ts), 'x-certdesk-signature': signWebhook(SECRET, ts, body) }
    expect(await resend(headers, body)).toBe(200)
    expect(await resend(headers, body.replace('shop.example.com', 'evil.example.com'))).toBe(401)
    expect(receiver.deliveries.at(-1)!.refusal).toBe('the signature does not match the body and timestamp')
    // Freshening the timestamp of a captured request breaks its signature.
    expect(await resend({ ...headers, 'x-certdesk-timestamp': String(ts + 60) }, body)).toBe(401)
    expect(receiver.deliveries.at(-1)!.refusal).toBe('the signature does not match the body and timestamp')

    const check = (timestamp: string | undefined, signature: string | undefined, at = clock.now()) =>
      verifyWebhookSignature({ secret: SECRET, timestamp, signature, body, now: at })
    const sig = headers['x-certdesk-signature']
    expect(check(String(ts), sig)).toEqual({ ok: true })
    // The edges: exactly five minutes old passes, one second more does not; the same ahead.
    const at = (offset: number): Date => new Date((ts + offset) * 1000)
    expect(check(String(ts), sig, at(SIGNATURE_TOLERANCE_SECONDS))).toEqual({ ok: true })
    expect(check(String(ts), sig, at(SIGNATURE_TOLERANCE_SECONDS + 1)).ok).toBe(false)
    expect(check(String(ts), sig, at(-SIGNATURE_TOLERANCE_SECONDS))).toEqual({ ok: true })
    expect(check(String(ts), sig, at(-SIGNATURE_TOLERANCE_SECONDS - 1))).toEqual({
      ok: false,
      reason: 'the timestamp is 301 s ahead of this clock, more than 300 s'
    })
    for (const bad of [undefined, '', `${ts}.0`, `${ts}e0`, ` ${ts}`, '-1', '0x10', `${ts}\n`])
      expect(check(bad, sig), JSON.stringify(bad)).toEqual({
        ok: false,
        reason: 'x-certdesk-timestamp is missing or not whole Unix seconds'
      })
    for (const bad of [undefined, '', sig.toUpperCase(), sig.slice(3), `${sig},v1=00`, `v0=${sig.slice(3)}`])
      expect(check(String(ts), bad).ok, JSON.stringify(bad)).toBe(false)
    expect(
      verifyWebhookSignature({
        secret: 'another-secret-of-length',
        timestamp: String(ts),
        signature: sig,
        body,
        now: clock.now()
      })
    ).toEqual({ ok: false, reason: 'the signature does not match the body and timestamp' })
  })
})
