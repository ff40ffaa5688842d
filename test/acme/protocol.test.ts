/**
 * The embedded ACME server through `acme-client` (a real RFC 8555 client): dns-01 for a
 * wildcard subscription against pebble-challtestsrv, account key rollover (§7.3.5), ARI
 * `replaces` (RFC 9773 §5), EAB required (§7.3.4), revocation by the certificate key (§7.6)
 * and a failed http-01 check.
 */
import { createPrivateKey } from 'node:crypto'
import { Agent, request } from 'node:https'
import { exportJWK, FlattenedSign } from 'jose'
import * as acme from 'acme-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACME_SETTINGS, startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { freePort, setTxt, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Acme = { account: { eab_kid: string; eab_hmac_key: string; server_url: string; accounts: { url: string }[] } }

let s: TestServer
let server: RunningAcmeServer
let dns: ChallTestSrv
let reseller: TestReseller

beforeAll(async () => {
  s = await startServer()
  dns = await startChallTestSrv()
  await s.service.settings.set(ACME_SETTINGS.resolver, dns.dns)
  // Nobody listens here: http-01 checks fail as they would against a site that is down.
  await s.service.settings.set(ACME_SETTINGS.http01Port, String(await freePort()))
  // The names resolve to loopback: a lab, so validation may reach it.
  await s.service.settings.set(ACME_SETTINGS.allowPrivateAddresses, 'true')
  server = await startAcmeServer(s.service, { port: 0 })
  acme.axios.defaults.httpsAgent = new Agent({ ca: server.rootPem })
  reseller = await s.reseller({ credit: 1000 })
})

afterAll(async () => {
  await server?.close()
  await dns?.stop()
  await s?.close()
})

async function subscribe(productId: number, domain: string): Promise<{ orderId: number; acme: Acme }> {
  const created = await s.request<Record<string, unknown>>('POST', '/orders', {
    key: reseller.key,
    body: { product_id: productId, domain }
  })
  expect(created.status).toBe(200)
  const orderId = created.body.order_id as number
  return {
    orderId,
    acme: (await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })).body.acme
  }
}

async function client(a: Acme, key?: Buffer): Promise<acme.Client> {
  const c = new acme.Client({
    directoryUrl: a.account.server_url,
    accountKey: key ?? (await acme.crypto.createPrivateEcdsaKey()),
    externalAccountBinding: { kid: a.account.eab_kid, hmacKey: a.account.eab_hmac_key },
    backoffMin: 50,
    backoffMax: 500
  })
  await c.createAccount({ termsOfServiceAgreed: true, contact: ['mailto:ops@example.com'] })
  return c
}

/** dns-01 through pebble-challtestsrv's TXT records. */
async function issueDns(c: acme.Client, names: string[]): Promise<{ cert: string; key: Buffer }> {
  const [key, csr] = await acme.crypto.createCsr(
    { commonName: names[0], altNames: names },
    await acme.crypto.createPrivateEcdsaKey()
  )
  const cert = await c.auto({
    csr,
    challengePriority: ['dns-01'],
    skipChallengeVerification: true,
    termsOfServiceAgreed: true,
    // acme-client hands dns-01 the record value already: base64url(SHA-256(key authorization)).
    challengeCreateFn: async (authz, _challenge, recordValue) => {
      await setTxt(dns, `_acme-challenge.${authz.identifier.value}`, recordValue)
    },
    challengeRemoveFn: async () => undefined
  })
  return { cert, key }
}

const certIdOf = async (pem: string): Promise<string> => {
  const { ariCertId } = await import('../../src-main/core/acme-server/signer')
  const { x509 } = await import('../../src-main/core/certificates/x509')
  return ariCertId(new x509.X509Certificate(pem.split(/(?<=-----END CERTIFICATE-----)/)[0]))
}

function https(
  method: string,
  url: string,
  body?: unknown
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, ca: server.rootPem, headers: body ? { 'content-type': 'application/jose+json' } : {}, timeout: 10_000 },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      }
    )
    req.on('error', reject)
    req.end(body ? JSON.stringify(body) : undefined)
  })
}

/** A JWS signed with a bare key (`jwk` in the header), as §7.6 allows for revocation. */
async function postWithKey(
  url: string,
  payload: unknown,
  keyPem: Buffer,
  opts: { nonce?: string; signedUrl?: string } = {}
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const key = createPrivateKey(keyPem)
  const jwk = await exportJWK(key)
  const { d: _d, ...pub } = jwk
  const nonce =
    opts.nonce ?? ((await https('HEAD', `${server.baseUrl}/acme/new-nonce`)).headers['replay-nonce'] as string)
  const jws = await new FlattenedSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ES256', jwk: pub, nonce, url: opts.signedUrl ?? url })
    .sign(key)
  return https('POST', url, jws)
}

describe('acme-client against the embedded ACME server', () => {
  it('issues a wildcard with dns-01 for a wildcard subscription', async () => {
    const { acme: a } = await subscribe(13, '*.wild.example.com')
    const c = await client(a)
    const { cert } = await issueDns(c, ['*.wild.example.com', 'wild.example.com'])
    const info = acme.crypto.readCertificateInfo(cert)
    expect(info.domains.altNames.sort()).toEqual(['*.wild.example.com', 'wild.example.com'])
    // A wildcard authorization offers dns-01 only (RFC 8555 §7.1.3, §8.4).
    const order = await c.createOrder({ identifiers: [{ type: 'dns', value: '*.wild.example.com' }] })
    const [authz] = await c.getAuthorizations(order)
    expect(authz.wildcard).toBe(true)
    // A wildcard is proven through DNS only: dns-01, or a dns-persist-01 record with policy=wildcard.
    expect(authz.challenges.map((x) => x.type)).toEqual(['dns-01', 'dns-persist-01'])
  })

  it('rolls the account key over: the new key works, the old one no longer finds the account', async () => {
    const { orderId, acme: a } = await subscribe(12, 'roll.example.com')
    const oldKey = await acme.crypto.createPrivateEcdsaKey()
    const c = await client(a, oldKey)
    const url = c.getAccountUrl()
    const newKey = await acme.crypto.createPrivateRsaKey(2048)
    await c.updateAccountKey(newKey)
    const withNew = new acme.Client({ directoryUrl: a.account.server_url, accountKey: newKey })
    await withNew.createAccount({ onlyReturnExisting: true })
    expect(withNew.getAccountUrl()).toBe(url)
    const withOld = new acme.Client({ directoryUrl: a.account.server_url, accountKey: oldKey })
    await expect(withOld.createAccount({ onlyReturnExisting: true })).rejects.toThrow(/no account exists for this key/)
    // The same account, still bound once to the subscription.
    const after = (await s.request<{ acme: Acme }>('GET', `/orders/${orderId}/acme`, { key: reseller.key })).body.acme
    expect(after.account.accounts.map((x) => x.url)).toEqual([url])
  })

  it('refuses an account update with a status a client may not set, and keeps the contact (RFC 8555 §7.3.6)', async () => {
    const { acme: a } = await subscribe(12, 'contact.example.com')
    const c = await client(a)
    await expect(
      c.updateAccount({ contact: ['mailto:someone-else@example.com'], status: 'valid' } as never)
    ).rejects.toThrow(/the only status a client may set is deactivated/)
    const account = (await c.updateAccount({})) as { status: string; contact: string[] }
    expect(account).toMatchObject({ status: 'valid', contact: ['mailto:ops@example.com'] })
  })

  it('renews with ARI replaces, once, and lets the certificate key revoke', async () => {
    const { acme: a } = await subscribe(12, 'ari.example.com')
    const c = await client(a)
    const first = await issueDns(c, ['ari.example.com'])
    const id = await certIdOf(first.cert)
    const replacing = await c.createOrder({
      identifiers: [{ type: 'dns', value: 'ari.example.com' }],
      replaces: id
    } as never)
    expect((replacing as unknown as { replaces: string }).replaces).toBe(id)
    const [, csr] = await acme.crypto.createCsr(
      { commonName: 'ari.example.com' },
      await acme.crypto.createPrivateEcdsaKey()
    )
    for (const authz of await c.getAuthorizations(replacing)) {
      const ch = authz.challenges.find((x) => x.type === 'dns-01') as acme.Authorization['challenges'][number]
      await setTxt(dns, '_acme-challenge.ari.example.com', await c.getChallengeKeyAuthorization(ch))
      await c.completeChallenge(ch)
      await c.waitForValidStatus(ch)
    }
    await c.finalizeOrder(replacing, csr)
    // RFC 9773 §5: a certificate is replaced once; a second order naming it is refused.
    await expect(
      c.createOrder({ identifiers: [{ type: 'dns', value: 'ari.example.com' }], replaces: id } as never)
    ).rejects.toThrow(/already replaced/)

    // §7.6: the holder of the certificate key may revoke without the account.
    const der = Buffer.from(
      first.cert.split('-----END')[0].replace(/-----BEGIN CERTIFICATE-----|\s/g, ''),
      'base64'
    ).toString('base64url')
    const stranger = await acme.crypto.createPrivateEcdsaKey()
    const refused = await postWithKey(`${server.baseUrl}/acme/revoke-cert`, { certificate: der, reason: 1 }, stranger)
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.text)).toMatchObject({
      type: 'urn:ietf:params:acme:error:unauthorized',
      detail: 'the JWS key is not the key of this certificate'
    })
    const revoked = await postWithKey(`${server.baseUrl}/acme/revoke-cert`, { certificate: der, reason: 1 }, first.key)
    expect(revoked.status).toBe(200)
    await expect(c.revokeCertificate(first.cert)).rejects.toThrow(/already revoked/)
    // A revoked certificate should be renewed at once (RFC 9773 §4.2).
    const ari = await https('GET', `${server.baseUrl}/acme/renewal-info/${id}`)
    const window = JSON.parse(ari.text).suggestedWindow as { start: string; end: string }
    expect(new Date(window.end).getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })

  it('requires External Account Binding and refuses a failed http-01 check', async () => {
    const { acme: a } = await subscribe(12, 'down.example.com')
    const noEab = new acme.Client({
      directoryUrl: a.account.server_url,
      accountKey: await acme.crypto.createPrivateEcdsaKey()
    })
    await expect(noEab.createAccount({ termsOfServiceAgreed: true })).rejects.toThrow(
      /requires External Account Binding/
    )

    const c = await client(a)
    const order = await c.createOrder({ identifiers: [{ type: 'dns', value: 'down.example.com' }] })
    const [authz] = await c.getAuthorizations(order)
    const http = authz.challenges.find((x) => x.type === 'http-01') as acme.Authorization['challenges'][number]
    await c.completeChallenge(http)
    await server.idle()
    const after = await c.getOrder(order)
    expect(after.status).toBe('invalid')
    const res = await c.getAuthorizations(after)
    expect(res[0].status).toBe('invalid')
    const failed = res[0].challenges.find((x) => x.type === 'http-01') as unknown as {
      status: string
      error: { type: string; detail: string }
    }
    expect(failed.status).toBe('invalid')
    expect(failed.error.type).toBe('urn:ietf:params:acme:error:connection')
    expect(failed.error.detail).toMatch(/^could not connect to down\.example\.com \(127\.0\.0\.1:\d+\): ECONNREFUSED$/)
  })

  it('refuses a replayed nonce, a JWS signed for another URL and a MAC algorithm (RFC 8555 §6.2-6.5)', async () => {
    const key = await acme.crypto.createPrivateEcdsaKey()
    const url = `${server.baseUrl}/acme/new-account`
    const first = await postWithKey(url, { onlyReturnExisting: true }, key)
    expect(first.status).toBe(400)
    expect(JSON.parse(first.text).type).toBe('urn:ietf:params:acme:error:accountDoesNotExist')
    const nonce = (await https('HEAD', `${server.baseUrl}/acme/new-nonce`)).headers['replay-nonce'] as string
    expect((await postWithKey(url, { onlyReturnExisting: true }, key, { nonce })).status).toBe(400)
    const replay = await postWithKey(url, { onlyReturnExisting: true }, key, { nonce })
    expect(replay.status).toBe(400)
    expect(JSON.parse(replay.text)).toMatchObject({ type: 'urn:ietf:params:acme:error:badNonce' })
    // §6.5: a badNonce answer carries a fresh nonce to retry with.
    expect(typeof replay.headers['replay-nonce']).toBe('string')
    const elsewhere = await postWithKey(url, { onlyReturnExisting: true }, key, {
      signedUrl: `${server.baseUrl}/acme/new-order`
    })
    expect(elsewhere.status).toBe(403)
    expect(JSON.parse(elsewhere.text).detail).toMatch(/is not the request URL/)
    const hs = await https('POST', url, {
      protected: Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'x', nonce, url })).toString('base64url'),
      payload: '',
      signature: 'AA'
    })
    expect(hs.status).toBe(400)
    expect(JSON.parse(hs.text)).toMatchObject({ type: 'urn:ietf:params:acme:error:badSignatureAlgorithm' })
    expect(hs.headers['content-type']).toMatch(/^application\/problem\+json/)
  })

  it('signs once when a client finalizes the same order twice at the same moment', async () => {
    const { acme: a } = await subscribe(12, 'twice.example.com')
    const c = await client(a)
    const order = await c.createOrder({ identifiers: [{ type: 'dns', value: 'twice.example.com' }] })
    const [authz] = await c.getAuthorizations(order)
    const ch = authz.challenges.find((x) => x.type === 'dns-01') as acme.Authorization['challenges'][number]
    await setTxt(dns, '_acme-challenge.twice.example.com', await c.getChallengeKeyAuthorization(ch))
    await c.completeChallenge(ch)
    await c.waitForValidStatus(ch)
    const [, csr] = await acme.crypto.createCsr(
      { commonName: 'twice.example.com' },
      await acme.crypto.createPrivateEcdsaKey()
    )
    const results = await Promise.allSettled([c.finalizeOrder(order, csr), c.finalizeOrder(order, csr)])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(String(refused.reason)).toMatch(/already being finalized|not ready/)
    const n = (await s.service.ctx.store.get(
      `SELECT COUNT(*) AS n FROM acme_certificates c JOIN acme_orders o ON o.id = c.order_id WHERE o.identifiers = ?`,
      JSON.stringify(['twice.example.com'])
    )) as { n: number }
    expect(n.n).toBe(1)
  })
})
