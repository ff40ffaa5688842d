/**
 * The embedded CA: a root and one intermediate, created on first use (docs/decisions.md,
 * "The local CA"). Modelled on mkcert: random 128-bit serials, the intermediate limited to path
 * length 0, only the key usages each certificate needs, SKI/AKI on everything. The private keys
 * are stored in SQLite only as AES-256-GCM ciphertext; the wrapping key lives in the OS keychain.
 */
import { createHash, KeyObject, sign } from 'node:crypto'
import type { CoreContext } from '../context'
import {
  bitString,
  bytesOf,
  children,
  contentsOf,
  oid,
  oidOf,
  readNode,
  seq,
  TAG,
  time,
  tlv,
  unsignedInteger
} from './der'
import { secretOnce } from '../cluster/leadership'
import { ServiceError } from '../errors'
import type { IssueRequest, IssuedCertificate, Issuer } from './issuer'
import { addDays, isoTimestamp } from '../time'
import { nodeCrypto, x509, type CryptoKey, type CryptoKeyPair, type CryptoProvider, type EcdsaParams } from './x509'

/** Keychain entry of the key that wraps the CA private keys. */
export const CA_WRAPPING_KEY_SECRET = 'local-ca-wrapping-key'

/** Root lifetime: 20 years, long enough that no trust store needs refreshing in practice. */
const ROOT_DAYS = 20 * 365
/** Intermediate lifetime: 10 years; it always outlives every leaf it signs (47-460 days). */
const INTERMEDIATE_DAYS = 10 * 365
/** Back-dating of the CA certificates, so a leaf issued "as of" the creation day nests inside. */
const CA_BACKDATE_DAYS = 1

const ROOT_KEY = { name: 'ECDSA', namedCurve: 'P-384' } as const
const INTERMEDIATE_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const

type Role = 'root' | 'intermediate'

interface CaRow {
  role: Role
  certificate_pem: string
  key_iv: Buffer
  key_ciphertext: Buffer
}

interface LoadedCa {
  root: InstanceType<typeof x509.X509Certificate>
  intermediate: InstanceType<typeof x509.X509Certificate>
  intermediateKey: CryptoKey
  parts?: Promise<IssuerParts>
}

/** The intermediate as every leaf refers to it. */
interface IssuerParts {
  subjectDer: Buffer
  /** RFC 5280 §4.2.1.1 key identifier: SHA-1 of the intermediate's public key bits (method 1). */
  keyId: Buffer
  /** The leaf's authorityKeyIdentifier extension, the same for every leaf. */
  aki: Buffer
  notBefore: number
  notAfter: number
  signingKey: KeyObject
  chainPem: string
}

/** What the local CA returns: the issued certificate, its DER and the issuer's key identifier. */
export interface LocalCaIssued extends IssuedCertificate {
  certificateDer: Buffer
  /** The authorityKeyIdentifier keyIdentifier of the leaf (RFC 9773 §4.1 CertID uses it). */
  authorityKeyId: Buffer
}

// Object identifiers (RFC 5280 §4.2.1, RFC 5480 §2.1.1, RFC 5758 §3.2, RFC 8017 App. C).
export const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'))
const AKI_OID = '2.5.29.35'
const RSA_KEY_OIDS = ['1.2.840.113549.1.1.1', '1.2.840.113549.1.1.10', '1.2.840.113549.1.1.7']
const SUBJECT_OIDS = { C: '2.5.4.6', ST: '2.5.4.8', L: '2.5.4.7', O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3' }
/** RFC 5280 §4.2.1.12 key purposes. */
const EKU_SERVER_AUTH = '1.3.6.1.5.5.7.3.1'
const EKU_CODE_SIGNING = '1.3.6.1.5.5.7.3.3'
/** X.520 PrintableString characters; any other value is a UTF8String (RFC 5280 §4.1.2.6). */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/

const wholeSeconds = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000)

/** One Extension (RFC 5280 §4.1): id, critical only when true (DER leaves out the default). */
export function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? seq(oid(id), Buffer.from([TAG.boolean, 1, 0xff]), tlv(TAG.octetString, value))
    : seq(oid(id), tlv(TAG.octetString, value))
}

/** The public key a CSR carries (RFC 2986 §4.1), as the DER SubjectPublicKeyInfo and its bits. */
function requestKey(csrDer: Buffer): { spki: Buffer; bits: Buffer; rsa: boolean } {
  try {
    const csr = readNode(csrDer, 0)
    const info = children(csrDer, children(csrDer, csr)[0])
    const spki = info[2]
    const [alg, bits] = children(csrDer, spki)
    const algOid = oidOf(csrDer, children(csrDer, alg)[0])
    const bitsBody = contentsOf(csrDer, bits)
    return {
      spki: Buffer.from(bytesOf(csrDer, spki)),
      // RFC 5280 §4.2.1.2 method 1 hashes the key bits without the unused-bits octet.
      bits: bitsBody.subarray(1),
      rsa: RSA_KEY_OIDS.includes(algOid)
    }
  } catch {
    throw new ServiceError('invalid', 'could not issue certificate: the CSR is not a DER-encoded PKCS #10 request')
  }
}

/** A Name of one attribute per RDN, in the order given (RFC 5280 §4.1.2.6). */
function name(subject: IssueRequest['subject']): Buffer {
  const rdns: Buffer[] = []
  for (const k of ['C', 'ST', 'L', 'O', 'OU', 'CN'] as const) {
    const v = subject[k]
    if (!v) continue
    const value = PRINTABLE.test(v)
      ? tlv(TAG.printableString, Buffer.from(v, 'latin1'))
      : tlv(TAG.utf8String, Buffer.from(v, 'utf8'))
    rdns.push(tlv(TAG.set, seq(oid(SUBJECT_OIDS[k]), value)))
  }
  return seq(...rdns)
}

/**
 * The TBSCertificate of a leaf (RFC 5280 §4.1.2), with the extensions mkcert gives its leaves:
 * basicConstraints CA:FALSE and keyUsage (critical), extendedKeyUsage, SKI, AKI and the SAN.
 */
function leafTbs(p: {
  serial: string
  issuer: IssuerParts
  key: { spki: Buffer; bits: Buffer; rsa: boolean }
  names: string[]
  profile: IssueRequest['profile']
  subject: IssueRequest['subject']
  validFrom: Date
  validTill: Date
  crlUrl: string | null
}): Buffer {
  // RFC 5280 §4.2.1.3: keyEncipherment only for RSA TLS keys (RSA key exchange).
  const usage =
    p.profile === 'tls' && p.key.rsa ? Buffer.from([0x03, 0x02, 0x05, 0xa0]) : Buffer.from([0x03, 0x02, 0x07, 0x80])
  const exts = [
    extension('2.5.29.19', true, seq()),
    extension('2.5.29.15', true, usage),
    extension('2.5.29.37', false, seq(oid(p.profile === 'tls' ? EKU_SERVER_AUTH : EKU_CODE_SIGNING))),
    extension('2.5.29.14', false, tlv(TAG.octetString, createHash('sha1').update(p.key.bits).digest())),
    p.issuer.aki
  ]
  if (p.names.length > 0) {
    // dNSName is [2] IMPLICIT IA5String (§4.2.1.6); the names were validated as LDH labels.
    exts.push(extension('2.5.29.17', false, seq(...p.names.map((n) => tlv(0x82, Buffer.from(n, 'latin1'))))))
  }
  if (p.crlUrl) exts.push(crlDistributionPoints(p.crlUrl))
  return seq(
    tlv(0xa0, tlv(TAG.integer, Buffer.from([2]))),
    unsignedInteger(Buffer.from(p.serial, 'hex')),
    ECDSA_SHA256,
    p.issuer.subjectDer,
    seq(time(p.validFrom), time(p.validTill)),
    name(p.subject),
    p.key.spki,
    tlv(0xa3, seq(...exts))
  )
}

/**
 * RFC 5280 §4.2.1.13 cRLDistributionPoints with one DistributionPoint whose fullName is the
 * URI of the CRL (an HTTP URI to a DER CRL, §4.2.1.13): distributionPoint [0] is explicit (a
 * CHOICE), fullName [0] and uniformResourceIdentifier [6] are implicit.
 */
function crlDistributionPoints(url: string): Buffer {
  return extension('2.5.29.31', false, seq(seq(tlv(0xa0, tlv(0xa0, tlv(0x86, Buffer.from(url, 'latin1')))))))
}

/** RFC 5280 §4.1.2.2 serial: positive, at most 20 octets; 128 random bits as mkcert does. */
export function randomSerial(crypto: CryptoProvider = nodeCrypto): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[0] &= 0x7f
  if (bytes[0] === 0) bytes[0] = 0x01 // no leading zero octet, so the DER stays 16 bytes
  return Buffer.from(bytes).toString('hex').toUpperCase()
}

export class LocalCa implements Issuer {
  readonly name = 'local-ca'
  private loaded: Promise<LoadedCa> | null = null
  /**
   * Where the leaves say their CRL is (local-ca-crl.ts); null leaves them without a CRL
   * Distribution Point. Set once at start-up (service.ts).
   */
  crlUrl: () => Promise<string | null> = async () => null

  constructor(
    private readonly ctx: CoreContext,
    private readonly crypto: CryptoProvider = nodeCrypto
  ) {}

  /** The root certificate (PEM) for trust stores; creates the CA on first use. */
  async rootPem(): Promise<string> {
    return (await this.ca()).root.toString('pem') + '\n'
  }

  /** The bundle a server sends after its leaf: the intermediate (PEM). */
  async bundlePem(): Promise<string> {
    return (await this.ca()).intermediate.toString('pem') + '\n'
  }

  async issue(req: IssueRequest): Promise<LocalCaIssued> {
    const ca = await this.ca()
    const issuer = await this.issuerOf(ca)
    if (req.validFrom.getTime() < issuer.notBefore || req.validTill.getTime() > issuer.notAfter) {
      throw new ServiceError(
        'unavailable',
        'could not issue certificate: the validity window falls outside the local CA intermediate'
      )
    }
    const key = requestKey(req.csrDer)
    const serial = randomSerial(this.crypto)
    const tbs = leafTbs({
      serial,
      issuer,
      key,
      names: req.names,
      profile: req.profile,
      subject: req.subject,
      validFrom: req.validFrom,
      validTill: req.validTill,
      crlUrl: await this.crlUrl()
    })
    // RFC 5280 §4.1.1: the signature over the DER TBSCertificate, ECDSA-Sig-Value in DER, which
    // is what node:crypto's sign returns for an EC key.
    const signature = sign('sha256', tbs, issuer.signingKey)
    const der = seq(tbs, ECDSA_SHA256, bitString(signature))
    const b64 = der
      .toString('base64')
      .replace(/(.{64})/g, '$1\n')
      .replace(/\n$/, '')
    return {
      certificatePem: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
      chainPem: issuer.chainPem,
      serial,
      // The encoded times carry whole seconds (RFC 5280 §4.1.2.5.1).
      validFrom: wholeSeconds(req.validFrom),
      validTill: wholeSeconds(req.validTill),
      issuer: this.name,
      certificateDer: der,
      authorityKeyId: issuer.keyId
    }
  }

  /**
   * What a CRL of the intermediate needs (RFC 5280 §5.1): its subject, its key identifier for
   * the CRL's authorityKeyIdentifier (§5.2.1), and a signature with its key over the DER TBS.
   */
  async crlIssuer(): Promise<{ subjectDer: Buffer; aki: Buffer; sign(tbs: Buffer): Buffer }> {
    const issuer = await this.issuerOf(await this.ca())
    return {
      subjectDer: issuer.subjectDer,
      aki: issuer.aki,
      sign: (tbs) => sign('sha256', tbs, issuer.signingKey)
    }
  }

  /** What every leaf needs from the intermediate, worked out once per loaded CA. */
  private issuerOf(ca: LoadedCa): Promise<IssuerParts> {
    ca.parts ??= (async (): Promise<IssuerParts> => {
      const keyId = Buffer.from(await ca.intermediate.publicKey.getKeyIdentifier(this.crypto))
      const raw = Buffer.from(ca.intermediate.rawData)
      // Certificate → TBSCertificate → subject (RFC 5280 §4.1): the 6th field after [0] version.
      const tbs = children(raw, readNode(raw, 0))[0]
      const subject = children(raw, tbs)[5]
      return {
        subjectDer: Buffer.from(bytesOf(raw, subject)),
        keyId,
        aki: extension(AKI_OID, false, seq(tlv(0x80, keyId))),
        notBefore: ca.intermediate.notBefore.getTime(),
        notAfter: ca.intermediate.notAfter.getTime(),
        signingKey: KeyObject.from(ca.intermediateKey),
        chainPem: ca.intermediate.toString('pem') + '\n'
      }
    })()
    return ca.parts
  }

  /** Loads the CA once per process; creates it on first run. */
  private ca(): Promise<LoadedCa> {
    this.loaded ??= this.loadOrCreate().catch((err: unknown) => {
      this.loaded = null
      throw err
    })
    return this.loaded
  }

  private async loadOrCreate(): Promise<LoadedCa> {
    const rows = (await this.ctx.store.all(
      'SELECT role, certificate_pem, key_iv, key_ciphertext FROM ca_keys'
    )) as CaRow[]
    const root = rows.find((r) => r.role === 'root')
    const inter = rows.find((r) => r.role === 'intermediate')
    if (root && inter) {
      const wrapping = await this.wrappingKey(false)
      const pkcs8 = await this.unwrap(wrapping, inter)
      return {
        root: new x509.X509Certificate(root.certificate_pem),
        intermediate: new x509.X509Certificate(inter.certificate_pem),
        intermediateKey: await this.crypto.subtle.importKey('pkcs8', pkcs8, INTERMEDIATE_KEY, false, ['sign'])
      }
    }
    return this.create()
  }

  private async create(): Promise<LoadedCa> {
    const c = this.crypto
    // The wrapping key first: without a durable keychain no CA key is made at all (503).
    const wrapping = await this.wrappingKey(true)
    const now = this.ctx.clock()
    const notBefore = addDays(now, -CA_BACKDATE_DAYS)
    const rootKeys = (await c.subtle.generateKey(ROOT_KEY, true, ['sign', 'verify'])) as CryptoKeyPair
    const interKeys = (await c.subtle.generateKey(INTERMEDIATE_KEY, true, ['sign', 'verify'])) as CryptoKeyPair
    const rootName = 'CN=CertDesk Local Root CA, O=CertDesk Local CA'
    // The root: keyCertSign and cRLSign only (RFC 5280 §4.2.1.3), no path length limit.
    const root = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: randomSerial(c),
        name: rootName,
        notBefore,
        notAfter: addDays(notBefore, ROOT_DAYS),
        keys: rootKeys,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' } as EcdsaParams,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey, false, c)
        ]
      },
      c
    )
    // The intermediate: path length 0, so it can sign leaves and nothing else (mkcert's rule).
    const intermediate = await x509.X509CertificateGenerator.create(
      {
        serialNumber: randomSerial(c),
        subject: 'CN=CertDesk Local Issuing CA, O=CertDesk Local CA',
        issuer: root.subjectName,
        notBefore,
        notAfter: addDays(notBefore, INTERMEDIATE_DAYS),
        publicKey: interKeys.publicKey,
        signingKey: rootKeys.privateKey,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' } as EcdsaParams,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
            true
          ),
          await x509.SubjectKeyIdentifierExtension.create(interKeys.publicKey, false, c),
          await x509.AuthorityKeyIdentifierExtension.create(root, false, c)
        ]
      },
      c
    )
    const rootSealed = await this.wrap(wrapping, await c.subtle.exportKey('pkcs8', rootKeys.privateKey))
    const interSealed = await this.wrap(wrapping, await c.subtle.exportKey('pkcs8', interKeys.privateKey))
    const ts = isoTimestamp(now)
    const insertSql =
      'INSERT OR IGNORE INTO ca_keys (role, certificate_pem, key_iv, key_ciphertext, created_at) VALUES (?, ?, ?, ?, ?)'
    const created = await this.ctx.store.tx(async () => {
      // Another process (the CLI next to `serve`) may have created the CA first: keep theirs.
      const a = await this.ctx.store.run(insertSql, 'root', root.toString('pem'), rootSealed.iv, rootSealed.data, ts)
      const b = await this.ctx.store.run(
        insertSql,
        'intermediate',
        intermediate.toString('pem'),
        interSealed.iv,
        interSealed.data,
        ts
      )
      return a.changes === 1 && b.changes === 1
    })
    if (!created) return this.loadOrCreate()
    return {
      root,
      intermediate,
      intermediateKey: interKeys.privateKey
    }
  }

  /** The AES-256-GCM key from the keychain; made on first run only when `create`. */
  private async wrappingKey(create: boolean): Promise<CryptoKey> {
    // Read-or-create one at a time (cluster/leadership.ts), so the CLI and `serve`, or the nodes
    // of a team, creating the CA at the same moment end up with one wrapping key, not two.
    const existing = await this.ctx.secrets.get(CA_WRAPPING_KEY_SECRET)
    if (!existing && !create) {
      throw new ServiceError(
        'unavailable',
        'could not unlock the local CA: its wrapping key is missing from the OS keychain'
      )
    }
    const b64 =
      existing ??
      (await secretOnce(this.ctx, CA_WRAPPING_KEY_SECRET, () =>
        Buffer.from(this.crypto.getRandomValues(new Uint8Array(32))).toString('base64')
      ))
    return this.crypto.subtle.importKey('raw', Buffer.from(b64, 'base64'), { name: 'AES-GCM' }, false, [
      'encrypt',
      'decrypt'
    ])
  }

  private async wrap(key: CryptoKey, plain: ArrayBuffer): Promise<{ iv: Buffer; data: Buffer }> {
    // A fresh 96-bit nonce per encryption (NIST SP 800-38D §8.2).
    const iv = this.crypto.getRandomValues(new Uint8Array(12))
    const data = await this.crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plain)
    return { iv: Buffer.from(iv), data: Buffer.from(data) }
  }

  private async unwrap(key: CryptoKey, row: CaRow): Promise<ArrayBuffer> {
    try {
      return await this.crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: new Uint8Array(row.key_iv) },
        key,
        new Uint8Array(row.key_ciphertext)
      )
    } catch {
      throw new ServiceError(
        'unavailable',
        `could not unlock the local CA ${row.role} key: the keychain's wrapping key does not match`
      )
    }
  }
}
