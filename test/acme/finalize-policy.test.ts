/**
 * Finalize on the embedded ACME server applies the CSR policy of every other issuance path
 * (POST /ssl/configure): an RSA key under 2048 bits, a curve or key type the Baseline
 * Requirements do not allow, and a certificate key that is the account key (RFC 8555 §11.1)
 * are refused with badCSR, for P-256, P-384 and Ed25519 account keys alike; a good CSR still
 * issues. Accounts sign with a bare JWS client, as acme-client signs with P-256 and RSA only.
 */
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACME_SETTINGS, startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { x509 } from '../../src-main/core/certificates/x509'
import { rawAccount, type RawAcmeAccount } from '../support/acme-jws'
import { setTxt, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { opensslCsr, opensslCsrForKey, type OpensslKey } from '../support/csr'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>

let s: TestServer
let server: RunningAcmeServer
let dns: ChallTestSrv
let reseller: TestReseller

beforeAll(async () => {
  s = await startServer()
  dns = await startChallTestSrv()
  await s.service.settings.set(ACME_SETTINGS.resolver, dns.dns)
  server = await startAcmeServer(s.service, { port: 0 })
  reseller = await s.reseller({ credit: 1000 })
})
afterAll(async () => {
  await server?.close()
  await dns?.stop()
  await s?.close()
})

const der = (pem: string): string =>
  Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64').toString('base64url')

/** A subscription for `domain`, an account with `key`, and an order for `domain` made ready over dns-01. */
async function readyOrder(
  domain: string,
  key: KeyObject
): Promise<{ account: RawAcmeAccount; orderUrl: string; finalize: string }> {
  const created = await s.request<Body>('POST', '/orders', { key: reseller.key, body: { product_id: 12, domain } })
  expect(created.status).toBe(200)
  const details = await s.request<{ acme: { account: { eab_kid: string; eab_hmac_key: string; server_url: string } } }>(
    'GET',
    `/orders/${created.body.order_id as number}/acme`,
    { key: reseller.key }
  )
  const { eab_kid, eab_hmac_key, server_url } = details.body.acme.account
  const account = await rawAccount(server_url, server.rootPem, key, { kid: eab_kid, hmacKey: eab_hmac_key })
  const order = await account.post(account.directory.newOrder, { identifiers: [{ type: 'dns', value: domain }] })
  expect(order.status).toBe(201)
  const authz = await account.post((order.body.authorizations as string[])[0], '')
  const ch = (authz.body.challenges as { type: string; url: string; token: string }[]).find((c) => c.type === 'dns-01')!
  const digest = createHash('sha256')
    .update(await account.keyAuthorization(ch.token))
    .digest('base64url')
  await setTxt(dns, `_acme-challenge.${domain}`, digest)
  await account.post(ch.url, {})
  await server.idle()
  const orderUrl = order.headers.location as string
  expect((await account.post(orderUrl, '')).body.status).toBe('ready')
  return { account, orderUrl, finalize: order.body.finalize as string }
}

const keyOf = (type: 'P-256' | 'P-384' | 'Ed25519'): KeyObject =>
  type === 'Ed25519'
    ? generateKeyPairSync('ed25519').privateKey
    : generateKeyPairSync('ec', { namedCurve: type }).privateKey

describe('ACME finalize: the certificate key is not the account key (RFC 8555 §11.1)', () => {
  it.each(['P-256', 'P-384', 'Ed25519'] as const)(
    'refuses a CSR carrying the %s account key with badCSR, then issues for a key of its own',
    async (type) => {
      const domain = `${type.toLowerCase()}.account-key.example.com`
      const key = keyOf(type)
      const { account, orderUrl, finalize } = await readyOrder(domain, key)
      const keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString()
      const refused = await account.post(finalize, { csr: der(opensslCsrForKey([domain], keyPem)) })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({
        type: 'urn:ietf:params:acme:error:badCSR',
        detail:
          'could not accept CSR: its key is the ACME account key; the certificate needs a key of its own (RFC 8555 §11.1)'
      })
      // Nothing was signed: the order waits for a good CSR, which still issues.
      expect((await account.post(orderUrl, '')).body.status).toBe('ready')
      const good = opensslCsr([domain], 'ec:P-256')
      const done = await account.post(finalize, { csr: der(good) })
      expect(done.status).toBe(200)
      expect(done.body.status).toBe('valid')
      const chain = await account.post(done.body.certificate as string, '')
      expect(chain.status).toBe(200)
      const leaf = new x509.X509Certificate((chain.body.text as string).split(/(?<=-----END CERTIFICATE-----)/)[0])
      const csrKey = new x509.Pkcs10CertificateRequest(good).publicKey.rawData
      expect(Buffer.from(leaf.publicKey.rawData).equals(Buffer.from(csrKey))).toBe(true)
    }
  )
})

describe('ACME finalize: the CSR policy of /ssl/configure', () => {
  it('refuses the keys /ssl/configure refuses, with badCSR and the same reason', async () => {
    const domain = 'weak.policy.example.com'
    const { account, orderUrl, finalize } = await readyOrder(domain, keyOf('P-256'))
    const cases: [OpensslKey, RegExp][] = [
      ['rsa:1024', /^could not accept CSR: its RSA key has 1024 bits; at least 2048 are required$/],
      ['ec:P-521', /^could not accept CSR: curve P-521 is not supported; use P-256 or P-384$/],
      ['ed25519', /^could not accept CSR: key algorithm Ed25519 is not supported/]
    ]
    for (const [keyType, reason] of cases) {
      const csr = opensslCsr([domain], keyType)
      const refused = await account.post(finalize, { csr: der(csr) })
      expect(refused.status, keyType).toBe(400)
      expect(refused.body.type, keyType).toBe('urn:ietf:params:acme:error:badCSR')
      expect(refused.body.detail, keyType).toMatch(reason)
      // The same CSR on a TLS order through the reseller API: the same words.
      const tls = await s.request<Body>('POST', '/orders', { key: reseller.key, body: { product_id: 2, domain } })
      const configured = await s.request<Body>('POST', '/ssl/configure', {
        key: reseller.key,
        body: { order_id: tls.body.order_id, csr, dcv_method: 'dns' }
      })
      expect(configured.status, keyType).toBe(400)
      expect(configured.body, keyType).toEqual({ success: false, error: refused.body.detail })
    }
    // No 1024-bit (or other refused) certificate exists; a good CSR still issues.
    expect((await account.post(orderUrl, '')).body.status).toBe('ready')
    const done = await account.post(finalize, { csr: der(opensslCsr([domain], 'rsa:2048')) })
    expect(done.body.status).toBe('valid')
  })
})
