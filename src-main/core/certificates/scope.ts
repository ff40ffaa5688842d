/**
 * What every certificate module is handed: the core context, the collaborators of the
 * `Certificates` facade, and the per-order lock that keeps issuance to one at a time.
 */
import type { Catalogue } from '../billing/catalogue'
import type { CoreContext } from '../context'
import type { ExternalValidation, Issuer } from './issuer'
import type { Orders } from '../orders/orders'
import type { Settings } from '../settings/settings'
import type { CertificateHandover } from './records'
import type { CrlPublisher, ExternalRevocation } from './revocation'

/**
 * Keeps a key generated in the app with the certificate issued for it (key-vault.ts): `stage`
 * holds it until then; `promote` runs inside the transaction that stores a certificate;
 * `csrFor` signs a new request with a kept key.
 */
export interface KeyKeeper {
  stage(resellerId: number, orderId: number, pkcs8Pem: string, csrDer: Buffer): Promise<void>
  promote(orderId: number, certificatePem: string): Promise<void>
  discard(orderId: number): Promise<void>
  /**
   * A CSR for `names` signed by the kept key of `certificatePem` (a reissue with the same key
   * for other names); null when no key of that certificate is kept.
   */
  csrFor(orderId: number, certificatePem: string, names: string[]): Promise<string | null>
}

export interface CertificatesScope {
  readonly ctx: CoreContext
  readonly orders: Orders
  readonly catalogue: Catalogue
  readonly settings: Settings
  readonly issuer: Issuer
  /** An external CA that validates names itself (the ACME issuer); null for the local CA. */
  readonly external: ExternalValidation | null
  readonly lock: OrderLock
  /** Where keys generated in the app are kept; null until start-up sets it (service.ts). */
  readonly keys: KeyKeeper | null
  /** Told after a certificate is committed (deploys and their event); never undoes it. */
  readonly onStored: ((c: CertificateHandover) => Promise<void>) | null
  /** Revokes at the external ACME CA that issued a certificate (acme-issuer.ts). */
  readonly revoker: ExternalRevocation | null
  /** The local CA's CRL, signed again after a revocation (local-ca-crl.ts); set at start-up. */
  readonly crl: CrlPublisher | null
}

/** One issuance at a time per order, so two status polls never sign twice. */
export class OrderLock {
  private readonly busy = new Map<number, Promise<unknown>>()

  async run<T>(orderId: number, fn: () => Promise<T>): Promise<T> {
    while (this.busy.has(orderId)) await this.busy.get(orderId)?.catch(() => undefined)
    const p = fn()
    this.busy.set(orderId, p)
    try {
      return await p
    } finally {
      this.busy.delete(orderId)
    }
  }
}
