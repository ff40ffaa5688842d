/**
 * RFC 8555 §6.2 request authentication: every POST is a flattened JWS whose protected header
 * carries `alg`, `nonce`, `url` and exactly one of `jwk` / `kid`. Signatures are checked with
 * `jose`; the rules about which key may sign what stay in the server.
 */
import { createHash, webcrypto } from 'node:crypto'
import { calculateJwkThumbprint, flattenedVerify, importJWK, type FlattenedJWSInput, type JWK } from 'jose'
import { AcmeProblem } from './problem'

/** RFC 8555 §6.2: asymmetric algorithms only; MAC and "none" are refused. */
const ALLOWED_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

export interface ProtectedHeader {
  alg: string
  nonce?: string
  url?: string
  jwk?: JWK
  kid?: string
}

export interface ParsedJws {
  jws: FlattenedJWSInput
  header: ProtectedHeader
}

export function parseJws(body: unknown): ParsedJws {
  if (!body || typeof body !== 'object')
    throw new AcmeProblem('malformed', 'the request body must be a flattened JWS (RFC 8555 §6.2)')
  const b = body as Record<string, unknown>
  if (typeof b.protected !== 'string' || typeof b.payload !== 'string' || typeof b.signature !== 'string') {
    throw new AcmeProblem('malformed', 'the JWS needs protected, payload and signature (flattened JSON serialization)')
  }
  if ('header' in b) throw new AcmeProblem('malformed', 'RFC 8555 §6.2 forbids an unprotected JWS header')
  let header: ProtectedHeader
  try {
    header = JSON.parse(Buffer.from(b.protected, 'base64url').toString('utf8')) as ProtectedHeader
  } catch {
    throw new AcmeProblem('malformed', 'could not decode the JWS protected header')
  }
  if (typeof header.alg !== 'string' || !ALLOWED_ALGS.includes(header.alg)) {
    throw new AcmeProblem('badSignatureAlgorithm', `JWS algorithm ${String(header.alg)} is not accepted`, {
      algorithms: ALLOWED_ALGS.filter((a) => a !== 'Ed25519')
    })
  }
  if ((header.jwk ? 1 : 0) + (header.kid ? 1 : 0) !== 1) {
    throw new AcmeProblem('malformed', 'the JWS protected header must carry exactly one of jwk and kid')
  }
  return { jws: { protected: b.protected, payload: b.payload, signature: b.signature }, header }
}

/** Verifies the signature with the given public JWK and returns the decoded payload ('' for POST-as-GET). */
export async function verifyWith(parsed: ParsedJws, jwk: JWK): Promise<string> {
  try {
    const key = await importJWK(jwk, parsed.header.alg)
    const { payload } = await flattenedVerify(parsed.jws, key, { algorithms: ALLOWED_ALGS })
    return Buffer.from(payload).toString('utf8')
  } catch (err) {
    throw new AcmeProblem('malformed', `could not verify the JWS signature: ${(err as Error).message}`)
  }
}

export const publicJwk = (jwk: JWK): JWK => {
  // Keep only the public members; a client that sends `d` must not get it stored.
  const { kty, crv, x, y, n, e } = jwk
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK
}

export const thumbprint = (jwk: JWK): Promise<string> => calculateJwkThumbprint(publicJwk(jwk), 'sha256')

/** SHA-256 of the SubjectPublicKeyInfo of a JWK, to compare an account or certificate key. */
export async function spkiSha256(jwk: JWK, alg: string): Promise<string> {
  const key = (await importJWK(publicJwk(jwk), alg, { extractable: true })) as unknown as webcrypto.CryptoKey
  const spki = await webcrypto.subtle.exportKey('spki', key)
  return createHash('sha256').update(Buffer.from(spki)).digest('hex')
}

/**
 * RFC 8555 §7.3.4: the External Account Binding is a JWS over the account's public JWK, MACed
 * with the EAB HMAC key, whose protected header names the EAB key id and the newAccount URL.
 */
export async function verifyEab(
  eab: unknown,
  accountJwk: JWK,
  newAccountUrl: string,
  hmacKeyFor: (kid: string) => Promise<string | null>
): Promise<string> {
  if (!eab || typeof eab !== 'object')
    throw new AcmeProblem('malformed', 'externalAccountBinding must be a flattened JWS')
  const e = eab as Record<string, unknown>
  if (typeof e.protected !== 'string' || typeof e.payload !== 'string' || typeof e.signature !== 'string') {
    throw new AcmeProblem('malformed', 'externalAccountBinding must be a flattened JWS')
  }
  let header: { alg?: string; kid?: string; url?: string; nonce?: string }
  try {
    header = JSON.parse(Buffer.from(e.protected, 'base64url').toString('utf8'))
  } catch {
    throw new AcmeProblem('malformed', 'could not decode the externalAccountBinding header')
  }
  if (!header.alg || !['HS256', 'HS384', 'HS512'].includes(header.alg)) {
    throw new AcmeProblem('malformed', 'externalAccountBinding must use a MAC algorithm (HS256, HS384 or HS512)')
  }
  if ('nonce' in header)
    throw new AcmeProblem('malformed', 'externalAccountBinding must not carry a nonce (RFC 8555 §7.3.4)')
  if (header.url !== newAccountUrl)
    throw new AcmeProblem('malformed', 'externalAccountBinding url must be the newAccount URL')
  if (typeof header.kid !== 'string') throw new AcmeProblem('malformed', 'externalAccountBinding needs a kid')
  const hmac = await hmacKeyFor(header.kid)
  if (!hmac) throw new AcmeProblem('unauthorized', 'could not bind the account: unknown EAB key id')
  let payload: Uint8Array
  try {
    ;({ payload } = await flattenedVerify(
      { protected: e.protected, payload: e.payload, signature: e.signature },
      Buffer.from(hmac, 'base64url'),
      { algorithms: ['HS256', 'HS384', 'HS512'] }
    ))
  } catch {
    // Never say more: the MAC either matches or it does not.
    throw new AcmeProblem(
      'unauthorized',
      'could not bind the account: the EAB MAC does not match the key id (wrong HMAC key?)'
    )
  }
  let bound: JWK
  try {
    bound = JSON.parse(Buffer.from(payload).toString('utf8')) as JWK
  } catch {
    throw new AcmeProblem('malformed', 'externalAccountBinding payload must be the account JWK')
  }
  if ((await thumbprint(bound)) !== (await thumbprint(accountJwk))) {
    throw new AcmeProblem('unauthorized', 'could not bind the account: the EAB was made for another account key')
  }
  return header.kid
}
