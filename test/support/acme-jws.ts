/**
 * A bare RFC 8555 client for account keys acme-client does not sign with (P-384, Ed25519): each
 * request a flattened JWS (§6.2) over real HTTPS to the embedded server, with a fresh nonce
 * (§6.5), External Account Binding at account creation (§7.3.4), and kid afterwards.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { request } from 'node:https'
import { calculateJwkThumbprint, exportJWK, FlattenedSign, type JWK } from 'jose'

export interface AcmeAnswer {
  status: number
  headers: Record<string, unknown>
  body: Record<string, unknown>
}

/** One request to the ACME server over HTTPS, trusting `rootPem`; a JWS body as JSON when given. */
export function https(rootPem: string, method: string, url: string, jws?: unknown): Promise<AcmeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, ca: rootPem, headers: jws ? { 'content-type': 'application/jose+json' } : {}, timeout: 10_000 },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => {
          let body: Record<string, unknown>
          try {
            body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
          } catch {
            body = { text }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body })
        })
      }
    )
    req.on('error', reject)
    req.end(jws ? JSON.stringify(jws) : undefined)
  })
}

/** RFC 7518 §3.1 / RFC 8037 §3.1: the JWS algorithm for a private key. */
function algFor(key: KeyObject): string {
  const d = key.asymmetricKeyDetails
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA'
  if (key.asymmetricKeyType === 'ec') return d?.namedCurve === 'secp384r1' ? 'ES384' : 'ES256'
  return 'RS256'
}

export interface RawAcmeAccount {
  url: string
  directory: Record<string, string>
  jwk: JWK
  /** POST (payload '' = POST-as-GET) signed with the account key, kid in the header. */
  post(url: string, payload: unknown): Promise<AcmeAnswer>
  keyAuthorization(token: string): Promise<string>
}

export async function rawAccount(
  directoryUrl: string,
  rootPem: string,
  key: KeyObject,
  eab: { kid: string; hmacKey: string }
): Promise<RawAcmeAccount> {
  const directory = (await https(rootPem, 'GET', directoryUrl)).body as Record<string, string>
  const alg = algFor(key)
  const jwk = await exportJWK(createPublicKey(key))
  const nonce = async (): Promise<string> =>
    (await https(rootPem, 'HEAD', directory.newNonce)).headers['replay-nonce'] as string
  const sign = async (url: string, payload: unknown, id: { jwk: JWK } | { kid: string }): Promise<AcmeAnswer> => {
    const bytes = new TextEncoder().encode(payload === '' ? '' : JSON.stringify(payload))
    const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg, nonce: await nonce(), url, ...id }).sign(key)
    return https(rootPem, 'POST', url, jws)
  }
  const binding = await new FlattenedSign(new TextEncoder().encode(JSON.stringify(jwk)))
    .setProtectedHeader({ alg: 'HS256', kid: eab.kid, url: directory.newAccount })
    .sign(Buffer.from(eab.hmacKey, 'base64url'))
  const created = await sign(
    directory.newAccount,
    { termsOfServiceAgreed: true, externalAccountBinding: binding },
    { jwk }
  )
  if (created.status !== 201) throw new Error(`could not create the ACME account: ${JSON.stringify(created.body)}`)
  const url = created.headers.location as string
  const thumbprint = await calculateJwkThumbprint(jwk, 'sha256')
  return {
    url,
    directory,
    jwk,
    post: (target, payload) => sign(target, payload, { kid: url }),
    keyAuthorization: async (token) => `${token}.${thumbprint}`
  }
}
