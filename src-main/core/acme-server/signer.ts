/**
 * What the embedded ACME server signs with: the CertDesk local CA (../local-ca.ts), the same
 * root and intermediate as every other CertDesk certificate, through the core's `Issuer`
 * interface. The ACME server only adds the RFC 9773 CertID of each leaf.
 */
import type { IssueRequest } from '../certificates/issuer'
import type { LocalCaIssued } from '../certificates/local-ca'
import { x509 } from '../certificates/x509'

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
export function ariId(authorityKeyId: Buffer, serial: string): string {
  let serialHex = serial.toLowerCase()
  if (serialHex.length % 2) serialHex = `0${serialHex}`
  // DER INTEGER content: a leading 00 when the high bit is set.
  if (Number.parseInt(serialHex.slice(0, 2), 16) >= 0x80) serialHex = `00${serialHex}`
  return `${authorityKeyId.toString('base64url')}.${b64u(serialHex)}`
}

/** The RFC 9773 §4.1 CertID of a parsed certificate (a certificate CertDesk did not just build). */
export function ariCertId(cert: InstanceType<typeof x509.X509Certificate>): string {
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension)
  if (!aki?.keyId) throw new Error('could not compute the renewal id: the certificate has no authority key identifier')
  return ariId(Buffer.from(aki.keyId, 'hex'), cert.serialNumber)
}

/** What the signer needs of the local CA: leaves with what they were built from (../local-ca.ts). */
export interface LeafSigner {
  rootPem(): Promise<string>
  issue(request: IssueRequest): Promise<LocalCaIssued>
}

/**
 * The local CA as the ACME server's signer. The serial, the validity and the issuer's key
 * identifier come from what the CA built, so the new leaf is never parsed back.
 */
export function localCaSigner(ca: LeafSigner): AcmeSigner {
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
      return {
        chainPem: `${issued.certificatePem.trim()}\n${issued.chainPem.trim()}\n`,
        serialHex: issued.serial.toLowerCase(),
        ariId: ariId(issued.authorityKeyId, issued.serial),
        notBefore: issued.validFrom,
        notAfter: issued.validTill
      }
    }
  }
}
