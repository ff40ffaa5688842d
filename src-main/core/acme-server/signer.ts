/**
 * What the embedded ACME server signs with: the CertDesk local CA (../local-ca.ts), the same
 * root and intermediate as every other CertDesk certificate, through the core's `Issuer`
 * interface. The ACME server only adds the RFC 9773 CertID of each leaf.
 */
import type { Issuer } from '../issuer'
import { x509 } from '../x509'

export interface AcmeIssued {
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
  issue(csrDer: Buffer, names: string[], notBefore: Date, notAfter: Date): Promise<AcmeIssued>
}

const b64u = (hex: string): string => Buffer.from(hex, 'hex').toString('base64url')

/** RFC 9773 §4.1: base64url(AKI keyIdentifier) "." base64url(DER serial number, no tag/length). */
export function ariCertId(cert: InstanceType<typeof x509.X509Certificate>): string {
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension)
  if (!aki?.keyId) throw new Error('could not compute the renewal id: the certificate has no authority key identifier')
  let serialHex = cert.serialNumber.toLowerCase()
  if (serialHex.length % 2) serialHex = `0${serialHex}`
  // DER INTEGER content: a leading 00 when the high bit is set.
  if (Number.parseInt(serialHex.slice(0, 2), 16) >= 0x80) serialHex = `00${serialHex}`
  return `${b64u(aki.keyId)}.${b64u(serialHex)}`
}

/** The local CA as the ACME server's signer. */
export function localCaSigner(ca: Issuer & { rootPem(): Promise<string> }): AcmeSigner {
  return {
    rootPem: () => ca.rootPem(),
    async issue(csrDer, names, notBefore, notAfter) {
      const issued = await ca.issue({
        csrDer,
        names,
        profile: 'tls',
        subject: { CN: names[0] },
        validFrom: notBefore,
        validTill: notAfter
      })
      const leaf = new x509.X509Certificate(issued.certificatePem)
      return {
        chainPem: `${issued.certificatePem.trim()}\n${issued.chainPem.trim()}\n`,
        serialHex: leaf.serialNumber.toLowerCase(),
        ariId: ariCertId(leaf),
        notBefore: leaf.notBefore,
        notAfter: leaf.notAfter
      }
    }
  }
}
