/**
 * The embedded CA: a root and one intermediate, created on first use (docs/decisions.md,
 * "The local CA"). Modelled on mkcert: random 128-bit serials, the intermediate limited to path
 * length 0, only the key usages each certificate needs, SKI/AKI on everything. The private keys
 * are stored in SQLite only as AES-256-GCM ciphertext; the wrapping key lives in the OS keychain.
 */
import type { CoreContext } from './context'
import { ServiceError } from './errors'
import type { IssueRequest, IssuedCertificate, Issuer } from './issuer'
import { addDays, isoTimestamp } from './time'
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

  async issue(req: IssueRequest): Promise<IssuedCertificate> {
    const ca = await this.ca()
    const csr = new x509.Pkcs10CertificateRequest(req.csrDer)
    if (
      req.validFrom.getTime() < ca.intermediate.notBefore.getTime() ||
      req.validTill.getTime() > ca.intermediate.notAfter.getTime()
    ) {
      throw new ServiceError(
        'unavailable',
        'could not issue certificate: the validity window falls outside the local CA intermediate'
      )
    }
    const rsa = (csr.publicKey.algorithm as { name: string }).name.startsWith('RSA')
    const usages =
      req.profile === 'tls' && rsa
        ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
        : x509.KeyUsageFlags.digitalSignature
    const extensions: InstanceType<typeof x509.Extension>[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usages, true),
      new x509.ExtendedKeyUsageExtension([
        req.profile === 'tls' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.codeSigning
      ]),
      await x509.SubjectKeyIdentifierExtension.create(csr.publicKey, false, this.crypto),
      await x509.AuthorityKeyIdentifierExtension.create(ca.intermediate, false, this.crypto)
    ]
    if (req.names.length > 0) {
      extensions.push(
        new x509.SubjectAlternativeNameExtension(req.names.map((value) => ({ type: 'dns' as const, value })))
      )
    }
    const subject: x509.JsonName = []
    for (const k of ['C', 'ST', 'L', 'O', 'OU', 'CN'] as const) {
      const v = req.subject[k]
      if (v) subject.push({ [k]: [v] })
    }
    const serial = randomSerial(this.crypto)
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serial,
        subject,
        issuer: ca.intermediate.subjectName,
        notBefore: req.validFrom,
        notAfter: req.validTill,
        publicKey: csr.publicKey,
        signingKey: ca.intermediateKey,
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
        extensions
      },
      this.crypto
    )
    return {
      certificatePem: cert.toString('pem') + '\n',
      chainPem: ca.intermediate.toString('pem') + '\n',
      serial,
      validFrom: cert.notBefore,
      validTill: cert.notAfter,
      issuer: this.name
    }
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
    const rows = this.ctx.db
      .prepare('SELECT role, certificate_pem, key_iv, key_ciphertext FROM ca_keys')
      .all() as CaRow[]
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
    const wrapping = await this.wrappingKey(true)
    const rootSealed = await this.wrap(wrapping, await c.subtle.exportKey('pkcs8', rootKeys.privateKey))
    const interSealed = await this.wrap(wrapping, await c.subtle.exportKey('pkcs8', interKeys.privateKey))
    const ts = isoTimestamp(now)
    const insert = this.ctx.db.prepare(
      'INSERT OR IGNORE INTO ca_keys (role, certificate_pem, key_iv, key_ciphertext, created_at) VALUES (?, ?, ?, ?, ?)'
    )
    const created = this.ctx.db
      .transaction(() => {
        // Another process (the CLI next to `serve`) may have created the CA first: keep theirs.
        const a = insert.run('root', root.toString('pem'), rootSealed.iv, rootSealed.data, ts)
        const b = insert.run('intermediate', intermediate.toString('pem'), interSealed.iv, interSealed.data, ts)
        return a.changes === 1 && b.changes === 1
      })
      .immediate()
    if (!created) return this.loadOrCreate()
    return {
      root,
      intermediate,
      intermediateKey: interKeys.privateKey
    }
  }

  /** The AES-256-GCM key from the keychain; made on first run only when `create`. */
  private async wrappingKey(create: boolean): Promise<CryptoKey> {
    // Read-or-create under SQLite's write lock (the keychain calls are synchronous), so the CLI
    // and `serve` creating the CA at the same moment end up with one wrapping key, not two.
    const b64 = this.ctx.db
      .transaction((): string => {
        const existing = this.ctx.secrets.get(CA_WRAPPING_KEY_SECRET)
        if (existing) return existing
        if (!create) {
          throw new ServiceError(
            'unavailable',
            'could not unlock the local CA: its wrapping key is missing from the OS keychain'
          )
        }
        const made = Buffer.from(this.crypto.getRandomValues(new Uint8Array(32))).toString('base64')
        this.ctx.secrets.set(CA_WRAPPING_KEY_SECRET, made)
        return made
      })
      .immediate()
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
