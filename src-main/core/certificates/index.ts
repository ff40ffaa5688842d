/**
 * The certificate lifecycle of an order (reseller API v3.0, "Certificate lifecycle rule"):
 * configure with a CSR → `validation_pending` → every name validated → `processing` → issued →
 * `completed`; reissue; the certificate and download records. The scheduler (scheduler.ts)
 * drives the automatic reissues through `autoReissue`.
 *
 * `Certificates` is the one object callers hold; each step is a module of this folder:
 * `csr-policy.ts` (what a CSR may ask), `requests.ts` (configure, change-dcv, reissue),
 * `validation.ts` (the DCV checks), `email-approval.ts` (approvers, codes, the outbox),
 * `issuance.ts` (signing and storing, one at a time per order), `records.ts` (rows and reads).
 */
import type { Catalogue } from '../billing/catalogue'
import type { CoreContext } from '../context'
import { decodeCsr, type DecodedCsr } from './csr'
import { assertCsrNames } from './csr-names'
import type { DcvMethod } from '../dcv/dcv'
import { notFound } from '../errors'
import type { ExternalValidation, Issuer } from './issuer'
import type { Order, Orders } from '../orders/orders'
import type { Settings } from '../settings/settings'
import { daysBetween, parseDate } from '../time'
import { cancelValidation } from './cancel-validation'
import { chooseApprover, outbox, recordApproval, resendValidation, type OutboxMessage } from './email-approval'
import { advance, autoReissue } from './issuance'
import type { NameChoice } from './name-methods'
import {
  certificateHistory,
  latestCertificate,
  sslStatus,
  type CertificateStatus,
  type SslStatus,
  type StoredCertificate
} from './records'
import { reissuePlan, type ReissuePlan } from './reissue-plan'
import { switchRenewalMethod } from './renewal-method'
import { changeDcv, configure, reissue, type ConfigureInput, type ReissueInput } from './requests'
import { revoke, type CertificateChoice, type CrlPublisher, type ExternalRevocation } from './revocation'
import { OrderLock, type CertificatesScope, type KeyKeeper } from './scope'

export { approverChoices } from '../dcv/authorization-domains'
export { approverAddress, defaultApprover, type OutboxMessage } from './email-approval'
export type { NameChoice } from './name-methods'
export type { ReissuePlan } from './reissue-plan'
export type { CrlPublisher, ExternalRevocation } from './revocation'
export { REASON_CODES, type RevocationReason } from './revocation-reasons'
export type {
  CertificateHandover,
  CertificateStatus,
  IssueReason,
  NameValidation,
  SslStatus,
  StoredCertificate
} from './records'
export type { ConfigureInput, ReissueInput } from './requests'
export type { KeyKeeper } from './scope'

/** The hooks start-up sets after construction (service.ts); the modules read them through the scope. */
type Hooks = { -readonly [K in 'keys' | 'onStored' | 'crl']: CertificatesScope[K] }

export class Certificates {
  private readonly scope: Omit<CertificatesScope, keyof Hooks> & Hooks

  constructor(
    ctx: CoreContext,
    orders: Orders,
    catalogue: Catalogue,
    settings: Settings,
    readonly issuer: Issuer,
    /** An external CA that validates names itself (the ACME issuer); null for the local CA. */
    external: ExternalValidation | null = null,
    /** Revokes certificates an external ACME CA issued (the ACME issuer). */
    revoker: ExternalRevocation | null = null
  ) {
    this.scope = {
      ctx,
      orders,
      catalogue,
      settings,
      issuer,
      external,
      lock: new OrderLock(ctx.sharedStore ? ctx.store : null),
      keys: null,
      onStored: null,
      revoker,
      crl: null
    }
  }

  /** Called after a certificate is committed (deploys and their event); never undoes it. */
  get onStored(): Hooks['onStored'] {
    return this.scope.onStored
  }

  set onStored(hook: Hooks['onStored']) {
    this.scope.onStored = hook
  }

  /** The local CA's CRL, signed again after each revocation; set once at start-up (service.ts). */
  set crl(publisher: CrlPublisher | null) {
    this.scope.crl = publisher
  }

  /** Where keys generated in the app are kept; set once at start-up (service.ts). */
  get keys(): KeyKeeper | null {
    return this.scope.keys
  }

  set keys(keeper: KeyKeeper | null) {
    this.scope.keys = keeper
  }

  /** POST /csr/decode: a name no certificate can carry is refused by name, not shown as if it could. */
  async decode(pem: string): Promise<DecodedCsr> {
    const csr = await decodeCsr(pem)
    assertCsrNames(csr)
    return csr
  }

  /** POST /ssl/configure. */
  async configure(resellerId: number, input: ConfigureInput): Promise<SslStatus> {
    await configure(this.scope, resellerId, input)
    return await sslStatus(this.scope, resellerId, input.orderId)
  }

  /** GET /ssl/{id}: runs the pending checks, issues the moment every name passed. */
  async status(resellerId: number, orderId: number): Promise<SslStatus> {
    const order = await this.scope.orders.get(resellerId, orderId)
    if (order.status === 'validation_pending' || order.status === 'processing') await this.advance(order.id)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /** The status as it stands, without running any check: for those who may only look. */
  async current(resellerId: number, orderId: number): Promise<SslStatus> {
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /**
   * POST /ssl/change-dcv: a new method (and approver) for every name not yet validated, or with
   * `perName` alone for those names only (requests.ts).
   */
  async changeDcv(
    resellerId: number,
    orderId: number,
    method: DcvMethod | undefined,
    approverEmail?: string,
    perName?: NameChoice[]
  ): Promise<SslStatus> {
    await changeDcv(this.scope, resellerId, orderId, method, approverEmail, perName)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /**
   * POST /orders/{id}/renewal: the method the order's renewals at the external ACME CA use
   * (renewal-method.ts); change-dcv while it waits for validation.
   */
  async switchRenewalMethod(resellerId: number, orderId: number, method: DcvMethod): Promise<void> {
    await switchRenewalMethod(this.scope, resellerId, orderId, method)
  }

  /** POST /ssl/resend-validation: a fresh approval message (new codes); email method only. */
  async resendValidation(resellerId: number, orderId: number): Promise<SslStatus> {
    await resendValidation(this.scope, resellerId, orderId)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /** Records an email approval (email-approval.ts) and issues when it was the last name waiting. */
  async approveEmail(resellerId: number, orderId: number, code: string, name?: string): Promise<SslStatus> {
    await recordApproval(this.scope, resellerId, orderId, code, name)
    await this.advance(orderId)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /** Another approver for one name waiting for email approval (the desktop app's per-name choice). */
  async chooseApprover(resellerId: number, orderId: number, name: string, approverEmail: string): Promise<SslStatus> {
    await chooseApprover(this.scope, resellerId, orderId, name, approverEmail)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /** Stops a first validation and returns the order to `pending` (cancel-validation.ts). */
  async cancelValidation(resellerId: number, orderId: number): Promise<SslStatus> {
    await cancelValidation(this.scope, resellerId, orderId)
    return await sslStatus(this.scope, resellerId, orderId)
  }

  /**
   * POST /ssl/reissue: needs an active certificate; new validation only when names or method
   * change. At most a few per order and hour or day (reissue-limits.ts), else 429.
   */
  async reissue(resellerId: number, input: ReissueInput): Promise<SslStatus> {
    await reissue(this.scope, resellerId, input)
    return await sslStatus(this.scope, resellerId, input.orderId)
  }

  /**
   * Revokes a certificate of the order (the current one unless `certificateId` or `serial` names another)
   * with an RFC 5280 reason (revocation.ts); answers it as now stored.
   */
  revoke(
    resellerId: number,
    orderId: number,
    input: CertificateChoice & { reason: string }
  ): Promise<StoredCertificate> {
    return revoke(this.scope, resellerId, orderId, input)
  }

  /** What a reissue for `names` (the current ones by default) would do, before it is asked for. */
  async reissuePlan(resellerId: number, orderId: number, names?: string[]): Promise<ReissuePlan> {
    return await reissuePlan(this.scope, resellerId, orderId, names)
  }

  /** GET /certificate/{id}: the current certificate, or `of` (another certificate of the order). */
  async certificate(resellerId: number, orderId: number, of?: StoredCertificate): Promise<CertificateStatus> {
    const order = await this.scope.orders.get(resellerId, orderId)
    const cert = of && of.orderId === order.id ? of : await this.latestCertificate(order.id)
    const now = this.scope.ctx.clock()
    if (!cert) return { order, certificate: null, daysRemaining: null, isExpired: false }
    const till = parseDate(cert.validTill)
    return {
      order,
      certificate: cert,
      daysRemaining: Math.max(0, daysBetween(now, till)),
      isExpired: till.getTime() <= now.getTime()
    }
  }

  /** GET /certificate/{id}/download: 404 until a certificate exists. */
  async download(resellerId: number, orderId: number): Promise<{ order: Order; certificate: StoredCertificate }> {
    const order = await this.scope.orders.get(resellerId, orderId)
    const cert = await this.latestCertificate(order.id)
    if (!cert)
      throw notFound(
        `certificate for order ${order.orderNumber} not found: none has been issued yet (status ${order.status})`
      )
    return { order, certificate: cert }
  }

  /** Every certificate of an order, newest first (history for the UI and the scheduler walk). */
  async history(resellerId: number, orderId: number): Promise<StoredCertificate[]> {
    const order = await this.scope.orders.get(resellerId, orderId)
    return await certificateHistory(this.scope.ctx.store, order.id)
  }

  /** Validation messages kept when no SMTP server is set (and copies of those sent). */
  async outbox(orderId?: number): Promise<OutboxMessage[]> {
    return await outbox(this.scope.ctx.store, orderId)
  }

  // ---- used by the scheduler -------------------------------------------------------------

  /**
   * Runs the checks of a validation_pending (or stuck processing) order and issues when all
   * passed. Returns the certificate when one was issued.
   */
  advance(orderId: number): Promise<StoredCertificate | null> {
    return advance(this.scope, orderId)
  }

  /** The automatic reissue of a due order (issuance.ts); returns what happened. */
  autoReissue(orderId: number): Promise<{ issued: StoredCertificate | null; validationNeeded: string | null }> {
    return autoReissue(this.scope, orderId)
  }

  /** The orders among `ids` whose current certificate is revoked, for list views. */
  async revokedCurrent(ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set()
    const db = this.scope.ctx.store
    const list = db.inList(ids)
    const rows = await db.all<{ id: number }>(
      `SELECT c.order_id AS id FROM certificates c
          WHERE c.order_id ${list.sql} AND c.revoked_at IS NOT NULL
            AND c.id = (SELECT MAX(l.id) FROM certificates l WHERE l.order_id = c.order_id)`,
      list.arg
    )
    return new Set(rows.map((r) => r.id))
  }

  async latestCertificate(orderId: number): Promise<StoredCertificate | null> {
    return await latestCertificate(this.scope.ctx.store, orderId)
  }
}
