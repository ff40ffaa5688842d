/**
 * A strict DER reader for PKCS #10 requests (RFC 2986 §4) with the signature checked by
 * node:crypto: the path every issuance takes (ACME finalize, POST /ssl/configure, reissue,
 * POST /csr/decode). It reads only distinguished encodings (X.690 §10: definite, minimal
 * lengths; the version exactly 0; no byte after the request) and refuses anything else as a
 * damaged request. Requests it does not know how to check (RSASSA-PSS signatures, keys other
 * than RSA and the NIST curves) are left to @peculiar/x509 (csr.ts), so nothing is accepted here
 * that was refused before.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { bytesOf, children, contentsOf, DerError, expect, oidOf, readNode, TAG, type Node } from './der'

/** What the request says, read once; the signature already checked. */
export interface CsrFields {
  /** Every subject attribute in order, by short name (CN, O, OU, L, ST, C, E). */
  subject: Map<string, string[]>
  /** dNSName values of the first subjectAltName extension (RFC 5280 §4.2.1.6), as written (`sanText`). */
  sanDnsNames: string[]
  /** The other entries of that extension (IP addresses, email addresses, URIs …), described for a message. */
  sanOthers: string[]
  keyAlgorithm: 'RSA' | 'EC'
  keySize: number | null
  curve: string | null
  signatureAlgorithm: string
  signatureValid: boolean
  spki: Buffer
  /** The public key, when node:crypto could read it. */
  publicKey: KeyObject | null
}

/** Thrown when the request is not strict DER PKCS #10; `trailing` when bytes follow it. */
export class CsrDerError extends Error {
  constructor(readonly trailing: boolean) {
    super(trailing ? 'trailing data' : 'damaged request')
  }
}

// RFC 5280 §4.1.2.4, PKCS #9 §B.3.5: subject attribute types and the short names peculiar/openssl use.
const SUBJECT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.6': 'C',
  '1.2.840.113549.1.9.1': 'E'
}
const EXTENSION_REQUEST = '1.2.840.113549.1.9.14'
const SAN_OID = '2.5.29.17'
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1'
const EC_PUBLIC_KEY = '1.2.840.10045.2.1'
/** RFC 5480 §2.1.1.1 named curves, with their key sizes. */
const CURVES: Record<string, { name: string; bits: number }> = {
  '1.2.840.10045.3.1.7': { name: 'P-256', bits: 256 },
  '1.3.132.0.34': { name: 'P-384', bits: 384 },
  '1.3.132.0.35': { name: 'P-521', bits: 521 }
}
/**
 * RFC 8017 App. C and RFC 5758 §3.2 signature algorithms: the ones @peculiar/x509 verified over
 * WebCrypto before (SHA-1 included: WebCrypto verifies it, and the policy does not look at it).
 * `params` says whether the AlgorithmIdentifier carries NULL parameters (RSA) or none (ECDSA).
 */
const SIGNATURES: Record<string, { name: string; hash: string; key: 'RSA' | 'EC' }> = {
  '1.2.840.113549.1.1.5': { name: 'sha1WithRSAEncryption', hash: 'sha1', key: 'RSA' },
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', hash: 'sha256', key: 'RSA' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', hash: 'sha384', key: 'RSA' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', hash: 'sha512', key: 'RSA' },
  '1.2.840.10045.4.1': { name: 'ecdsa-with-SHA1', hash: 'sha1', key: 'EC' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256', hash: 'sha256', key: 'EC' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384', hash: 'sha384', key: 'EC' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512', hash: 'sha512', key: 'EC' }
}

/** X.690 §8.3: an INTEGER's content is minimal; returns its magnitude without the sign octet. */
function positiveInteger(buf: Buffer, n: Node): Buffer {
  expect(n, TAG.integer)
  const c = contentsOf(buf, n)
  if (c.length === 0 || c[0] & 0x80) throw new DerError('not a positive integer')
  if (c.length > 1 && c[0] === 0 && !(c[1] & 0x80)) throw new DerError('non-minimal integer')
  return c[0] === 0 ? c.subarray(1) : c
}

/** A BIT STRING of whole octets (X.690 §8.6.2.2: the unused-bits octet is 0). */
function octetsOfBitString(buf: Buffer, n: Node): Buffer {
  expect(n, TAG.bitString)
  const c = contentsOf(buf, n)
  if (c.length < 1 || c[0] !== 0) throw new DerError('bit string with unused bits')
  return c.subarray(1)
}

/** The directory string types RFC 5280 §4.1.2.4 allows, decoded. */
function directoryString(buf: Buffer, n: Node): string {
  const c = contentsOf(buf, n)
  switch (n.tag) {
    case TAG.utf8String:
      return c.toString('utf8')
    case TAG.printableString:
    case TAG.ia5String:
    case 0x14: // TeletexString
    case 0x1a: // VisibleString
      return c.toString('latin1')
    case 0x1e: {
      // BMPString: UTF-16 big-endian
      if (c.length % 2) throw new DerError('odd BMPString')
      const le = Buffer.from(c)
      le.swap16()
      return le.toString('utf16le')
    }
    case 0x1c: {
      // UniversalString: UTF-32 big-endian
      if (c.length % 4) throw new DerError('bad UniversalString')
      let s = ''
      for (let i = 0; i < c.length; i += 4) s += String.fromCodePoint(c.readUInt32BE(i))
      return s
    }
    default:
      throw new DerError('not a directory string')
  }
}

function subjectOf(buf: Buffer, name: Node): Map<string, string[]> {
  expect(name, TAG.sequence)
  const out = new Map<string, string[]>()
  for (const rdn of children(buf, name)) {
    expect(rdn, TAG.set)
    const atvs = children(buf, rdn)
    if (atvs.length === 0) throw new DerError('empty RDN')
    for (const atv of atvs) {
      expect(atv, TAG.sequence)
      const parts = children(buf, atv)
      if (parts.length !== 2) throw new DerError('bad attribute')
      const short = SUBJECT_NAMES[oidOf(buf, parts[0])]
      if (!short) continue
      const v = directoryString(buf, parts[1])
      out.set(short, [...(out.get(short) ?? []), v])
    }
  }
  return out
}

/**
 * The text of an IA5String name as its sender meant it: ASCII as it is; bytes beyond ASCII (which
 * IA5String cannot hold, X.680 §41) read as UTF-8 when they are UTF-8 (as `openssl req -addext`
 * writes a typed ü), else one character per byte (as a generator that writes each character's
 * code writes it), so a message can name it the way it was typed.
 */
export function sanText(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes)
  if (buf.every((b) => b < 0x80)) return buf.toString('latin1')
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf)
  } catch {
    return buf.toString('latin1')
  }
}

/** RFC 5280 §4.2.1.6 GeneralName: what each tag other than dNSName holds, for a message. */
function otherName(buf: Buffer, gn: Node): string {
  const c = contentsOf(buf, gn)
  switch (gn.tag) {
    case 0x81:
      return `email address ${sanText(c)}`
    case 0x86:
      return `URI ${sanText(c)}`
    case 0x87:
      return c.length === 4
        ? `IP address ${[...c].join('.')}`
        : c.length === 16
          ? `IP address ${(c.toString('hex').match(/.{4}/g) ?? []).map((h) => h.replace(/^0+(?=.)/, '')).join(':')}`
          : 'an IP address of the wrong length'
    case 0xa0:
      return 'an otherName entry'
    case 0xa4:
      return 'a directory name'
    case 0x88:
      return 'a registered ID'
    default:
      return 'a name of an unknown kind'
  }
}

/** The first subjectAltName in the first extensionRequest attribute (RFC 2985 §5.4.2), every entry. */
function sanOf(buf: Buffer, attributes: Node | undefined): { dns: string[]; others: string[] } {
  const none = { dns: [], others: [] }
  if (!attributes) return none
  for (const attr of children(buf, attributes)) {
    expect(attr, TAG.sequence)
    const [type, values, ...rest] = children(buf, attr)
    if (!values || rest.length) throw new DerError('bad attribute')
    expect(values, TAG.set)
    if (oidOf(buf, type) !== EXTENSION_REQUEST) continue
    const [exts] = children(buf, values)
    expect(exts, TAG.sequence)
    for (const ext of children(buf, exts)) {
      expect(ext, TAG.sequence)
      const parts = children(buf, ext)
      if (parts.length < 2 || parts.length > 3) throw new DerError('bad extension')
      const value = expect(parts[parts.length - 1], TAG.octetString)
      if (parts.length === 3) {
        // DER leaves out a FALSE default (X.690 §11.5); TRUE is FF.
        const crit = expect(parts[1], TAG.boolean)
        if (crit.end - crit.body !== 1 || buf[crit.body] !== 0xff) throw new DerError('bad critical flag')
      }
      if (oidOf(buf, parts[0]) !== SAN_OID) continue
      const names = readNode(buf, value.body, value.end)
      if (names.end !== value.end) throw new DerError('trailing data in the SAN')
      expect(names, TAG.sequence)
      const dns: string[] = []
      const others: string[] = []
      for (const gn of children(buf, names)) {
        // dNSName is [2] IMPLICIT IA5String (RFC 5280 §4.2.1.6); every other kind is kept too,
        // so that the policy can refuse it by name instead of leaving it out of the certificate.
        if (gn.tag === 0x82) dns.push(sanText(contentsOf(buf, gn)))
        else others.push(otherName(buf, gn))
      }
      return { dns, others }
    }
    return none
  }
  return none
}

/**
 * Reads and checks a DER request. Returns null for a well-formed request of a kind this reader
 * leaves to @peculiar/x509; throws CsrDerError for anything that is not strict DER PKCS #10.
 */
export function readCsrDer(der: Buffer): CsrFields | null {
  try {
    const top = readNode(der, 0)
    if (top.tag !== TAG.sequence) throw new DerError('not a sequence')
    if (top.end !== der.length) throw new CsrDerError(true)
    const parts = children(der, top)
    if (parts.length !== 3) throw new DerError('a request has three parts')
    const [info, sigAlg, sigBits] = parts
    expect(info, TAG.sequence)
    const fields = children(der, info)
    if (fields.length < 3 || fields.length > 4) throw new DerError('bad CertificationRequestInfo')
    const [version, name, spkiNode, attributes] = fields
    // RFC 2986 §4.1: version is 0 (v1).
    expect(version, TAG.integer)
    if (version.end - version.body !== 1 || der[version.body] !== 0) throw new DerError('version must be 0')
    if (attributes && attributes.tag !== 0xa0) throw new DerError('attributes are [0]')
    const subject = subjectOf(der, name)
    const san = sanOf(der, attributes)

    expect(spkiNode, TAG.sequence)
    const spkiParts = children(der, spkiNode)
    if (spkiParts.length !== 2) throw new DerError('bad SubjectPublicKeyInfo')
    const keyAlg = children(der, expect(spkiParts[0], TAG.sequence))
    const keyOid = oidOf(der, keyAlg[0])
    const keyBits = octetsOfBitString(der, spkiParts[1])

    const sigAlgParts = children(der, expect(sigAlg, TAG.sequence))
    const sigOid = oidOf(der, sigAlgParts[0])
    const signature = octetsOfBitString(der, sigBits)

    let keyAlgorithm: 'RSA' | 'EC'
    let keySize: number | null
    let curve: string | null = null
    if (keyOid === RSA_ENCRYPTION) {
      // RFC 8017 §A.1: parameters NULL, key RSAPublicKey { modulus, publicExponent }.
      if (keyAlg.length !== 2 || keyAlg[1].tag !== TAG.null || keyAlg[1].end !== keyAlg[1].body)
        throw new DerError('rsaEncryption takes NULL parameters')
      const rsa = readNode(keyBits, 0)
      if (rsa.end !== keyBits.length) throw new DerError('trailing data in the key')
      const [modulus, exponent, ...more] = children(keyBits, expect(rsa, TAG.sequence))
      if (!exponent || more.length) throw new DerError('bad RSAPublicKey')
      const n = positiveInteger(keyBits, modulus)
      positiveInteger(keyBits, exponent)
      keyAlgorithm = 'RSA'
      // The modulus length in bits, counted exactly (BR §6.1.5 counts bits, not octets).
      keySize = (n.length - 1) * 8 + (32 - Math.clz32(n[0]))
    } else if (keyOid === EC_PUBLIC_KEY) {
      if (keyAlg.length !== 2) return null // implicit or specified curves: left to @peculiar/x509
      const named = CURVES[oidOf(der, keyAlg[1])]
      if (!named) return null
      keyAlgorithm = 'EC'
      curve = named.name
      keySize = named.bits
    } else {
      return null
    }

    const sig = SIGNATURES[sigOid]
    if (!sig) return null
    // RFC 4055 §5 / RFC 5758 §3.2: NULL parameters for RSA signatures, none for ECDSA.
    if (sig.key === 'RSA') {
      if (sigAlgParts.length !== 2 || sigAlgParts[1].tag !== TAG.null || sigAlgParts[1].end !== sigAlgParts[1].body)
        throw new DerError('RSA signature algorithms take NULL parameters')
    } else if (sigAlgParts.length !== 1) {
      throw new DerError('ECDSA signature algorithms take no parameters')
    }

    const spki = Buffer.from(bytesOf(der, spkiNode))
    let publicKey: KeyObject | null = null
    try {
      // An rsaEncryption key is its RSAPublicKey (RFC 8017 §A.1.1), which OpenSSL reads many times
      // faster as PKCS #1 than through the SubjectPublicKeyInfo decoder; the key is the same.
      publicKey =
        keyAlgorithm === 'RSA'
          ? createPublicKey({ key: keyBits, format: 'der', type: 'pkcs1' })
          : createPublicKey({ key: spki, format: 'der', type: 'spki' })
    } catch {
      // A key node:crypto cannot read (a point off the curve) cannot have signed anything.
    }
    let signatureValid = false
    if (publicKey && sig.key === keyAlgorithm) {
      try {
        // RFC 2986 §4.2: the signature is over the DER CertificationRequestInfo. ECDSA-Sig-Value
        // is DER (RFC 5758 §3.2); OpenSSL refuses a non-canonical one.
        signatureValid = verify(sig.hash, bytesOf(der, info), { key: publicKey, dsaEncoding: 'der' }, signature)
      } catch {
        signatureValid = false
      }
    }
    return {
      subject,
      sanDnsNames: san.dns,
      sanOthers: san.others,
      keyAlgorithm,
      keySize,
      curve,
      signatureAlgorithm: sig.name,
      signatureValid,
      spki,
      publicKey
    }
  } catch (err) {
    if (err instanceof CsrDerError) throw err
    throw new CsrDerError(false)
  }
}
