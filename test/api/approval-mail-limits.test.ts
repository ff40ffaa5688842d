/**
 * A reseller's script that asks for approval email again and again: each message goes through
 * the admin's SMTP relay to admin@ (or another constructed mailbox of) a domain. Past a few
 * sends per order, or a few hundred messages per reseller, within an hour or a day, the API and
 * the desktop bridge answer 429 with Retry-After, nothing changes and no message leaves; other
 * resellers go on as before, and once the window has passed (the service's clock, moved by
 * hand) the same request goes through. Real HTTP on loopback, real SQLite, a real SMTP server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import {
  APPROVAL_MESSAGES_PER_RESELLER_HOUR,
  APPROVAL_SENDS_PER_ORDER_DAY,
  APPROVAL_SENDS_PER_ORDER_HOUR
} from '../../src-main/core/certificates/approval-mail-limits'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { API_VERSION } from '../../src-main/http/server'
import { manualClock } from '../support/clock'
import { opensslCsr } from '../support/csr'
import { startSmtp, type SmtpSink } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let smtp: SmtpSink
let handlers: AppHandlers

beforeAll(async () => {
  ;[s, smtp] = await Promise.all([startServer({ clock: clock.clock }), startSmtp()])
  await s.service.settings.set(DCV_SETTINGS.smtpUrl, smtp.url)
  handlers = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
})
afterAll(async () => {
  await Promise.all([s?.close(), smtp?.close()])
})

const post = async (path: string, body: Body, key: string) => await s.request<Body>('POST', path, { key, body })
const later = (ms: number): void => clock.set(new Date(clock.now().getTime() + ms))

/** Messages the SMTP server received about `orderNumber`. */
const mailsFor = (orderNumber: string): number => smtp.messages.filter((m) => m.raw.includes(orderNumber)).length

/** An order configured for email validation of `names` (the first is the order domain). */
async function emailOrder(r: TestReseller, names: string[]): Promise<{ id: number; number: string }> {
  const multi = names.length > 2
  const created = await post(
    '/orders',
    multi ? { product_id: 4, domain: names[0], san_count: names.length - 4 } : { product_id: 2, domain: names[0] },
    r.key
  )
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  const id = created.body.order_id as number
  const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr(names, 'ec:P-256') }, r.key)
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  expect(conf.body.dcv_method).toBe('email')
  return { id, number: created.body.order_number as string }
}

describe('approval email of one order', () => {
  it('is sent a few times an hour and a day; past that 429 with Retry-After and no mail, other resellers unaffected', async () => {
    const a = await s.reseller({ credit: 1000 })
    const b = await s.reseller({ credit: 1000 })
    const o = await emailOrder(a, ['resend.example.test'])
    expect(mailsFor(o.number)).toBe(1)

    // The script's loop: 100 resends, one after the other.
    const answers: { status: number; retryAfter: string | null; body: Body }[] = []
    for (let i = 0; i < 100; i++) {
      const res = await post('/ssl/resend-validation', { order_id: o.id }, a.key)
      answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: res.body })
    }
    // The configure was the first send of the hour; the resends make up the rest.
    expect(answers.filter((x) => x.status === 200)).toHaveLength(APPROVAL_SENDS_PER_ORDER_HOUR - 1)
    expect(answers.slice(APPROVAL_SENDS_PER_ORDER_HOUR - 1).every((x) => x.status === 429)).toBe(true)
    expect(mailsFor(o.number)).toBe(APPROVAL_SENDS_PER_ORDER_HOUR)
    const refused = answers[answers.length - 1]
    expect(refused.retryAfter).toBe('3600')
    expect(refused.body).toEqual({
      success: false,
      error: `could not send the approval email for order ${o.number}: approval email was sent for it ${APPROVAL_SENDS_PER_ORDER_HOUR} times within an hour, the most allowed; try again in 3600 seconds (after 2026-11-21 11:00:00 UTC)`
    })

    // change-dcv back to email counts as a send too: refused, and the order keeps what it had.
    const before = await s.request<Body>('GET', `/ssl/${o.id}`, { key: a.key })
    const change = await post(
      '/ssl/change-dcv',
      { order_id: o.id, dcv_method: 'email', approver_email: 'webmaster@resend.example.test' },
      a.key
    )
    expect(change.status).toBe(429)
    expect(change.headers.get('retry-after')).toBe('3600')
    const after = await s.request<Body>('GET', `/ssl/${o.id}`, { key: a.key })
    expect(after.body.approver_email).toBe(before.body.approver_email)
    expect(after.body.validation).toEqual(before.body.validation)
    expect(mailsFor(o.number)).toBe(APPROVAL_SENDS_PER_ORDER_HOUR)

    // The desktop bridge's resend and choice of approver answer the same 429.
    const bridged = await callHandler(handlers, 'resendValidation', [a.id, o.id])
    expect(bridged.status).toBe(429)
    expect(bridged.body).toEqual({ success: false, error: expect.stringMatching(/within an hour, the most allowed/) })
    const chosen = await callHandler(handlers, 'chooseApprover', [
      a.id,
      o.id,
      'resend.example.test',
      'hostmaster@resend.example.test'
    ])
    expect(chosen.status).toBe(429)
    expect(mailsFor(o.number)).toBe(APPROVAL_SENDS_PER_ORDER_HOUR)

    // Another reseller's order is mailed as usual.
    const other = await emailOrder(b, ['other.example.test'])
    expect((await post('/ssl/resend-validation', { order_id: other.id }, b.key)).status).toBe(200)
    expect(mailsFor(other.number)).toBe(2)
    // And another reseller cannot learn anything about the limited order: 404, not 429.
    expect((await post('/ssl/resend-validation', { order_id: o.id }, b.key)).status).toBe(404)

    // A second before the hour is over it still waits; at the hour it goes through.
    later(3599_000)
    const early = await post('/ssl/resend-validation', { order_id: o.id }, a.key)
    expect(early.status).toBe(429)
    expect(early.headers.get('retry-after')).toBe('1')
    later(1000)
    expect((await post('/ssl/resend-validation', { order_id: o.id }, a.key)).status).toBe(200)
    expect(mailsFor(o.number)).toBe(APPROVAL_SENDS_PER_ORDER_HOUR + 1)

    // The day's allowance: the rest of it this hour, then 429 until the first send is a day old.
    for (let i = APPROVAL_SENDS_PER_ORDER_HOUR + 1; i < APPROVAL_SENDS_PER_ORDER_DAY; i++) {
      expect((await post('/ssl/resend-validation', { order_id: o.id }, a.key)).status).toBe(200)
    }
    later(3600_000)
    const daily = await post('/ssl/resend-validation', { order_id: o.id }, a.key)
    expect(daily.status).toBe(429)
    expect(daily.body.error).toMatch(
      /sent for it 10 times within 24 hours, the most allowed; try again in 79200 seconds/
    )
    expect(daily.headers.get('retry-after')).toBe(String(22 * 3600))
    expect(mailsFor(o.number)).toBe(APPROVAL_SENDS_PER_ORDER_DAY)
  })
})

describe('approval email of one reseller', () => {
  it('is limited over all its orders and names; another reseller is not, and the next hour it goes through', async () => {
    clock.set('2026-12-01T08:00:00Z')
    const c = await s.reseller({ credit: 100_000 })
    const d = await s.reseller({ credit: 1000 })
    const names = (tag: string, count: number): string[] => [
      `${tag}.example.test`,
      `www.${tag}.example.test`,
      ...Array.from({ length: count - 2 }, (_, i) => `n${i}.${tag}.example.test`)
    ]
    // The largest order the catalogue sells (252 names), its messages kept in the outbox while
    // no relay is set: they count all the same.
    await s.service.settings.set(DCV_SETTINGS.smtpUrl, '')
    const first = await emailOrder(c, names('bulk-one', 252))
    expect(await s.service.certificates.outbox(first.id)).toHaveLength(252)
    await s.service.settings.set(DCV_SETTINGS.smtpUrl, smtp.url)

    // 50 more names do not fit the hour's allowance.
    expect(252 + 50).toBeGreaterThan(APPROVAL_MESSAGES_PER_RESELLER_HOUR)
    const created = await post('/orders', { product_id: 4, domain: 'bulk-two.example.test', san_count: 46 }, c.key)
    expect(created.status).toBe(200)
    const second = { id: created.body.order_id as number, number: created.body.order_number as string }
    const csr = opensslCsr(names('bulk-two', 50), 'ec:P-256')
    const refused = await post('/ssl/configure', { order_id: second.id, csr }, c.key)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('3600')
    expect(refused.body.error).toBe(
      `could not send the approval email for order ${second.number}: this account sent 252 approval messages within an hour and 50 more would pass the ${APPROVAL_MESSAGES_PER_RESELLER_HOUR} allowed; try again in 3600 seconds (after 2026-12-01 09:00:00 UTC)`
    )
    // Nothing changed: the order still waits for its CSR, and no message left.
    const order = await s.request<Body>('GET', `/orders/${second.id}`, { key: c.key })
    expect((order.body.order as Body).status).toBe('pending')
    expect(mailsFor(second.number)).toBe(0)
    // Resending the first order's messages does not fit either.
    expect((await post('/ssl/resend-validation', { order_id: first.id }, c.key)).status).toBe(429)
    expect(await s.service.certificates.outbox(first.id)).toHaveLength(252)
    expect(mailsFor(first.number)).toBe(0)

    // Another reseller is mailed as usual.
    const other = await emailOrder(d, ['elsewhere.example.test'])
    expect(mailsFor(other.number)).toBe(1)

    // An hour later the first order's messages have aged out of the hour, and the CSR goes in.
    later(3600_000)
    const accepted = await post('/ssl/configure', { order_id: second.id, csr }, c.key)
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    expect(mailsFor(second.number)).toBe(50)
  })
})
