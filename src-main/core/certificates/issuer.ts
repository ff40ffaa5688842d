/**
 * Who signs a certificate. The local CA (local-ca.ts) is the default; the ACME connector adds an
 * external-CA issuer behind the same interface. Everything before signing (CSR checks, domain
 * validation, the validity window) is decided by the core, so an issuer only signs.
 */
import type { ExternalInstructions } from '../acme-client/acme-issuer-challenges'
import type { UnattendedRenewal } from '../acme-client/renewal-plan'
import type { CheckResult, DcvMethod } from '../dcv/dcv'
import { ServiceError } from '../errors'

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
  /**
   * When the CA that signed it wants it renewed (the moment chosen in its RFC 9773 window, or
   * 14 days before its end): the order's one renewal schedule. Absent for the local CA, whose
   * schedule is the reseller API's rule over `validTill`.
   */
  renewAt?: Date
}

/**
 * A renewal the CA will not issue without the domain owner: it wants names validated again and
 * nothing answers them unattended. The CA order waits with the CA's own instructions (shown
 * through `ExternalValidation.instructions`); the message says what the customer must do.
 */
export class RenewalNeedsCustomer extends ServiceError {
  constructor(
    message: string,
    /** The validation method the waiting CA order asks for. */
    readonly method: 'http' | 'dns'
  ) {
    super('conflict', message)
  }
}

export interface Issuer {
  readonly name: string
  issue(request: IssueRequest): Promise<IssuedCertificate>
}

/**
 * An issuer that validates the names itself (the external ACME CA, acme-issuer.ts): while it
 * handles an order, its challenges stand in for the core's domain validation.
 */
export interface ExternalValidation {
  /** True when this order's names are validated by the external CA. */
  handles(orderId: number): Promise<boolean>
  /**
   * True while the external CA issues TLS certificates: it validates every renewal itself
   * (its authorizations, RFC 8555 §7.1.3), so the local DCV checks and their reuse period
   * (BR §4.2.1) do not apply to a renewal.
   */
  validatesRenewals(): Promise<boolean>
  /** Starts the CA order for these names, each by its method (throws a clear 400 for email). */
  begin(orderId: number, names: string[], methods: Map<string, DcvMethod>): Promise<void>
  instructions(orderId: number, name: string): Promise<ExternalInstructions | null>
  check(orderId: number, name: string): Promise<CheckResult>
  /** Whether the order's renewals run with nobody, and what would make them (renewal-plan.ts). */
  unattendedRenewal(orderId: number): Promise<UnattendedRenewal | null>
}
