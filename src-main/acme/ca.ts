/**
 * The CA the embedded ACME server signs with: a root and an intermediate (ECDSA P-256),
 * created on first use. The private keys live in the OS keychain as PKCS#8 and never reach
 * SQLite; the certificates are public and kept in settings.
 *
 * This is the ACME server's own signer until the local CA of the certificate lifecycle (branch
 * `certs`) lands; `AcmeSigner` is the seam where that CA plugs in instead.
 */
import { randomBytes, webcrypto } from 'node:crypto'
import { x509 } from './x509'
import type { Service } from '../core/service'
import { addDays } from '../core/time'

type CryptoKey = webcrypto.CryptoKey
type CryptoKeyPair = webcrypto.CryptoKeyPair


const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }

export interface IssuedCertificate {
  leafPem: string
  /** Leaf then intermediate: what RFC 8555 §7.4.2 calls the certificate chain. */
  chainPem: string
  serialHex: string
  /** RFC 9773 §4.1 CertID of the leaf. */
  ariId: string
  notBefore: Date
  notAfter: Date
}

export interface AcmeSigner {
  rootPem(): Promise<string>
  issue(publicKey: x509.PublicKey, names: string[], notBefore: Date, notAfter: Date): Promise<IssuedCertificate>
}

/** mkcert's rule: random 128-bit serials, positive, so they never collide and never guess. */
function serial(): string {
  const b = randomBytes(16)
  b[0] &= 0x7f
  if (b[0] === 0) b[0] = 0x01
  return b.toString('hex')
}

const b64u = (hex: string): string => Buffer.from(hex, 'hex').toString('base64url')

/** RFC 9773 §4.1: base64url(AKI keyIdentifier) "." base64url(DER serial number, no tag/length). */
export function ariCertId(cert: x509.X509Certificate): string {
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension)
  if (!aki?.keyId) throw new Error('could not compute the renewal id: the certificate has no authority key identifier')
  let serialHex = cert.serialNumber.toLowerCase()
  if (serialHex.length % 2) serialHex = `0${serialHex}`
  // DER INTEGER content: a leading 00 when the high bit is set.
  if (Number.parseInt(serialHex.slice(0, 2), 16) >= 0x80) serialHex = `00${serialHex}`
  return `${b64u(aki.keyId)}.${b64u(serialHex)}`
}

interface CaMaterial {
  cert: x509.X509Certificate
  key: CryptoKey
}

export class LocalAcmeCa implements AcmeSigner {
  private loaded: Promise<{ root: CaMaterial; intermediate: CaMaterial }> | null = null

  constructor(private readonly service: Service) {}

  async rootPem(): Promise<string> {
    return (await this.material()).root.cert.toString('pem')
  }

  async issue(
    publicKey: x509.PublicKey,
    names: string[],
    notBefore: Date,
    notAfter: Date
  ): Promise<IssuedCertificate> {
    const { intermediate } = await this.material()
    const dns = names.filter((n) => !/^[\d.]+$/.test(n))
    const ips = names.filter((n) => /^[\d.]+$/.test(n))
    const rsa = publicKey.algorithm.name.startsWith('RSA')
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${dns[0] ?? ips[0]}`,
      issuer: intermediate.cert.subject,
      notBefore,
      notAfter,
      publicKey,
      signingKey: intermediate.key as never,
      signingAlgorithm: EC,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        // RSA keys may still be used for key transport in TLS 1.2 (RFC 5246 §7.4.7.1).
        new x509.KeyUsagesExtension(
          rsa ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment : x509.KeyUsageFlags.digitalSignature,
          true
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          ...dns.map((value) => ({ type: 'dns' as const, value })),
          ...ips.map((value) => ({ type: 'ip' as const, value }))
        ]),
        await x509.SubjectKeyIdentifierExtension.create(publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(intermediate.cert.publicKey)
      ]
    })
    const leafPem = leaf.toString('pem')
    return {
      leafPem,
      chainPem: `${leafPem}\n${intermediate.cert.toString('pem')}\n`,
      serialHex: leaf.serialNumber.toLowerCase(),
      ariId: ariCertId(leaf),
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter
    }
  }

  private material(): Promise<{ root: CaMaterial; intermediate: CaMaterial }> {
    this.loaded ??= this.loadOrCreate().catch((err) => {
      this.loaded = null
      throw err
    })
    return this.loaded
  }

  private async loadOrCreate(): Promise<{ root: CaMaterial; intermediate: CaMaterial }> {
    const { settings, ctx } = this.service
    const rootPem = settings.get('acme_ca.root_pem')
    const intPem = settings.get('acme_ca.intermediate_pem')
    const rootKey = ctx.secrets.get('acme-ca/root-key')
    const intKey = ctx.secrets.get('acme-ca/intermediate-key')
    if (rootPem && intPem && rootKey && intKey) {
      return {
        root: { cert: new x509.X509Certificate(rootPem), key: await importKey(rootKey) },
        intermediate: { cert: new x509.X509Certificate(intPem), key: await importKey(intKey) }
      }
    }
    const now = ctx.clock()
    const rootKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair
    const root = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: 'CN=CertDesk ACME Root CA, O=CertDesk local',
      notBefore: addDays(now, -1),
      notAfter: addDays(now, 3650),
      keys: rootKeys as never,
      signingAlgorithm: EC,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey as never)
      ]
    })
    const intKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair
    const intermediate = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: 'CN=CertDesk ACME Issuing CA, O=CertDesk local',
      issuer: root.subject,
      notBefore: addDays(now, -1),
      notAfter: addDays(now, 1825),
      publicKey: intKeys.publicKey as never,
      signingKey: rootKeys.privateKey as never,
      signingAlgorithm: EC,
      extensions: [
        // mkcert's rule: an issuing CA with path length 0 and only the usages it needs.
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        await x509.SubjectKeyIdentifierExtension.create(intKeys.publicKey as never),
        await x509.AuthorityKeyIdentifierExtension.create(rootKeys.publicKey as never)
      ]
    })
    // Keys first: a certificate without its key in the keychain would be useless.
    ctx.secrets.set('acme-ca/root-key', await exportKey(rootKeys.privateKey))
    ctx.secrets.set('acme-ca/intermediate-key', await exportKey(intKeys.privateKey))
    settings.set('acme_ca.root_pem', root.toString('pem'))
    settings.set('acme_ca.intermediate_pem', intermediate.toString('pem'))
    return { root: { cert: root, key: rootKeys.privateKey }, intermediate: { cert: intermediate, key: intKeys.privateKey } }
  }
}

async function exportKey(key: CryptoKey): Promise<string> {
  return Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)).toString('base64')
}

async function importKey(b64: string): Promise<CryptoKey> {
  return (await webcrypto.subtle.importKey('pkcs8', Buffer.from(b64, 'base64'), EC, false, ['sign'])) as CryptoKey
}
