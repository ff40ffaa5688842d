/**
 * What every certificate module is handed: the core context, the collaborators of the
 * `Certificates` facade, and the per-order lock that keeps issuance to one at a time.
 */
import type { Catalogue } from '../billing/catalogue'
import type { CoreContext } from '../context'
import type { ExternalValidation, Issuer } from './issuer'
import type { Orders } from '../orders/orders'
import type { Settings } from '../settings/settings'
import type { Store } from '../store'
import { DEFAULT_RETRY_AFTER_SECONDS, RetryLaterError } from '../store/store-faults'
import { awaitLeadership } from '../cluster/leadership'
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

/**
 * How long a node waits for another node's work on the same order (an issuance through an
 * external CA may take a while) before the caller hears 503 and tries again.
 */
export const ORDER_LOCK_WAIT_MS = 60_000

/**
 * One issuance at a time per order, so two status polls never sign twice: within this process
 * by a promise per order, and on a store several nodes share also across them, by the store's
 * leadership for the order (a poll sent through a balancer to another node waits the same way).
 */
export class OrderLock {
  private readonly busy = new Map<number, Promise<unknown>>()

  /** `shared`: the store of a team, whose other nodes work on the same orders. */
  constructor(private readonly shared: Store | null = null) {}

  async run<T>(orderId: number, fn: () => Promise<T>): Promise<T> {
    while (this.busy.has(orderId)) await this.busy.get(orderId)?.catch(() => undefined)
    const p = this.acrossNodes(orderId, fn)
    this.busy.set(orderId, p)
    try {
      return await p
    } finally {
      this.busy.delete(orderId)
    }
  }

  private async acrossNodes<T>(orderId: number, fn: () => Promise<T>): Promise<T> {
    if (!this.shared) return fn()
    const held = await awaitLeadership(this.shared, `order:${orderId}`, ORDER_LOCK_WAIT_MS)
    if (!held) {
      throw new RetryLaterError(
        `could not work on order ${orderId}: another node has been issuing its certificate for ${ORDER_LOCK_WAIT_MS / 1000} s; try again in ${DEFAULT_RETRY_AFTER_SECONDS} s`,
        DEFAULT_RETRY_AFTER_SECONDS
      )
    }
    try {
      return await fn()
    } finally {
      await held.release()
    }
  }
}
