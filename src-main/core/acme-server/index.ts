/**
 * The embedded ACME server's business side (RFC 8555, RFC 9773), one module per job: accounts,
 * orders, authorizations, challenges, finalization and issued certificates. Each operation
 * owns its transaction and returns a promise, so the protocol layer (src-main/acme) never
 * holds one open and never depends on the store answering synchronously.
 */
import type { AcmeSubscriptions } from './acme-subscriptions'
import type { CoreContext } from '../context'
import type { Settings } from '../settings/settings'
import { addDays } from '../time'
import { AcmeAccounts } from './accounts'
import { AcmeAuthorizations } from './authorizations'
import { AcmeCertificates } from './certificates'
import { AcmeChallenges, persistIssuerDomain } from './challenges'
import { AcmeFinalizer } from './finalize'
import { openNonceBook, type NonceBook } from './nonces'
import { AcmeOrders } from './orders'
import type { AcmeSigner } from './signer'

export { AcmeError, acmeErrorStatus, type AcmeErrorType } from './errors'
export type { AcmeAccount, AcmeAuthorization, AcmeChallenge, AcmeOrder } from './records'
export type { AcmeSigner } from './signer'
export type { NonceBook } from './nonces'

/** The listener certificate is made anew at every start; a month outlasts any run. */
const LISTENER_CERT_DAYS = 30

export class AcmeServerCore {
  readonly accounts: AcmeAccounts
  readonly orders: AcmeOrders
  readonly authorizations: AcmeAuthorizations
  readonly challenges: AcmeChallenges
  readonly finalizer: AcmeFinalizer
  readonly certificates: AcmeCertificates

  constructor(
    private readonly ctx: CoreContext,
    settings: Settings,
    subscriptions: AcmeSubscriptions,
    private readonly signer: AcmeSigner
  ) {
    this.accounts = new AcmeAccounts(ctx, subscriptions)
    this.orders = new AcmeOrders(ctx, subscriptions, () => persistIssuerDomain(settings))
    this.authorizations = new AcmeAuthorizations(ctx)
    this.challenges = new AcmeChallenges(ctx, settings, this.authorizations)
    this.finalizer = new AcmeFinalizer(ctx, subscriptions, this.orders, signer)
    this.certificates = new AcmeCertificates(ctx)
  }

  private nonceBook: Promise<NonceBook> | null = null

  /**
   * The nonces of this server's answers (§6.5), one book for every listener of the process (the
   * loopback ACME server and the public listener): its own, or shared by every node of the store.
   */
  nonces(): Promise<NonceBook> {
    this.nonceBook ??= openNonceBook(this.ctx).catch((err: unknown) => {
      // A book that could not open (the secret store locked) is tried again by the next listener.
      this.nonceBook = null
      throw err
    })
    return this.nonceBook
  }

  /** The root ACME clients must trust: the CertDesk CA's. */
  rootPem(): Promise<string> {
    return this.signer.rootPem()
  }

  /**
   * The HTTPS listener's own certificate (leaf then intermediate), from the same CA the clients
   * are told to trust: ACME clients refuse a plain-HTTP directory (RFC 8555 §6.1).
   */
  async listenerCertificate(csrDer: Buffer, names: string[]): Promise<string> {
    const now = this.ctx.clock()
    return (await this.signer.issue(csrDer, names, now, addDays(now, LISTENER_CERT_DAYS))).chainPem
  }
}
