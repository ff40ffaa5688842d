/**
 * Who signs a certificate. The local CA (local-ca.ts) is the default; the ACME connector adds an
 * external-CA issuer behind the same interface. Everything before signing (CSR checks, domain
 * validation, the validity window) is decided by the core, so an issuer only signs.
 */
export type CertificateProfile = 'tls' | 'code-signing'

export interface IssueRequest {
  /** The DER CSR; its public key goes into the certificate, its signature was checked. */
  csrDer: Buffer
  /** Validated DNS names, primary first; empty for code signing. */
  names: string[]
  profile: CertificateProfile
  /** Subject attributes to carry (CN always; O, L, ST, C for OV/EV and code signing). */
  subject: { CN: string; O?: string; OU?: string; L?: string; ST?: string; C?: string }
  validFrom: Date
  /** Inclusive last second of validity (BR §1.6.1). */
  validTill: Date
  /** The order being fulfilled, for issuers that keep state per order (the external ACME CA). */
  orderId?: number
}

export interface IssuedCertificate {
  /** The leaf, PEM. */
  certificatePem: string
  /** Intermediates up to (not including) the root, PEM, leaf-side first. */
  chainPem: string
  /** Upper-case hex. */
  serial: string
  validFrom: Date
  validTill: Date
  /** Which issuer signed it, for the certificate record ("local-ca", "acme:<directory>"). */
  issuer: string
}

export interface Issuer {
  readonly name: string
  issue(request: IssueRequest): Promise<IssuedCertificate>
}
