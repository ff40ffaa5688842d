/**
 * Account keys kept imported between requests (src-main/acme/account-keys.ts) and JWS signatures
 * checked with node:crypto (src-main/acme/jws.ts): every algorithm an ACME client uses verifies
 * as with jose, a changed signature or a key that does not fit the algorithm is refused, and
 * after a key rollover (RFC 8555 §7.3.5) the old key is refused even though it was kept.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { Agent, request } from 'node:https'
import * as acme from 'acme-client'
import { calculateJwkThumbprint, exportJWK, FlattenedSign, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountKeys } from '../../src-main/acme/account-keys'
import { parseJws, verifyWith } from '../../src-main/acme/jws'
import { ACME_SETTINGS, startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { freePort } from '../support/acme'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Acme = { account: { eab_kid: string; eab_hmac_key: string; server_url: string } }

const keyPair = (kind: string): KeyObject => {
  switch (kind) {
    case 'P-256':
    case 'P-384':
    case 'P-521':
      return generateKeyPairSync('ec', { namedCurve: kind }).privateKey
    case 'Ed25519':
      return generateKeyPairSync('ed25519').privateKey
    case 'RSA-1024':
      return generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey
    default:
      return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  }
}

async function jwsOf(key: KeyObject, alg: string, payload: string, extra: Record<string, unknown> = {}) {
  const jwk = await exportJWK(createPublicKey(key))
  const jws = await new FlattenedSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg, nonce: 'n', url: 'https://localhost/acme/x', jwk, ...extra })
    .sign(key)
  return { jws, jwk }
}

describe('JWS signatures checked with node:crypto', () => {
  const cases: [string, string][] = [
    ['ES256', 'P-256'],
    ['ES384', 'P-384'],
    ['ES512', 'P-521'],
    ['RS256', 'RSA'],
    ['RS512', 'RSA'],
    ['PS256', 'RSA'],
    ['EdDSA', 'Ed25519']
  ]
  for (const [alg, kind] of cases) {
    it(`verifies ${alg} as jose does, with a kept key and without, and refuses a changed signature`, async () => {
      const key = keyPair(kind)
      const { jws, jwk } = await jwsOf(key, alg, '{"hello":"world"}')
      const parsed = parseJws(jws)
      const kept = new AccountKeys().keyOf({ id: 1, thumbprint: 't', jwk })
      expect(kept).not.toBeNull()
      expect(await verifyWith(parsed, jwk)).toBe('{"hello":"world"}')
      expect(await verifyWith(parsed, jwk, kept)).toBe('{"hello":"world"}')
      // POST-as-GET: the empty payload.
      const empty = await jwsOf(key, alg, '')
      expect(await verifyWith(parseJws(empty.jws), empty.jwk, kept)).toBe('')
      const sig = Buffer.from(jws.signature, 'base64url')
      sig[sig.length >> 1] ^= 0x01
      const changed = parseJws({ ...jws, signature: sig.toString('base64url') })
      await expect(verifyWith(changed, jwk, kept)).rejects.toThrow(/could not verify the JWS signature/)
      const otherPayload = parseJws({ ...jws, payload: Buffer.from('{"hello":"mars"}').toString('base64url') })
      await expect(verifyWith(otherPayload, jwk, kept)).rejects.toThrow(/could not verify the JWS signature/)
    })
  }

  it('refuses a key that does not fit the algorithm, and RSA keys under 2048 bits', async () => {
    // Signed by a P-384 key but announced as ES256: the curve does not fit the algorithm.
    const p384 = keyPair('P-384')
    const wrongCurve = await jwsOf(p384, 'ES384', '{}')
    const asEs256 = { ...wrongCurve.jws }
    const header = JSON.parse(Buffer.from(asEs256.protected as string, 'base64url').toString())
    asEs256.protected = Buffer.from(JSON.stringify({ ...header, alg: 'ES256' })).toString('base64url')
    await expect(verifyWith(parseJws(asEs256), wrongCurve.jwk)).rejects.toThrow(/could not verify the JWS signature/)
    // jose will not sign with RSA under 2048 bits; node:crypto will, and the check must still refuse.
    const smallKey = keyPair('RSA-1024')
    const smallJwk = await exportJWK(createPublicKey(smallKey))
    const prot = Buffer.from(JSON.stringify({ alg: 'RS256', nonce: 'n', url: 'u', jwk: smallJwk })).toString(
      'base64url'
    )
    const small = {
      protected: prot,
      payload: '',
      signature: sign('sha256', Buffer.from(`${prot}.`), smallKey).toString('base64url')
    }
    await expect(verifyWith(parseJws(small), smallJwk)).rejects.toThrow(/could not verify the JWS signature/)
    // An RSA signature checked against an EC account key.
    const rsa = await jwsOf(keyPair('RSA'), 'RS256', '{}')
    const ecJwk = await exportJWK(createPublicKey(keyPair('P-256')))
    await expect(verifyWith(parseJws(rsa.jws), ecJwk)).rejects.toThrow(/could not verify the JWS signature/)
  })

  it('leaves non-base64url parts and private members to jose, which refuses them', async () => {
    const key = keyPair('P-256')
    const { jws, jwk } = await jwsOf(key, 'ES256', '{"a":1}')
    await expect(verifyWith(parseJws({ ...jws, signature: `${jws.signature}+` }), jwk)).rejects.toThrow(
      /could not verify the JWS signature/
    )
    const withPrivate = { ...jwk, d: (await exportJWK(key)).d } as JWK
    await expect(verifyWith(parseJws(jws), withPrivate)).rejects.toThrow(/could not verify the JWS signature/)
  })
})

describe('AccountKeys', () => {
  it('keeps at most its size, least recently used out, and imports anew when the stored key changed', async () => {
    const keys = new AccountKeys(2)
    const jwkA = await exportJWK(createPublicKey(keyPair('P-256')))
    const jwkB = await exportJWK(createPublicKey(keyPair('P-256')))
    const a = { id: 1, thumbprint: await calculateJwkThumbprint(jwkA), jwk: jwkA }
    const b = { id: 2, thumbprint: await calculateJwkThumbprint(jwkB), jwk: jwkB }
    const c = { id: 3, thumbprint: 'c', jwk: await exportJWK(createPublicKey(keyPair('RSA'))) }
    const first = keys.keyOf(a)
    expect(keys.keyOf(a)).toBe(first)
    keys.keyOf(b)
    keys.keyOf(a) // a is now the most recent
    keys.keyOf(c) // b goes
    expect(keys.size).toBe(2)
    expect(keys.keyOf(a)).toBe(first)
    // The same account, its stored key rolled over: the kept key is not used.
    const rolled = keys.keyOf({ id: 1, thumbprint: b.thumbprint, jwk: jwkB })
    expect(rolled).not.toBe(first)
    expect(rolled?.export({ format: 'jwk' }).x).toBe(jwkB.x)
    keys.drop(1)
    expect(keys.keyOf(a)).not.toBe(first)
  })

  it('keeps nothing for a JWK it cannot import, so jose decides', () => {
    const keys = new AccountKeys()
    expect(keys.keyOf({ id: 9, thumbprint: 'x', jwk: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } })).toBeNull()
    expect(keys.keyOf({ id: 9, thumbprint: 'x', jwk: { kty: 'oct', k: 'AAAA' } })).toBeNull()
    expect(keys.size).toBe(0)
  })
})

describe('a kept account key and key rollover, over HTTPS', () => {
  let s: TestServer
  let server: RunningAcmeServer
  let reseller: TestReseller

  beforeAll(async () => {
    s = await startServer()
    await s.service.settings.set(ACME_SETTINGS.http01Port, String(await freePort()))
    server = await startAcmeServer(s.service, { port: 0 })
    acme.axios.defaults.httpsAgent = new Agent({ ca: server.rootPem })
    reseller = await s.reseller({ credit: 1000 })
  })
  afterAll(async () => {
    await server?.close()
    await s?.close()
  })

  async function subscribe(domain: string): Promise<Acme> {
    const created = await s.request<Record<string, unknown>>('POST', '/orders', {
      key: reseller.key,
      body: { product_id: 12, domain }
    })
    expect(created.status).toBe(200)
    return (await s.request<{ acme: Acme }>('GET', `/orders/${created.body.order_id}/acme`, { key: reseller.key })).body
      .acme
  }

  function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', ca: server.rootPem, headers: { 'content-type': 'application/jose+json' } },
        (res) => {
          let text = ''
          res.on('data', (d) => (text += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
        }
      )
      req.on('error', reject)
      req.end(JSON.stringify(body))
    })
  }

  it('refuses the old key after a rollover, though it was kept from earlier requests', async () => {
    const a = await subscribe('kept.example.com')
    const oldKey = await acme.crypto.createPrivateEcdsaKey()
    const c = new acme.Client({
      directoryUrl: a.account.server_url,
      accountKey: oldKey,
      externalAccountBinding: { kid: a.account.eab_kid, hmacKey: a.account.eab_hmac_key }
    })
    await c.createAccount({ termsOfServiceAgreed: true })
    const url = c.getAccountUrl()
    // Several requests with the account key: it is kept from the first on.
    for (let i = 0; i < 3; i++) expect(await c.updateAccount({})).toMatchObject({ status: 'valid' })
    await c.updateAccountKey(await acme.crypto.createPrivateRsaKey(2048))
    const withOld = new acme.Client({ directoryUrl: a.account.server_url, accountKey: oldKey, accountUrl: url })
    await expect(withOld.updateAccount({})).rejects.toThrow(/could not verify the JWS signature/)
    // The account still works with its new key (the client signs with it now).
    expect(await c.updateAccount({})).toMatchObject({ status: 'valid' })
    // And a bare JWS with the old key and the account's kid is refused the same way.
    const nonce = await new Promise<string>((resolve, reject) => {
      const req = request(`${server.baseUrl}/acme/new-nonce`, { method: 'HEAD', ca: server.rootPem }, (res) => {
        res.resume()
        resolve(res.headers['replay-nonce'] as string)
      })
      req.on('error', reject)
      req.end()
    })
    const jws = await new FlattenedSign(new Uint8Array())
      .setProtectedHeader({ alg: 'ES256', kid: url, nonce, url })
      .sign(createPrivateKey(oldKey))
    const answer = await post(url, jws)
    expect(answer.status).toBe(400)
    expect(answer.text).toMatch(/could not verify the JWS signature/)
  })
})
