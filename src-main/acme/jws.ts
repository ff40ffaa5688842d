/**
 * RFC 8555 §6.2 request authentication: every POST is a flattened JWS whose protected header
 * carries `alg`, `nonce`, `url` and exactly one of `jwk` / `kid`. Signatures are checked with
 * `jose`; the rules about which key may sign what stay in the server.
 */
import { constants, createHash, createPublicKey, verify, webcrypto, type JsonWebKey, type KeyObject } from 'node:crypto'
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

/**
 * Verifies the signature and returns the decoded payload ('' for POST-as-GET). `key` is the
 * account key already imported (account-keys.ts); without it the JWK is imported here. The
 * algorithms ACME clients use are checked with node:crypto under the rules jose applies (key
 * type and curve matching `alg`, RSA of at least 2048 bits, strict base64url); anything else
 * (a `crit` or `b64` header, a JWK with more than its public members) goes through jose.
 */
export async function verifyWith(parsed: ParsedJws, jwk: JWK, key?: KeyObject | null): Promise<string> {
  const k = key ?? publicKeyOf(jwk)
  const fast = k ? nodeVerify(parsed, k) : null
  if (fast === true) return Buffer.from(parsed.jws.payload as string, 'base64url').toString('utf8')
  if (fast === false)
    throw new AcmeProblem('malformed', 'could not verify the JWS signature: signature verification failed')
  try {
    const imported = await importJWK(jwk, parsed.header.alg)
    const { payload } = await flattenedVerify(parsed.jws, imported, { algorithms: ALLOWED_ALGS })
    return Buffer.from(payload).toString('utf8')
  } catch (err) {
    throw new AcmeProblem('malformed', `could not verify the JWS signature: ${(err as Error).message}`)
  }
}

const PUBLIC_MEMBERS = new Set(['kty', 'crv', 'x', 'y', 'n', 'e'])

/**
 * The public key of a JWK that has only public members (RFC 7518 §6.2.1, §6.3.1, RFC 8037 §2),
 * or null: a JWK with `d`, `key_ops`, `use` or anything else is left to jose, which decides.
 */
export function publicKeyOf(jwk: JWK): KeyObject | null {
  if (!jwk || typeof jwk !== 'object') return null
  for (const m of Object.keys(jwk)) if (!PUBLIC_MEMBERS.has(m)) return null
  if (jwk.kty !== 'EC' && jwk.kty !== 'RSA' && jwk.kty !== 'OKP') return null
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
  } catch {
    return null
  }
}

/** RFC 7518 §3.1 and RFC 8037 §3.1: what each JWS algorithm needs of the key, for node:crypto. */
const NODE_ALGS: Record<string, { hash: string | null; type: string; curve?: string; pss?: number }> = {
  ES256: { hash: 'sha256', type: 'ec', curve: 'prime256v1' },
  ES384: { hash: 'sha384', type: 'ec', curve: 'secp384r1' },
  ES512: { hash: 'sha512', type: 'ec', curve: 'secp521r1' },
  RS256: { hash: 'sha256', type: 'rsa' },
  RS384: { hash: 'sha384', type: 'rsa' },
  RS512: { hash: 'sha512', type: 'rsa' },
  // RFC 7518 §3.5: the salt is as long as the hash.
  PS256: { hash: 'sha256', type: 'rsa', pss: 32 },
  PS384: { hash: 'sha384', type: 'rsa', pss: 48 },
  PS512: { hash: 'sha512', type: 'rsa', pss: 64 },
  EdDSA: { hash: null, type: 'ed25519' },
  Ed25519: { hash: null, type: 'ed25519' }
}
const B64URL = /^[A-Za-z0-9_-]*$/
/** RFC 7518 §3.3, §3.5 (and jose): RSA keys of at least 2048 bits. */
const MIN_RSA_BITS = 2048

/**
 * The signature check with node:crypto: true or false, or null when this is a case jose decides
 * (an unusual header, a key that does not fit the algorithm, an encoding jose would refuse).
 */
function nodeVerify(parsed: ParsedJws, key: KeyObject): boolean | null {
  const { header, jws } = parsed
  const a = NODE_ALGS[header.alg]
  if (!a || 'crit' in header || 'b64' in header) return null
  // Strict base64url as jose decodes it: the alphabet, and no length that leaves 6 bits over.
  for (const part of [jws.protected as string, jws.payload as string, jws.signature]) {
    if (!B64URL.test(part) || part.length % 4 === 1) return null
  }
  if (key.type !== 'public' || key.asymmetricKeyType !== a.type) return null
  const details = key.asymmetricKeyDetails ?? {}
  if (a.curve && details.namedCurve !== a.curve) return null
  if (a.type === 'rsa' && (details.modulusLength ?? 0) < MIN_RSA_BITS) return null
  const data = Buffer.from(`${jws.protected}.${jws.payload as string}`, 'ascii')
  const signature = Buffer.from(jws.signature, 'base64url')
  try {
    if (a.type === 'ec') return verify(a.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature)
    if (a.pss)
      return verify(a.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: a.pss }, signature)
    return verify(a.hash, data, key, signature)
  } catch {
    return false
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
