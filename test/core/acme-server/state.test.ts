/**
 * The embedded ACME server's state changes called as core functions, without HTTP or JWS
 * (src-main/core/acme-server): what an order, its authorizations and an account may become,
 * at known dates (manual clock) and on a real SQLite store.
 */
import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AcmeError, type AcmeAccount } from '../../../src-main/core/acme-server'
import { renewalWindow } from '../../../src-main/core/acme-server/certificates'
import { manualClock } from '../../support/clock'
import { startServer, type TestServer } from '../../support/server'

const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let serial = 0

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
})
afterAll(async () => await s.close())

/** A subscription for `domain` and an account bound to it through its EAB key id. */
async function account(domain: string): Promise<AcmeAccount> {
  const r = await s.reseller({ credit: 500 })
  const res = await s.request<{ acme: { subscription_id: number } }>('POST', '/orders', {
    key: r.key,
    body: { product_id: 12, domain }
  })
  expect(res.status).toBe(200)
  const sub = await s.service.acme.byId(res.body.acme.subscription_id)
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
  return s.service.acmeServer.accounts.create({
    eabKid: sub.eabKid,
    jwk,
    thumbprint: `thumbprint-${++serial}`,
    contact: ['mailto:ops@example.com', 42]
  })
}

const refusal = (type: string, message: RegExp) =>
  expect.objectContaining({ type, message: expect.stringMatching(message) })

describe('ACME server core', () => {
  it('binds an account to its subscription and keeps only string contacts', async () => {
    const a = await account('bind.example.com')
    expect(a).toMatchObject({ status: 'valid', contact: ['mailto:ops@example.com'] })
    expect(a.createdAt.toISOString()).toBe('2026-11-21T10:00:00.000Z')
    expect(await s.service.acmeServer.accounts.byThumbprint(a.thumbprint)).toEqual(a)
  })

  it('opens an order with one authorization per name and refuses names the subscription does not cover', async () => {
    const a = await account('order.example.com')
    const core = s.service.acmeServer
    await expect(core.orders.create(a, ['order.example.com', 'other.example.net'])).rejects.toEqual(
      refusal('rejectedIdentifier', /^could not create the order: other\.example\.net is not covered/)
    )
    const o = await core.orders.create(a, ['Order.Example.com.', 'www.order.example.com'])
    expect(o).toMatchObject({ status: 'pending', identifiers: ['order.example.com', 'www.order.example.com'] })
    // RFC 8555 §7.1.3: a week to complete it.
    expect(o.expiresAt.toISOString()).toBe('2026-11-28T10:00:00.000Z')
    const z = await core.authorizations.get(a, o.authorizationIds[0])
    expect(z.challenges.map((c) => [c.type, c.status])).toEqual([
      ['http-01', 'pending'],
      ['dns-01', 'pending'],
      ['dns-persist-01', 'pending']
    ])
    expect(await core.orders.listOpen(a)).toEqual([o.publicId])
    // Another account sees none of it.
    const stranger = await account('stranger.example.com')
    await expect(core.orders.get(stranger, o.publicId)).rejects.toMatchObject({ type: 'malformed', status: 404 })
    await expect(core.authorizations.get(stranger, o.authorizationIds[0])).rejects.toBeInstanceOf(AcmeError)
  })

  it('makes the order invalid when the client deactivates one of its authorizations (RFC 8555 §7.1.6)', async () => {
    const a = await account('deact.example.com')
    const core = s.service.acmeServer
    const o = await core.orders.create(a, ['deact.example.com'])
    expect((await core.authorizations.deactivate(a, o.authorizationIds[0])).status).toBe('deactivated')
    await expect(core.authorizations.deactivate(a, o.authorizationIds[0])).rejects.toEqual(
      refusal('malformed', /^the authorization is deactivated$/)
    )
    expect((await core.orders.get(a, o.publicId)).status).toBe('invalid')
    expect(await core.orders.listOpen(a)).toEqual([])
    await expect(core.finalizer.finalize(a, o.publicId, { csr: 'AA' })).rejects.toEqual(
      refusal('orderNotReady', /^the order is invalid, not ready$/)
    )
  })

  it('lets a pending order expire after a week', async () => {
    const a = await account('late.example.com')
    const core = s.service.acmeServer
    const o = await core.orders.create(a, ['late.example.com'])
    clock.advanceDays(7)
    expect((await core.orders.get(a, o.publicId)).status).toBe('pending')
    clock.advanceDays(1)
    expect((await core.orders.get(a, o.publicId)).status).toBe('invalid')
  })

  it('refuses an account update it cannot make whole, and a key another account holds', async () => {
    const a = await account('update.example.com')
    const b = await account('other-update.example.com')
    const accounts = s.service.acmeServer.accounts
    await expect(accounts.update(a, { contact: ['mailto:new@example.com'], status: 'revoked' })).rejects.toEqual(
      refusal('malformed', /only status a client may set is deactivated/)
    )
    expect((await accounts.get(a.id))?.contact).toEqual(['mailto:ops@example.com'])
    expect(await accounts.changeKey(a, b.jwk, b.thumbprint)).toEqual({ takenBy: b.id })
    const deactivated = await accounts.update(a, { status: 'deactivated' })
    expect(deactivated.status).toBe('deactivated')
  })

  it('refuses to revoke what it cannot decode, and has no renewal window for an unknown CertID', async () => {
    const a = await account('revoke.example.com')
    await expect(
      s.service.acmeServer.certificates.revoke({ certificate: 'AA', reason: 1, by: { account: a } })
    ).rejects.toEqual(refusal('malformed', /^could not decode the certificate$/))
    await expect(s.service.acmeServer.certificates.renewalInfo('nope.nope')).rejects.toMatchObject({ status: 404 })
  })
})

describe('RFC 9773 renewal window', () => {
  const notBefore = new Date('2026-03-15T00:00:00Z')
  const now = new Date('2026-05-01T12:00:00Z')

  it('suggests the second-to-last sixth of a 200-day lifetime', () => {
    // 2026-03-15 to 2026-10-01 is 200 days: from 66 d 16 h to 33 d 8 h before the end.
    const w = renewalWindow({ notBefore, notAfter: new Date('2026-10-01T00:00:00Z'), revoked: false }, now)
    expect(w.start.toISOString()).toBe('2026-07-26T08:00:00.000Z')
    expect(w.end.toISOString()).toBe('2026-08-28T16:00:00.000Z')
  })

  it('ends no later than 14 days before expiry, and at once for a revoked certificate', () => {
    // 47 days (BR §6.3.2 from 2029-03-15): a sixth would be 7 d 20 h, so the 14-day lead wins.
    const w = renewalWindow({ notBefore, notAfter: new Date('2026-05-01T00:00:00Z'), revoked: false }, now)
    expect(w.start.toISOString()).toBe('2026-04-15T08:00:00.000Z')
    expect(w.end.toISOString()).toBe('2026-04-17T00:00:00.000Z')
    expect(renewalWindow({ notBefore, notAfter: new Date('2026-10-01T00:00:00Z'), revoked: true }, now)).toEqual({
      start: new Date('2026-04-30T12:00:00Z'),
      end: now
    })
  })
})
