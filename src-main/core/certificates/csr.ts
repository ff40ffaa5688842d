/**
 * Certificate signing requests (PKCS #10, RFC 2986): decoding for POST /csr/decode, and the one
 * key and signature policy every issuance path applies before any name is looked at
 * (POST /ssl/configure, reissue, the app, and the embedded ACME server's finalize).
 */
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import * as asn1js from 'asn1js'
import { CsrDerError, readCsrDer, sanText, type CsrFields } from './csr-der'
import { children, contentsOf, oidOf, readNode } from './der'
import { invalid } from '../errors'
import { nodeCrypto, x509, type CryptoProvider } from './x509'

export interface DecodedCsr {
  pem: string
  der: Buffer
  /** Subject common name, lower-cased when it is a domain name. */
  commonName: string | null
  organization: string | null
  organizationalUnit: string | null
  locality: string | null
  state: string | null
  country: string | null
  email: string | null
  /** DNS names of the subjectAltName extension, lower-cased, in CSR order (checked by `assertCsrNames`). */
  dnsNames: string[]
  /** The subjectAltName's entries of other kinds (IP address, email, URI …), described for a message. */
  sanOthers: string[]
  keyAlgorithm: 'RSA' | 'EC' | string
  /** RSA modulus length in bits; for EC the curve's size (256, 384, 521). */
  keySize: number | null
  curve: string | null
  signatureAlgorithm: string
  signatureValid: boolean
  /**
   * Upper-case hex MD5 of the DER CSR: the DCV file and record name (docs/decisions.md,
   * "Validation file and DNS record shapes").
   */
  md5: string
  /** Upper-case hex SHA-256 of the DER CSR: the value DCV files and records carry. */
  sha256: string
  /** The DER SubjectPublicKeyInfo: the key the certificate will carry. */
  spki: Buffer
}

/** Mozilla Root Store Policy §5.1 allows only these curves for subscriber keys. */
export const ALLOWED_CURVES = ['P-256', 'P-384'] as const
/** BR §6.1.5: RSA moduli of at least 2048 bits. */
export const MIN_RSA_BITS = 2048
/** Code Signing BR §6.1.5.2: RSA keys of at least 3072 bits for code signing. */
export const MIN_RSA_BITS_CODE_SIGNING = 3072

const PEM_RE = /-----BEGIN (NEW )?CERTIFICATE REQUEST-----([\s\S]*?)-----END (NEW )?CERTIFICATE REQUEST-----/

const CURVE_BITS: Record<string, number> = { 'P-256': 256, 'P-384': 384, 'P-521': 521 }

const SIGNATURE_NAMES: Record<string, string> = {
  'RSASSA-PKCS1-v1_5': 'sha{n}WithRSAEncryption',
  'RSA-PSS': 'rsassaPss-sha{n}',
  ECDSA: 'ecdsa-with-SHA{n}'
}

function signatureName(alg: { name: string; hash?: { name: string } }): string {
  const bits = alg.hash?.name.replace('SHA-', '') ?? ''
  const pattern = SIGNATURE_NAMES[alg.name]
  return pattern && bits ? pattern.replace('{n}', bits) : alg.hash ? `${alg.name} with ${alg.hash.name}` : alg.name
}

/** The PEM block of a CSR, or a 400 that says what is wrong with the text. */
function pemBody(text: string): Buffer {
  if (typeof text !== 'string' || text.trim() === '') throw invalid('could not decode CSR: it is empty')
  if (/-----BEGIN CERTIFICATE-----/.test(text) && !PEM_RE.test(text)) {
    throw invalid('could not decode CSR: this is a certificate, not a certificate signing request')
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) && !PEM_RE.test(text)) {
    throw invalid(
      'could not decode CSR: this is a private key; send the certificate signing request, and keep the key to yourself'
    )
  }
  const m = PEM_RE.exec(text)
  if (!m) {
    throw invalid(
      /-----BEGIN (NEW )?CERTIFICATE REQUEST-----/.test(text)
        ? 'could not decode CSR: the PEM is truncated (no END CERTIFICATE REQUEST line)'
        : 'could not decode CSR: expected a PEM block starting with -----BEGIN CERTIFICATE REQUEST-----'
    )
  }
  const b64 = m[2].replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw invalid('could not decode CSR: the PEM body is not base64')
  return Buffer.from(b64, 'base64')
}

/**
 * Decodes a PEM CSR. Anything that is not one (garbage, a certificate, a truncated PEM) is a
 * 400 naming what was sent. The signature is checked, not trusted: `signatureValid` says.
 */
export async function decodeCsr(text: string, crypto: CryptoProvider = nodeCrypto): Promise<DecodedCsr> {
  return decodeCsrDer(pemBody(text), crypto)
}

/** Decodes a DER CSR (as ACME finalize carries it, RFC 8555 §7.4); see decodeCsr. */
export async function decodeCsrDer(der: Buffer, crypto: CryptoProvider = nodeCrypto): Promise<DecodedCsr> {
  return (await readCsr(der, crypto)).csr
}

/** A decoded CSR with what ACME finalize compares against the order (RFC 8555 §7.4). */
export interface ReadCsr {
  csr: DecodedCsr
  /** Every subject common name, lower-cased, as written. */
  commonNames: string[]
  /** dNSName values of the subjectAltName, lower-cased, as written. */
  sanDnsNames: string[]
}

const DAMAGED = 'could not decode CSR: the PEM body is not a DER-encoded PKCS #10 request (truncated or damaged?)'
const TRAILING = 'could not decode CSR: the PEM body has trailing or damaged data'

/**
 * Decodes and checks a DER CSR once: the strict reader with node:crypto (csr-der.ts), and
 * @peculiar/x509 over WebCrypto for the kinds of request that reader leaves to it.
 */
export async function readCsr(der: Buffer, crypto: CryptoProvider = nodeCrypto): Promise<ReadCsr> {
  let f: CsrFields | null
  try {
    f = readCsrDer(der)
  } catch (err) {
    throw invalid(err instanceof CsrDerError && err.trailing ? TRAILING : DAMAGED)
  }
  if (!f) return readCsrWithPeculiar(der, crypto)
  const field = (name: string): string | null => f.subject.get(name)?.[0] ?? null
  const cns = f.subject.get('CN') ?? []
  return {
    csr: decoded(der, {
      cn: field('CN'),
      field,
      dnsNames: f.sanDnsNames.map((n) => n.trim().toLowerCase().replace(/\.$/, '')),
      sanOthers: f.sanOthers,
      keyAlgorithm: f.keyAlgorithm,
      keySize: f.keySize,
      curve: f.curve,
      signatureAlgorithm: f.signatureAlgorithm,
      signatureValid: f.signatureValid,
      spki: f.spki
    }),
    commonNames: cns.map((n) => n.toLowerCase()),
    sanDnsNames: f.sanDnsNames.map((n) => n.toLowerCase())
  }
}

interface Parts {
  cn: string | null
  field: (name: string) => string | null
  dnsNames: string[]
  sanOthers: string[]
  keyAlgorithm: string
  keySize: number | null
  curve: string | null
  signatureAlgorithm: string
  signatureValid: boolean
  spki: Buffer
}

function decoded(der: Buffer, p: Parts): DecodedCsr {
  const { cn, field } = p
  return {
    pem: `-----BEGIN CERTIFICATE REQUEST-----\n${der
      .toString('base64')
      .replace(/(.{64})/g, '$1\n')
      .replace(/\n$/, '')}\n-----END CERTIFICATE REQUEST-----\n`,
    der,
    commonName: cn === null ? null : /^[*a-z0-9.-]+\.?$/i.test(cn) ? cn.toLowerCase().replace(/\.$/, '') : cn,
    organization: field('O'),
    organizationalUnit: field('OU'),
    locality: field('L'),
    state: field('ST'),
    country: field('C'),
    email: field('E'),
    dnsNames: p.dnsNames,
    sanOthers: p.sanOthers,
    keyAlgorithm: p.keyAlgorithm,
    keySize: p.keySize,
    curve: p.curve,
    signatureAlgorithm: p.signatureAlgorithm,
    signatureValid: p.signatureValid,
    md5: createHash('md5').update(der).digest('hex').toUpperCase(),
    sha256: createHash('sha256').update(der).digest('hex').toUpperCase(),
    spki: p.spki
  }
}

/** RSASSA-PSS signatures, Ed25519 and other curves: @peculiar/x509 over WebCrypto, as before. */
async function readCsrWithPeculiar(der: Buffer, crypto: CryptoProvider): Promise<ReadCsr> {
  let csr: InstanceType<typeof x509.Pkcs10CertificateRequest>
  try {
    csr = new x509.Pkcs10CertificateRequest(der)
  } catch {
    throw invalid(DAMAGED)
  }
  // A certificate's DER can parse as a request structure; its re-encoding then differs.
  if (Buffer.compare(Buffer.from(csr.rawData), der) !== 0) throw invalid(TRAILING)
  const field = (name: string): string | null => csr.subjectName.getField(name)[0] ?? null
  const san = csr.extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension) as
    InstanceType<typeof x509.SubjectAlternativeNameExtension> | undefined
  const entries = san?.names.toJSON() ?? []
  // asn1js reads an IA5String one character per byte; sanText reads those bytes as they were meant.
  const sanDns = entries.filter((n) => n.type === 'dns').map((n) => sanText(Buffer.from(n.value, 'latin1')))
  const sanOthers = entries
    .filter((n) => n.type !== 'dns')
    .map((n) =>
      n.type === 'ip'
        ? `IP address ${n.value}`
        : n.type === 'email'
          ? `email address ${n.value}`
          : n.type === 'url'
            ? `URI ${n.value}`
            : `a ${n.type} entry`
    )
  const alg = csr.publicKey.algorithm as { name: string; modulusLength?: number; namedCurve?: string }
  let keyAlgorithm: string = alg.name
  let keySize: number | null = null
  let curve: string | null = null
  if (alg.name === 'RSASSA-PKCS1-v1_5' || alg.name === 'RSA-PSS' || alg.name === 'RSA-OAEP') {
    keyAlgorithm = 'RSA'
    keySize = alg.modulusLength ?? null
  } else if (alg.name === 'ECDSA' || alg.name === 'ECDH') {
    keyAlgorithm = 'EC'
    curve = alg.namedCurve ?? null
    keySize = curve ? (CURVE_BITS[curve] ?? null) : null
  }
  let signatureValid: boolean
  try {
    signatureValid = await csr.verify(crypto)
  } catch {
    // An algorithm WebCrypto cannot verify (an unsupported curve, MD5) counts as not verified.
    signatureValid = false
  }
  return {
    csr: decoded(der, {
      cn: field('CN'),
      field,
      dnsNames: sanDns.map((n) => n.trim().toLowerCase().replace(/\.$/, '')),
      sanOthers,
      keyAlgorithm,
      keySize,
      curve,
      signatureAlgorithm: signatureName(csr.signatureAlgorithm as { name: string; hash?: { name: string } }),
      signatureValid,
      spki: Buffer.from(csr.publicKey.rawData)
    }),
    commonNames: csr.subjectName.getField('CN').map((n) => n.toLowerCase()),
    sanDnsNames: sanDns.map((n) => n.toLowerCase())
  }
}

/**
 * One public key in one canonical form (its JWK members), so that two encodings of the same key
 * compare equal: an EC point compressed or not, an RSA key under rsaEncryption or RSASSA-PSS.
 * Null when Node cannot read the key.
 */
function keyIdentity(key: KeyObject): string | null {
  try {
    let k = key
    if (k.asymmetricKeyType === 'rsa-pss') {
      // RFC 4055 §1.2: an RSASSA-PSS SPKI carries the same RSAPublicKey as rsaEncryption.
      const spki = asn1js.fromBER(k.export({ type: 'spki', format: 'der' })).result as asn1js.Sequence
      const bits = spki.valueBlock.value[1] as asn1js.BitString
      k = createPublicKey({ key: Buffer.from(bits.valueBlock.valueHexView), format: 'der', type: 'pkcs1' })
    }
    const j = k.export({ format: 'jwk' })
    return JSON.stringify([j.kty, j.crv ?? null, j.n ?? null, j.e ?? null, j.x ?? null, j.y ?? null])
  } catch {
    return null
  }
}

/**
 * The EC point of an uncompressed P-256/P-384/P-521 SubjectPublicKeyInfo as its x and y (SEC 1
 * §2.3.3), or null for any other key or encoding.
 */
function uncompressedPoint(spki: Buffer): { x: Buffer; y: Buffer } | null {
  try {
    const [alg, bits] = children(spki, readNode(spki, 0))
    const [algOid, curveOid] = children(spki, alg)
    if (oidOf(spki, algOid) !== '1.2.840.10045.2.1' || !curveOid || curveOid.tag !== 0x06) return null
    const point = contentsOf(spki, bits).subarray(1)
    if (point[0] !== 0x04 || point.length % 2 !== 1) return null
    const half = (point.length - 1) / 2
    return { x: point.subarray(1, 1 + half), y: point.subarray(1 + half) }
  } catch {
    return null
  }
}

/** RFC 7518 §6.2.1: the curve names a JWK uses, as the CSR decoder names them. */
const JWK_CURVES: Record<string, string> = { 'P-256': 'P-256', 'P-384': 'P-384', 'P-521': 'P-521' }

/**
 * Whether the CSR's key is the account key, decided without importing either key where the
 * answer is plain: keys of different kinds or curves are different keys, and two uncompressed
 * points on the same curve are the same key exactly when their coordinates are equal (a JWK's
 * coordinates are the full-length octet strings, RFC 7518 §6.2.1.2). Anything else is compared
 * in the canonical form below.
 */
function isAccountKey(csr: DecodedCsr, jwk: JsonWebKey): boolean {
  if (csr.keyAlgorithm === 'EC' && csr.curve && JWK_CURVES[csr.curve]) {
    if (jwk.kty !== 'EC' && jwk.kty !== undefined) return false
    if (jwk.kty === 'EC' && typeof jwk.crv === 'string' && JWK_CURVES[jwk.crv] && jwk.crv !== csr.curve) return false
    const p = uncompressedPoint(csr.spki)
    if (p && jwk.kty === 'EC' && jwk.crv === csr.curve && typeof jwk.x === 'string' && typeof jwk.y === 'string') {
      const x = Buffer.from(jwk.x, 'base64url')
      const y = Buffer.from(jwk.y, 'base64url')
      if (x.length === p.x.length && y.length === p.y.length) return x.equals(p.x) && y.equals(p.y)
    }
  } else if (csr.keyAlgorithm === 'RSA' && (jwk.kty === 'EC' || jwk.kty === 'OKP')) {
    return false
  }
  return isKeyOf(csr.spki, jwk)
}

function isKeyOf(spki: Buffer, jwk: JsonWebKey): boolean {
  let account: KeyObject
  try {
    account = createPublicKey({ key: jwk, format: 'jwk' })
  } catch {
    return false
  }
  const mine = (() => {
    try {
      return keyIdentity(createPublicKey({ key: spki, format: 'der', type: 'spki' }))
    } catch {
      return null
    }
  })()
  const theirs = keyIdentity(account)
  if (mine !== null && theirs !== null) return mine === theirs
  return Buffer.compare(spki, account.export({ type: 'spki', format: 'der' })) === 0
}

export interface CsrPolicyOptions {
  /** The ACME account key of the request, which the certificate must not carry (RFC 8555 §11.1). */
  accountKey?: JsonWebKey
}

/**
 * The checks every issuance path makes on the request itself: a signature that verifies (proof
 * of possession, RFC 2986 §3), a key the Baseline Requirements allow, and for ACME a key that
 * is not the account key.
 */
export function assertAcceptableCsr(
  csr: DecodedCsr,
  profile: 'tls' | 'code-signing',
  opts: CsrPolicyOptions = {}
): void {
  // RFC 8555 §11.1: an account key must not also be a certificate key, whatever its type.
  if (opts.accountKey && isAccountKey(csr, opts.accountKey)) {
    throw invalid(
      'could not accept CSR: its key is the ACME account key; the certificate needs a key of its own (RFC 8555 §11.1)'
    )
  }
  if (!csr.signatureValid) {
    throw invalid(
      'could not accept CSR: its signature does not verify (the request was altered or signed with another key)'
    )
  }
  if (csr.keyAlgorithm === 'RSA') {
    const min = profile === 'code-signing' ? MIN_RSA_BITS_CODE_SIGNING : MIN_RSA_BITS
    if (csr.keySize === null || csr.keySize < min) {
      throw invalid(
        `could not accept CSR: its RSA key has ${csr.keySize ?? 'an unknown number of'} bits; at least ${min} are required`
      )
    }
    return
  }
  if (csr.keyAlgorithm === 'EC') {
    if (!csr.curve || !(ALLOWED_CURVES as readonly string[]).includes(csr.curve)) {
      throw invalid(
        `could not accept CSR: curve ${csr.curve ?? 'unknown'} is not supported; use ${ALLOWED_CURVES.join(' or ')}`
      )
    }
    return
  }
  throw invalid(
    `could not accept CSR: key algorithm ${csr.keyAlgorithm} is not supported; use RSA (2048+ bits) or ECDSA P-256/P-384`
  )
}
