/**
 * The certificate lifecycle of an order (design page, "Certificates"; spec "Certificate
 * lifecycle rule"): configure with a CSR → `validation_pending` → every name validated →
 * `processing` → issued → `completed`; reissue; the certificate and download records.
 * The scheduler (scheduler.ts) drives the automatic reissues through `autoReissue`.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { ExternalValidation } from './acme-issuer'
import { autoReissues, type Catalogue, type Product } from './catalogue'
import { APPROVER_LOCAL_PARTS, constructedEmailAllowed, CONSTRUCTED_EMAIL_SUNSET, dcvReuseDays } from './cab-policy'
import type { CoreContext } from './context'
import { assertAcceptableCsr, decodeCsr, requestedNames, type DecodedCsr } from './csr'
import {
  checkDns,
  checkHttp,
  checkStatus,
  dcvFileContent,
  dcvFileName,
  dcvFilePath,
  dcvNetwork,
  deliverMail,
  dnsRecordName,
  dnsRecordValue,
  type CheckResult,
  type DcvMethod,
  type DcvToken
} from './dcv'
import { baseDomain, isWildcard } from './domains'
import { conflict, invalid, notFound, ServiceError } from './errors'
import { recordEvent } from './events'
import type { CertificateProfile, Issuer } from './issuer'
import { validityWindow } from './lifecycle'
import type { Order, Orders } from './orders'
import { assertReissueAllowed } from './reissue-limits'
import type { Settings } from './settings'
import { addDays, daysBetween, isoDate, isoTimestamp, parseDate } from './time'

export type IssueReason = 'initial' | 'reissue' | 'auto_reissue'

export interface ConfigureInput {
  orderId: number
  csr: string
  dcvMethod?: DcvMethod
  approverEmail?: string
  /** The approver of single names (name → address); the desktop app chooses one per name. */
  approvers?: Record<string, string>
}

export interface ReissueInput {
  orderId: number
  csr?: string
  dcvMethod?: DcvMethod
  approverEmail?: string
  /**
   * The private key of `csr` when it was generated on this machine (desktop app only; the
   * reseller API never carries a key). It becomes the order's kept key together with the
   * certificate issued for it, so that certificate's deploys find it.
   */
  privateKeyPem?: string
}

/**
 * Keeps a key generated in the app with the certificate issued for it (key-vault.ts): `stage`
 * holds it until then; `promote` runs inside the transaction that stores a certificate.
 */
export interface KeyKeeper {
  stage(resellerId: number, orderId: number, pkcs8Pem: string, csrDer: Buffer): void
  promote(orderId: number, certificatePem: string): void
  discard(orderId: number): void
}

export interface NameValidation {
  name: string
  method: DcvMethod
  status: 'pending' | 'valid' | 'failed'
  detail: string | null
  checkedAt: string | null
  validatedAt: string | null
  /** What the domain owner must do, for the method chosen. */
  instructions:
    | { method: 'http' | 'https'; url: string; fileName: string; fileContent: string }
    | { method: 'dns'; recordName: string; recordType: 'CNAME' | 'TXT'; recordValue: string; txtAlternative: string }
    | { method: 'email'; approverEmail: string; sentAt: string | null }
}

export interface SslStatus {
  order: Order
  dcvMethod: DcvMethod | 'none' | null
  approverEmail: string | null
  csr: { commonName: string | null; md5: string; sha256: string } | null
  names: string[]
  validation: NameValidation[]
  certificate: StoredCertificate | null
}

export interface StoredCertificate {
  id: number
  orderId: number
  serial: string
  issuer: string
  certificatePem: string
  chainPem: string
  names: string[]
  validFrom: string
  validTill: string
  reason: IssueReason
  createdAt: string
}

export interface CertificateStatus {
  order: Order
  certificate: StoredCertificate | null
  daysRemaining: number | null
  isExpired: boolean
}

interface RequestRow {
  order_id: number
  csr_pem: string
  csr_md5: string
  csr_sha256: string
  names: string
  subject: string
  dcv_method: DcvMethod | 'none'
  approver_email: string | null
  unique_value: string
  submitted_at: string
  pending_issue: IssueReason | null
}

interface DcvRow {
  id: number
  order_id: number
  name: string
  method: DcvMethod
  approver_email: string | null
  status: 'pending' | 'valid' | 'failed'
  detail: string | null
  checked_at: string | null
  validated_at: string | null
  email_code_hash: string | null
  email_sent_at: string | null
}

interface CertRow {
  id: number
  order_id: number
  serial: string
  issuer: string
  certificate_pem: string
  chain_pem: string
  names: string
  valid_from: string
  valid_till: string
  reason: IssueReason
  created_at: string
}

const toCert = (r: CertRow): StoredCertificate => ({
  id: r.id,
  orderId: r.order_id,
  serial: r.serial,
  issuer: r.issuer,
  certificatePem: r.certificate_pem,
  chainPem: r.chain_pem,
  names: JSON.parse(r.names) as string[],
  validFrom: r.valid_from,
  validTill: r.valid_till,
  reason: r.reason,
  createdAt: r.created_at
})

/** Names checked at once by one status poll or scheduler pass. */
const CHECK_CONCURRENCY = 8

/** Subject of an approval message; the outbox reads the name back from it. */
const approvalSubject = (name: string, orderNumber: string): string =>
  `Approve the certificate for ${name} (order ${orderNumber})`
const SUBJECT_NAME_RE = /^Approve the certificate for (\S+) \(order /

/** The approver when the request names none: admin@ at the name's base domain (README, "Email approval"). */
export const defaultApprover = (name: string): string => `${APPROVER_LOCAL_PARTS[0]}@${baseDomain(name)}`

/**
 * A constructed approver address for `name`, normalised (BR §3.2.2.4.4): one of
 * APPROVER_LOCAL_PARTS at the name's base domain or a parent of it, never at a bare top-level
 * label. Anything else (another mailbox, another domain, a second address, header tricks) is 400.
 */
export function approverAddress(name: string, address: string): string {
  const shown = JSON.stringify(String(address).slice(0, 254))
  const m =
    typeof address === 'string' && address.length <= 254
      ? /^([a-z0-9-]+)@([a-z0-9.-]+)$/.exec(address.trim().toLowerCase())
      : null
  if (!m || !(APPROVER_LOCAL_PARTS as readonly string[]).includes(m[1])) {
    throw invalid(
      `approver_email ${shown} is not an approver address; use one of ${APPROVER_LOCAL_PARTS.join('@, ')}@ at the domain`
    )
  }
  const [, local, at] = m
  const base = baseDomain(name)
  if (!(base === at || base.endsWith(`.${at}`)) || !at.includes('.')) {
    throw invalid(`approver_email ${shown} is not at ${base} or a parent domain of it`)
  }
  return `${local}@${at}`
}

const hashCode = (code: string): string => createHash('sha256').update(code.trim().toUpperCase()).digest('hex')

/** Approval codes: 10 characters of an alphabet without look-alikes (0/O, 1/I). */
function approvalCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
  return Array.from(randomBytes(10), (b) => alphabet[b % alphabet.length]).join('')
}

export class Certificates {
  /** One issuance at a time per order, so two status polls never sign twice. */
  private readonly busy = new Map<number, Promise<unknown>>()
  /** Called after a certificate is committed (issue 6: deploys and their event); never undoes it. */
  onStored: ((c: { orderId: number; reason: IssueReason; certificatePem: string; chainPem: string }) => void) | null =
    null
  /** Where keys generated in the app are kept; set once at start-up (service.ts). */
  keys: KeyKeeper | null = null

  constructor(
    private readonly ctx: CoreContext,
    private readonly orders: Orders,
    private readonly catalogue: Catalogue,
    private readonly settings: Settings,
    readonly issuer: Issuer,
    /** An external CA that validates names itself (the ACME issuer); null for the local CA. */
    private readonly external: ExternalValidation | null = null
  ) {}

  decode(pem: string): Promise<DecodedCsr> {
    return decodeCsr(pem)
  }

  /** POST /ssl/configure. */
  async configure(resellerId: number, input: ConfigureInput): Promise<SslStatus> {
    const order = this.orders.get(resellerId, input.orderId)
    const product = this.product(order)
    if (order.status !== 'pending') {
      throw conflict(
        `could not configure order ${order.orderNumber}: it is ${order.status}; only a pending order takes a CSR (use /ssl/change-dcv or /ssl/reissue)`
      )
    }
    if (order.paymentStatus !== 'paid') {
      throw conflict(
        `could not configure order ${order.orderNumber}: it is ${order.paymentStatus}; pay it first (POST /credits)`
      )
    }
    const csr = await this.acceptCsr(input.csr, product)
    const names = this.namesFor(order, product, csr)
    const subject = this.subjectFor(order, product, csr, names)
    const now = this.ctx.clock()
    if (product.type === 'code-signing') {
      // No domain to validate: a code-signing order goes straight to issuance (README decision).
      this.storeRequest(order, csr, names, subject, 'none', null, 'initial', now)
      this.setStatus(order.id, 'processing', null, now)
      await this.issueLocked(order.id, 'initial')
      return this.sslStatus(resellerId, order.id)
    }
    const method = input.dcvMethod ?? 'email'
    // An external ACME CA refuses methods it has no challenge for before anything else is said.
    await this.external?.begin(order.id, names, method)
    const approvers = this.approversFor(order, method, names, now, {
      approverEmail: input.approverEmail,
      perName: input.approvers
    })
    this.ctx.db
      .transaction(() => {
        this.storeRequest(order, csr, names, subject, method, approvers.get(names[0]) ?? null, 'initial', now)
        this.resetChecks(order.id, names, method, approvers, now, 'none')
        this.setStatus(order.id, 'validation_pending', null, now)
      })
      .immediate()
    if (method === 'email') await this.sendApprovals(order, now)
    return this.sslStatus(resellerId, order.id)
  }

  /** GET /ssl/{id}: runs the pending checks, issues the moment every name passed. */
  async status(resellerId: number, orderId: number): Promise<SslStatus> {
    const order = this.orders.get(resellerId, orderId)
    if (order.status === 'validation_pending' || order.status === 'processing') await this.advance(order.id)
    return this.sslStatus(resellerId, orderId)
  }

  /** POST /ssl/change-dcv: a new method (and approver) for every name not yet validated. */
  async changeDcv(resellerId: number, orderId: number, method: DcvMethod, approverEmail?: string): Promise<SslStatus> {
    const order = this.orders.get(resellerId, orderId)
    if (order.status !== 'validation_pending') {
      throw conflict(
        `could not change the validation method of order ${order.orderNumber}: it is ${order.status}, not validation_pending`
      )
    }
    const req = this.request(order.id)
    const names = JSON.parse(req.names) as string[]
    const now = this.ctx.clock()
    // An external ACME CA refuses methods it has no challenge for before anything else is said.
    await this.external?.begin(order.id, names, method)
    const approvers = this.approversFor(order, method, names, now, { approverEmail })
    this.ctx.db
      .transaction(() => {
        this.ctx.db
          .prepare('UPDATE certificate_requests SET dcv_method = ?, approver_email = ? WHERE order_id = ?')
          .run(method, approvers.get(names[0]) ?? null, order.id)
        this.resetChecks(order.id, names, method, approvers, now, 'valid')
        this.touch(order.id, now)
      })
      .immediate()
    if (method === 'email') await this.sendApprovals(order, now)
    return this.sslStatus(resellerId, orderId)
  }

  /** POST /ssl/resend-validation: a fresh approval message (new codes); email method only. */
  async resendValidation(resellerId: number, orderId: number): Promise<SslStatus> {
    const order = this.orders.get(resellerId, orderId)
    if (order.status !== 'validation_pending') {
      throw conflict(
        `could not resend validation for order ${order.orderNumber}: it is ${order.status}, not validation_pending`
      )
    }
    const pending = this.checks(order.id).filter((c) => c.status !== 'valid')
    if (!pending.some((c) => c.method === 'email')) {
      const method = pending[0]?.method ?? this.request(order.id).dcv_method
      throw conflict(
        `could not resend validation for order ${order.orderNumber}: its method is ${method}, not email; nothing is sent for ${method}`
      )
    }
    const now = this.ctx.clock()
    if (!constructedEmailAllowed(now)) throw invalid(this.emailSunsetMessage())
    const failed = await this.sendApprovals(order, now)
    if (failed.length > 0) throw new ServiceError('unavailable', failed.join('; '))
    return this.sslStatus(resellerId, orderId)
  }

  /**
   * Records an email approval: the code from the message. Beyond the spec (README). With `name`
   * the code must be the one mailed for that name (the desktop app approves name by name).
   */
  async approveEmail(resellerId: number, orderId: number, code: string, name?: string): Promise<SslStatus> {
    const order = this.orders.get(resellerId, orderId)
    if (order.status !== 'validation_pending') {
      throw conflict(
        `could not record approval for order ${order.orderNumber}: it is ${order.status}, not validation_pending`
      )
    }
    const now = this.ctx.clock()
    // BR §3.2.2.4.4: no validation by constructed email on or after the sunset, even with an older code.
    if (!constructedEmailAllowed(now)) throw invalid(this.emailSunsetMessage())
    const check = name === undefined ? null : this.checkOf(order, name, 'record approval')
    const approved = this.ctx.db
      .prepare(
        `UPDATE dcv_checks SET status = 'valid', validated_at = ?, checked_at = ?, detail = ?, email_code_hash = NULL
         WHERE order_id = ? AND method = 'email' AND status <> 'valid' AND email_code_hash = ? ${check ? 'AND id = ?' : ''}
         RETURNING name, approver_email`
      )
      .all(
        isoTimestamp(now),
        isoTimestamp(now),
        `approved by the code mailed to the approver`,
        order.id,
        hashCode(code),
        ...(check ? [check.id] : [])
      ) as { name: string; approver_email: string | null }[]
    if (approved.length === 0)
      throw invalid(
        check
          ? `could not record approval for ${check.name}: the code does not match its pending approval`
          : 'could not record approval: the code does not match a pending approval of this order'
      )
    for (const a of approved) {
      recordEvent(this.ctx.db, now, {
        type: 'validation.passed',
        resellerId,
        orderId: order.id,
        message: `Domain validation of ${a.name} by email approved by ${a.approver_email ?? 'the approver'} for order ${order.orderNumber}`,
        data: { name: a.name, method: 'email' }
      })
    }
    await this.advance(order.id)
    return this.sslStatus(resellerId, orderId)
  }

  /**
   * Another approver for one name waiting for email approval (the desktop app's per-name
   * choice): the address must be a constructed one for that name (BR §3.2.2.4.4); a new code
   * goes to it and the name's earlier code stops working. Other names keep their codes.
   */
  async chooseApprover(resellerId: number, orderId: number, name: string, approverEmail: string): Promise<SslStatus> {
    const order = this.orders.get(resellerId, orderId)
    if (order.status !== 'validation_pending') {
      throw conflict(
        `could not change the approver of order ${order.orderNumber}: it is ${order.status}, not validation_pending`
      )
    }
    const now = this.ctx.clock()
    if (!constructedEmailAllowed(now)) throw invalid(this.emailSunsetMessage())
    const check = this.checkOf(order, name, 'change the approver')
    if (check.status === 'valid') {
      throw conflict(`could not change the approver of ${check.name}: it is validated already`)
    }
    if (check.method !== 'email') {
      throw conflict(
        `could not change the approver of ${check.name}: it is validated by ${check.method}; switch the order to email with change-dcv first`
      )
    }
    const approver = approverAddress(check.name, approverEmail)
    const names = JSON.parse(this.request(order.id).names) as string[]
    this.ctx.db
      .transaction(() => {
        this.ctx.db
          .prepare(
            `UPDATE dcv_checks SET approver_email = ?, status = 'pending', detail = NULL, checked_at = NULL,
               email_code_hash = NULL, email_sent_at = NULL WHERE id = ?`
          )
          .run(approver, check.id)
        if (check.name === names[0]) {
          this.ctx.db
            .prepare('UPDATE certificate_requests SET approver_email = ? WHERE order_id = ?')
            .run(approver, order.id)
        }
        this.touch(order.id, now)
      })
      .immediate()
    await this.sendApprovals(order, now, check.name)
    return this.sslStatus(resellerId, orderId)
  }

  /**
   * POST /ssl/reissue: needs an active certificate; new validation only when names or method
   * change. At most a few per order and hour or day (reissue-limits.ts), else 429.
   */
  async reissue(resellerId: number, input: ReissueInput): Promise<SslStatus> {
    const order = this.orders.get(resellerId, input.orderId)
    const product = this.product(order)
    const now = this.ctx.clock()
    const current = this.latestCertificate(order.id)
    if (order.status !== 'completed' || !current || parseDate(current.validTill).getTime() <= now.getTime()) {
      throw conflict(
        `could not reissue order ${order.orderNumber}: it has no active certificate (status ${order.status})`
      )
    }
    assertReissueAllowed(this.ctx.db, order.id, order.orderNumber, now)
    const newCsr = input.csr !== undefined && input.csr.trim() !== ''
    if (input.privateKeyPem !== undefined && !newCsr) {
      throw invalid('could not reissue with a new private key: send the CSR made from that key with it')
    }
    const csr = newCsr
      ? await this.acceptCsr(input.csr as string, product)
      : await this.acceptCsr(this.request(order.id).csr_pem, product)
    const names = this.namesFor(order, product, csr)
    const subject = this.subjectFor(order, product, csr, names)
    const keys = this.keys
    if (input.privateKeyPem !== undefined) {
      if (!keys) throw new ServiceError('unavailable', 'could not keep the new private key: no key store is set up')
      // Held until the certificate for it is stored, then kept in the same transaction (issueNow).
      keys.stage(resellerId, order.id, input.privateKeyPem, csr.der)
    } else if (newCsr) {
      // A key held for an earlier CSR will never get its certificate now.
      keys?.discard(order.id)
    }
    try {
      return await this.reissueWith(resellerId, order, product, input, csr, names, subject, now)
    } catch (err) {
      if (input.privateKeyPem !== undefined) keys?.discard(order.id)
      throw err
    }
  }

  private async reissueWith(
    resellerId: number,
    order: Order,
    product: Product,
    input: ReissueInput,
    csr: DecodedCsr,
    names: string[],
    subject: Record<string, string>,
    now: Date
  ): Promise<SslStatus> {
    const req = this.request(order.id)
    const oldNames = JSON.parse(req.names) as string[]
    if (product.type === 'code-signing') {
      this.storeRequest(order, csr, names, subject, 'none', null, 'reissue', now)
      await this.issueLocked(order.id, 'reissue')
      return this.sslStatus(resellerId, order.id)
    }
    const method = input.dcvMethod ?? (req.dcv_method === 'none' ? 'email' : req.dcv_method)
    const sameNames = names.length === oldNames.length && names.every((n) => oldNames.includes(n))
    const stale = this.staleChecks(order.id, now)
    if (sameNames && method === req.dcv_method && input.approverEmail === undefined && stale.length === 0) {
      this.storeRequest(order, csr, names, subject, method, req.approver_email, 'reissue', now)
      await this.issueLocked(order.id, 'reissue')
      return this.sslStatus(resellerId, order.id)
    }
    // An external ACME CA refuses methods it has no challenge for before anything else is said.
    await this.external?.begin(order.id, names, method)
    // Without a new approver, names that stay with email keep the mailbox they had.
    const previous = new Map(
      this.checks(order.id)
        .filter((c) => c.method === 'email' && c.approver_email)
        .map((c) => [c.name, c.approver_email as string])
    )
    const approvers = this.approversFor(order, method, names, now, { approverEmail: input.approverEmail, previous })
    this.ctx.db
      .transaction(() => {
        this.storeRequest(order, csr, names, subject, method, approvers.get(names[0]) ?? null, 'reissue', now)
        // Names whose validation is still fresh and whose method is unchanged keep it (BR §4.2.1 reuse).
        this.resetChecks(order.id, names, method, approvers, now, 'valid-same-method')
        this.setStatus(
          order.id,
          'validation_pending',
          `reissue requested on ${isoDate(now)}: waiting for domain validation`,
          now
        )
      })
      .immediate()
    if (method === 'email') await this.sendApprovals(order, now)
    return this.sslStatus(resellerId, order.id)
  }

  /** GET /certificate/{id}. */
  certificate(resellerId: number, orderId: number): CertificateStatus {
    const order = this.orders.get(resellerId, orderId)
    const cert = this.latestCertificate(order.id)
    const now = this.ctx.clock()
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
  download(resellerId: number, orderId: number): { order: Order; certificate: StoredCertificate } {
    const order = this.orders.get(resellerId, orderId)
    const cert = this.latestCertificate(order.id)
    if (!cert)
      throw notFound(
        `certificate for order ${order.orderNumber} not found: none has been issued yet (status ${order.status})`
      )
    return { order, certificate: cert }
  }

  /** Every certificate of an order, newest first (history for the UI and the scheduler walk). */
  history(resellerId: number, orderId: number): StoredCertificate[] {
    const order = this.orders.get(resellerId, orderId)
    return (
      this.ctx.db.prepare('SELECT * FROM certificates WHERE order_id = ? ORDER BY id DESC').all(order.id) as CertRow[]
    ).map(toCert)
  }

  /** Validation messages kept when no SMTP server is set (and copies of those sent). */
  outbox(orderId?: number): {
    id: number
    orderId: number | null
    /** The name the message asks approval for. */
    name: string | null
    to: string
    subject: string
    body: string
    delivery: string
    createdAt: string
  }[] {
    const rows = (
      orderId === undefined
        ? this.ctx.db.prepare('SELECT * FROM email_outbox ORDER BY id DESC').all()
        : this.ctx.db.prepare('SELECT * FROM email_outbox WHERE order_id = ? ORDER BY id DESC').all(orderId)
    ) as {
      id: number
      order_id: number | null
      to_address: string
      subject: string
      body: string
      delivery: string
      created_at: string
    }[]
    return rows.map((r) => ({
      id: r.id,
      orderId: r.order_id,
      name: SUBJECT_NAME_RE.exec(r.subject)?.[1] ?? null,
      to: r.to_address,
      subject: r.subject,
      body: r.body,
      delivery: r.delivery,
      createdAt: r.created_at
    }))
  }

  // ---- used by the scheduler -------------------------------------------------------------

  /**
   * Runs the checks of a validation_pending (or stuck processing) order and issues when all
   * passed. Returns the certificate when one was issued.
   */
  async advance(orderId: number): Promise<StoredCertificate | null> {
    return this.locked(orderId, async () => {
      const status = this.orderStatus(orderId)
      if (status === 'validation_pending') {
        const allValid = await this.runChecks(orderId)
        if (!allValid) return null
        this.setStatus(orderId, 'processing', null, this.ctx.clock())
      } else if (status !== 'processing') {
        return null
      }
      return this.issueNow(orderId, this.request(orderId).pending_issue ?? 'initial')
    })
  }

  /**
   * The automatic reissue of a due order: re-checks names whose validation is older than the
   * reuse period of today (BR §4.2.1); a failed re-check moves the order to validation_pending
   * and says why. Returns what happened.
   */
  async autoReissue(orderId: number): Promise<{ issued: StoredCertificate | null; validationNeeded: string | null }> {
    return this.locked(orderId, async () => {
      const now = this.ctx.clock()
      const stale = this.staleChecks(orderId, now)
      const failures: string[] = []
      for (const c of stale) {
        const result = c.method === 'email' ? null : await this.check(orderId, c)
        if (result?.ok) {
          this.ctx.db
            .prepare(
              `UPDATE dcv_checks SET status = 'valid', detail = ?, checked_at = ?, validated_at = ? WHERE id = ?`
            )
            .run(result.detail, isoTimestamp(now), isoTimestamp(now), c.id)
        } else {
          const detail =
            result?.detail ??
            (constructedEmailAllowed(now)
              ? 'email approval is older than the reuse period; a new approval email was sent'
              : `email validation is retired from ${isoDate(CONSTRUCTED_EMAIL_SUNSET)}; choose http, https or dns with /ssl/change-dcv`)
          this.ctx.db
            .prepare(`UPDATE dcv_checks SET status = 'pending', detail = ?, checked_at = ? WHERE id = ?`)
            .run(detail, isoTimestamp(now), c.id)
          failures.push(`${c.name}: ${detail}`)
        }
      }
      if (failures.length > 0) {
        const note = `automatic reissue on ${isoDate(now)} needs domain validation again (the previous check is older than ${dcvReuseDays(now)} days): ${failures.join('; ')}`
        this.ctx.db
          .prepare(`UPDATE certificate_requests SET pending_issue = 'auto_reissue' WHERE order_id = ?`)
          .run(orderId)
        this.setStatus(orderId, 'validation_pending', note, now)
        if (stale.some((c) => c.method === 'email') && constructedEmailAllowed(now)) {
          await this.sendApprovals(this.orderById(orderId), now)
        }
        return { issued: null, validationNeeded: note }
      }
      return { issued: await this.issueNow(orderId, 'auto_reissue'), validationNeeded: null }
    })
  }

  latestCertificate(orderId: number): StoredCertificate | null {
    const row = this.ctx.db
      .prepare('SELECT * FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1')
      .get(orderId) as CertRow | undefined
    return row ? toCert(row) : null
  }

  // ---- internals -------------------------------------------------------------------------

  private async locked<T>(orderId: number, fn: () => Promise<T>): Promise<T> {
    while (this.busy.has(orderId)) await this.busy.get(orderId)?.catch(() => undefined)
    const p = fn()
    this.busy.set(orderId, p)
    try {
      return await p
    } finally {
      this.busy.delete(orderId)
    }
  }

  private issueLocked(orderId: number, reason: IssueReason): Promise<StoredCertificate> {
    return this.locked(orderId, () => this.issueNow(orderId, reason))
  }

  /** Signs and stores one certificate, and moves the order to completed, in one transaction. */
  private async issueNow(orderId: number, reason: IssueReason): Promise<StoredCertificate> {
    const order = this.orderById(orderId)
    const product = this.product(order)
    const req = this.request(orderId)
    const now = this.ctx.clock()
    const end = parseDate(order.purchaseEndDate)
    if (end.getTime() <= now.getTime()) {
      throw conflict(
        `could not issue a certificate for order ${order.orderNumber}: its subscription ended on ${order.purchaseEndDate}`
      )
    }
    const window = validityWindow(product, now, end, autoReissues(product))
    const csr = await decodeCsr(req.csr_pem)
    const names = JSON.parse(req.names) as string[]
    const profile: CertificateProfile = product.type === 'code-signing' ? 'code-signing' : 'tls'
    let issued
    try {
      // The same CSR policy as at submission, again at signing: a CSR stored under an older,
      // weaker policy is never signed (automatic reissues included).
      assertAcceptableCsr(csr, profile)
      issued = await this.issuer.issue({
        csrDer: csr.der,
        names,
        profile,
        subject: JSON.parse(req.subject) as { CN: string },
        validFrom: window.validFrom,
        validTill: window.validTill,
        orderId
      })
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      this.ctx.db
        .prepare('UPDATE orders SET status_note = ?, updated_at = ? WHERE id = ?')
        .run(`could not issue certificate: ${why}`, isoTimestamp(now), orderId)
      throw err instanceof ServiceError ? err : new ServiceError('unavailable', `could not issue certificate: ${why}`)
    }
    const db = this.ctx.db
    const id = db
      .transaction(() => {
        const r = db
          .prepare(
            `INSERT INTO certificates (order_id, serial, issuer, certificate_pem, chain_pem, names, valid_from, valid_till, reason, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
          )
          .run(
            orderId,
            issued.serial,
            issued.issuer,
            issued.certificatePem,
            issued.chainPem,
            req.names,
            isoTimestamp(issued.validFrom),
            isoTimestamp(issued.validTill),
            reason,
            isoTimestamp(now)
          )
        db.prepare(
          `UPDATE orders SET status = 'completed', status_note = NULL, cert_valid_from = ?, cert_valid_till = ?, next_reissue_at = ?,
             reissue_count = reissue_count + ?, updated_at = ? WHERE id = ?`
        ).run(
          isoDate(issued.validFrom),
          isoDate(issued.validTill),
          window.nextReissueAt ? isoDate(window.nextReissueAt) : null,
          reason === 'auto_reissue' ? 1 : 0,
          isoTimestamp(now),
          orderId
        )
        db.prepare('UPDATE certificate_requests SET pending_issue = NULL WHERE order_id = ?').run(orderId)
        // The key generated for this certificate is kept with it before anything (a deploy) reads it.
        this.keys?.promote(orderId, issued.certificatePem)
        return Number(r.lastInsertRowid)
      })
      .immediate()
    this.onStored?.({ orderId, reason, certificatePem: issued.certificatePem, chainPem: issued.chainPem })
    return toCert(db.prepare('SELECT * FROM certificates WHERE id = ?').get(id) as CertRow)
  }

  /**
   * Runs every pending check, a few names at a time (a 250-name order must not wait for 250
   * sequential timeouts); true when all names are valid.
   */
  private async runChecks(orderId: number): Promise<boolean> {
    const now = this.ctx.clock()
    const pending = this.checks(orderId).filter((c) => c.status !== 'valid')
    const network = pending.filter((c) => c.method !== 'email')
    const update = this.ctx.db.prepare(
      `UPDATE dcv_checks SET status = ?, detail = ?, checked_at = ?, validated_at = ? WHERE id = ?`
    )
    let allValid = network.length === pending.length
    for (let i = 0; i < network.length; i += CHECK_CONCURRENCY) {
      const batch = network.slice(i, i + CHECK_CONCURRENCY)
      const results = await Promise.all(batch.map((c) => this.check(orderId, c)))
      batch.forEach((c, j) => {
        const result = results[j]
        const status = checkStatus(result)
        update.run(status, result.detail, isoTimestamp(now), result.ok ? isoTimestamp(now) : null, c.id)
        // The log tells what changed: a pass, or a name that can no longer pass. A name still
        // waiting for its owner logs nothing, however often a status poll looks.
        if (status !== 'pending' && status !== c.status) {
          recordEvent(this.ctx.db, now, {
            type: result.ok ? 'validation.passed' : 'validation.failed',
            resellerId: this.orderById(orderId).resellerId,
            orderId,
            message: `Domain validation of ${c.name} by ${c.method} ${result.ok ? 'passed' : 'failed'}: ${result.detail}`,
            data: { name: c.name, method: c.method }
          })
        }
        if (!result.ok) allValid = false
      })
    }
    return allValid
  }

  private check(orderId: number, c: DcvRow): Promise<CheckResult> {
    if (this.external?.handles(orderId)) return this.external.check(orderId, c.name)
    const t = this.token(orderId)
    const domain = baseDomain(c.name)
    const net = dcvNetwork(this.settings)
    if (c.method === 'dns') return checkDns(domain, t, net)
    return checkHttp(c.method === 'https' ? 'https' : 'http', domain, t, net)
  }

  /** Valid checks whose validation is older than the reuse period of `now` (BR §4.2.1). */
  private staleChecks(orderId: number, now: Date): DcvRow[] {
    const reuse = dcvReuseDays(now)
    return this.checks(orderId).filter(
      (c) =>
        c.status !== 'valid' || !c.validated_at || addDays(parseDate(c.validated_at), reuse).getTime() <= now.getTime()
    )
  }

  private async acceptCsr(pem: string, product: Product): Promise<DecodedCsr> {
    const csr = await decodeCsr(pem)
    assertAcceptableCsr(csr, product.type === 'code-signing' ? 'code-signing' : 'tls')
    return csr
  }

  /**
   * The names a CSR may carry for this order: the order domain (required) and its www form on
   * every product; the bare domain on wildcard products; on multi-domain products as many more
   * names as were paid for (included + san_count), wildcards only up to san_wildcard_count.
   */
  private namesFor(order: Order, product: Product, csr: DecodedCsr): string[] {
    if (product.type === 'code-signing') {
      if (csr.dnsNames.length > 0) throw invalid('could not accept CSR: a code-signing CSR carries no DNS names')
      if (!csr.commonName) throw invalid('could not accept CSR: a code-signing CSR needs a common name (the publisher)')
      return []
    }
    const asked = requestedNames(csr)
    if (asked.length === 0) throw invalid('could not accept CSR: it names no domain (no DNS common name, no DNS SAN)')
    const domain = order.domain
    const bare = baseDomain(domain)
    const www = (n: string): string => (n.startsWith('www.') ? n.slice(4) : `www.${n}`)
    if (!asked.includes(domain)) {
      throw invalid(`could not accept CSR: it does not name the order domain ${domain} (it names ${asked.join(', ')})`)
    }
    const free = new Set([domain, www(domain)])
    if (product.type === 'wildcard') free.add(bare)
    const extra = asked.filter((n) => !free.has(n))
    for (const n of asked) {
      if (!/^(\*\.)?[a-z0-9.-]+$/.test(n) || n.split('.').some((l) => l === '' || l.length > 63)) {
        throw invalid(`could not accept CSR: ${n} is not a valid domain name`)
      }
    }
    if (product.type !== 'multi-domain') {
      if (extra.length > 0) {
        throw invalid(
          `could not accept CSR: ${extra.join(', ')} ${extra.length === 1 ? 'is' : 'are'} not covered by this order (${product.name} covers ${[...free].join(', ')})`
        )
      }
    } else {
      const wild = extra.filter(isWildcard)
      const plain = extra.filter((n) => !isWildcard(n))
      if (wild.length > order.sanWildcardCount) {
        throw invalid(
          `could not accept CSR: it asks for ${wild.length} wildcard name(s) but the order paid for ${order.sanWildcardCount} wildcard SAN(s)`
        )
      }
      const plainPaid = product.includedSans + order.sanCount
      if (plain.length > plainPaid) {
        throw invalid(
          `could not accept CSR: it asks for ${plain.length} additional name(s) but the order covers ${plainPaid} (${product.includedSans} included + ${order.sanCount} bought)`
        )
      }
    }
    if (product.type !== 'wildcard' && isWildcard(domain) === false) {
      const wildOnNonWildcard = asked.filter(isWildcard)
      if (wildOnNonWildcard.length > 0 && !(product.type === 'multi-domain' && product.wildcardSanEnabled)) {
        throw invalid(`could not accept CSR: wildcard name ${wildOnNonWildcard[0]} needs a wildcard product`)
      }
    }
    // The order domain first: it becomes the subject CN.
    return [domain, ...asked.filter((n) => n !== domain)]
  }

  /** DV carries the CN only; OV, EV and code signing carry the organisation from the CSR. */
  private subjectFor(order: Order, product: Product, csr: DecodedCsr, names: string[]): Record<string, string> {
    const cn = names[0] ?? csr.commonName ?? ''
    if (product.validationType === 'dv' && product.type !== 'code-signing') return { CN: cn }
    const s: Record<string, string> = { CN: cn }
    if (csr.organization) s.O = csr.organization
    if (csr.locality) s.L = csr.locality
    if (csr.state) s.ST = csr.state
    if (csr.country && /^[A-Z]{2}$/i.test(csr.country)) s.C = csr.country.toUpperCase()
    if (product.type === 'code-signing' && !s.O) {
      throw invalid(`could not accept CSR: ${order.productName} needs the organisation (O) in the CSR subject`)
    }
    return s
  }

  private emailSunsetMessage(): string {
    return `email validation is no longer allowed: the Baseline Requirements retire constructed-email validation (§3.2.2.4.4) from ${isoDate(CONSTRUCTED_EMAIL_SUNSET)}; use http, https or dns`
  }

  /**
   * The approver of each name for email validation. `approverEmail` is the spec's one field: the
   * order domain's mailbox, and the same mailbox at each other name's domain. `perName` picks the
   * mailbox of single names (the desktop app); `previous` keeps what names already had. A name
   * left without one gets admin@ at its base domain: the reseller API v3.0 (POST /ssl/configure,
   * POST /ssl/change-dcv) makes approver_email optional and email the default method.
   */
  private approversFor(
    order: Order,
    method: DcvMethod,
    names: string[],
    now: Date,
    choice: { approverEmail?: string; perName?: Record<string, string>; previous?: Map<string, string> }
  ): Map<string, string> {
    const map = new Map<string, string>()
    if (method === 'http' || method === 'https') {
      const wild = names.find(isWildcard)
      // BR §3.2.2.4.18: the file method cannot validate a wildcard name.
      if (wild)
        throw invalid(
          `${method} validation cannot validate the wildcard name ${wild} (BR §3.2.2.4.18); use dns or email`
        )
    }
    const perName = Object.entries(choice.perName ?? {})
    if ((choice.approverEmail !== undefined || perName.length > 0) && method !== 'email') {
      throw invalid(`approver_email is only for email validation, not ${method}`)
    }
    if (method !== 'email') return map
    if (!constructedEmailAllowed(now)) throw invalid(this.emailSunsetMessage())
    for (const n of names) map.set(n, choice.previous?.get(n) ?? defaultApprover(n))
    if (choice.approverEmail !== undefined) {
      const primary = approverAddress(names[0], choice.approverEmail)
      const [local, at] = primary.split('@')
      // The same mailbox, as many labels up from each name as the given one is from the first.
      const depth = baseDomain(names[0]).split('.').length - at.split('.').length
      for (const n of names) {
        const labels = baseDomain(n).split('.')
        map.set(n, n === names[0] ? primary : `${local}@${labels.slice(Math.min(depth, labels.length - 2)).join('.')}`)
      }
    }
    for (const [given, address] of perName) {
      const name = given.trim().toLowerCase()
      if (!names.includes(name)) {
        throw invalid(
          `could not choose an approver: ${JSON.stringify(given.slice(0, 253))} is not a name of order ${order.orderNumber}`
        )
      }
      map.set(name, approverAddress(name, address))
    }
    return map
  }

  /** The check row of one name of the order; 400 when the order has no such name. */
  private checkOf(order: Order, name: string, verb: string): DcvRow {
    const wanted = String(name).trim().toLowerCase()
    const check = this.checks(order.id).find((c) => c.name === wanted)
    if (!check) {
      throw invalid(
        `could not ${verb}: ${JSON.stringify(String(name).slice(0, 253))} is not a name of order ${order.orderNumber}`
      )
    }
    return check
  }

  private storeRequest(
    order: Order,
    csr: DecodedCsr,
    names: string[],
    subject: Record<string, string>,
    method: DcvMethod | 'none',
    approver: string | null,
    pending: IssueReason,
    now: Date
  ): void {
    const existing = this.ctx.db
      .prepare('SELECT csr_md5, unique_value FROM certificate_requests WHERE order_id = ?')
      .get(order.id) as { csr_md5: string; unique_value: string } | undefined
    // A new unique value with every new CSR, so an old validation file never validates a new request.
    const unique = existing && existing.csr_md5 === csr.md5 ? existing.unique_value : randomBytes(10).toString('hex')
    this.ctx.db
      .prepare(
        `INSERT INTO certificate_requests (order_id, csr_pem, csr_md5, csr_sha256, names, subject, dcv_method, approver_email, unique_value, submitted_at, pending_issue)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET csr_pem = excluded.csr_pem, csr_md5 = excluded.csr_md5, csr_sha256 = excluded.csr_sha256,
           names = excluded.names, subject = excluded.subject, dcv_method = excluded.dcv_method, approver_email = excluded.approver_email,
           unique_value = excluded.unique_value, submitted_at = excluded.submitted_at, pending_issue = excluded.pending_issue`
      )
      .run(
        order.id,
        csr.pem,
        csr.md5,
        csr.sha256,
        JSON.stringify(names),
        JSON.stringify(subject),
        method,
        approver,
        unique,
        isoTimestamp(now),
        pending
      )
  }

  /**
   * One check row per name. `keep` says which earlier validations survive: none (a first
   * configure), every fresh valid one (change-dcv changes only what is not yet validated), or
   * fresh valid ones of the same method (reissue; BR §4.2.1 reuse). The rest start pending.
   */
  private resetChecks(
    orderId: number,
    names: string[],
    method: DcvMethod,
    approvers: Map<string, string>,
    now: Date,
    keep: 'none' | 'valid' | 'valid-same-method'
  ): void {
    const db = this.ctx.db
    const reuse = dcvReuseDays(now)
    const kept = new Set(
      keep === 'none'
        ? []
        : this.checks(orderId)
            .filter(
              (c) =>
                c.status === 'valid' &&
                c.validated_at &&
                addDays(parseDate(c.validated_at), reuse).getTime() > now.getTime()
            )
            .filter((c) => keep === 'valid' || c.method === method)
            .map((c) => c.name)
    )
    db.prepare(`DELETE FROM dcv_checks WHERE order_id = ? AND name NOT IN (SELECT value FROM json_each(?))`).run(
      orderId,
      JSON.stringify(names)
    )
    for (const name of names) {
      if (kept.has(name)) continue
      db.prepare(
        `INSERT INTO dcv_checks (order_id, name, method, approver_email, status) VALUES (?, ?, ?, ?, 'pending')
         ON CONFLICT(order_id, name) DO UPDATE SET method = excluded.method, approver_email = excluded.approver_email, status = 'pending',
           detail = NULL, checked_at = NULL, validated_at = NULL, email_code_hash = NULL, email_sent_at = NULL`
      ).run(orderId, name, method, approvers.get(name) ?? null)
    }
  }

  /**
   * Mails a fresh code for every pending email check of the order. A message SMTP refuses does
   * not undo the configure or change-dcv that asked for it: its name shows the reason, and
   * /ssl/resend-validation tries again. `only` limits it to one name. Returns the reasons of the
   * messages that failed.
   */
  private async sendApprovals(order: Order, now: Date, only?: string): Promise<string[]> {
    const failed: string[] = []
    const pending = this.checks(order.id).filter(
      (c) => c.method === 'email' && c.status !== 'valid' && c.approver_email && (only === undefined || c.name === only)
    )
    for (const c of pending) {
      const code = approvalCode()
      const mail = {
        to: c.approver_email as string,
        subject: approvalSubject(c.name, order.orderNumber),
        text:
          `A TLS certificate for ${c.name} was requested through order ${order.orderNumber}.\n\n` +
          `If you control ${baseDomain(c.name)} and approve it, give this approval code to your provider:\n\n    ${code}\n\n` +
          `They enter it with POST /ssl/approve (order_id ${order.id}). If you did not expect this, ignore this message.\n`
      }
      let delivery: 'smtp' | 'outbox'
      try {
        delivery = await deliverMail(this.settings, mail)
      } catch (err) {
        const why = err instanceof Error ? err.message.split('\n')[0] : String(err)
        // The old code (if any) stays valid: a failed resend must not void a delivered message.
        const reason = `could not send the approval email to ${mail.to}: ${why}`
        this.ctx.db.prepare('UPDATE dcv_checks SET detail = ? WHERE id = ?').run(reason, c.id)
        failed.push(reason)
        continue
      }
      const ts = isoTimestamp(now)
      this.ctx.db
        .transaction(() => {
          this.ctx.db
            .prepare(
              `UPDATE dcv_checks SET email_code_hash = ?, email_sent_at = ?, status = 'pending', detail = ? WHERE id = ?`
            )
            .run(
              hashCode(code),
              ts,
              delivery === 'smtp'
                ? `approval email sent to ${mail.to}`
                : `approval email to ${mail.to} is in the outbox (no SMTP server configured)`,
              c.id
            )
          this.ctx.db
            .prepare(
              'INSERT INTO email_outbox (order_id, to_address, subject, body, delivery, created_at) VALUES (?, ?, ?, ?, ?, ?)'
            )
            // A delivered message is kept without its code: the code is a credential of the approver.
            .run(
              order.id,
              mail.to,
              mail.subject,
              delivery === 'smtp' ? mail.text.replace(code, '(code sent by email)') : mail.text,
              delivery,
              ts
            )
        })
        .immediate()
    }
    return failed
  }

  private sslStatus(resellerId: number, orderId: number): SslStatus {
    const order = this.orders.get(resellerId, orderId)
    const req = this.ctx.db.prepare('SELECT * FROM certificate_requests WHERE order_id = ?').get(orderId) as
      RequestRow | undefined
    const token = req ? { md5: req.csr_md5, sha256: req.csr_sha256, unique: req.unique_value } : null
    return {
      order,
      dcvMethod: req?.dcv_method ?? null,
      approverEmail: req?.approver_email ?? null,
      csr: req
        ? {
            commonName:
              (JSON.parse(req.names) as string[])[0] ?? (JSON.parse(req.subject) as { CN?: string }).CN ?? null,
            md5: req.csr_md5,
            sha256: req.csr_sha256
          }
        : null,
      names: req ? (JSON.parse(req.names) as string[]) : [],
      validation: token ? this.checks(orderId).map((c) => this.nameValidation(c, token)) : [],
      certificate: this.latestCertificate(orderId)
    }
  }

  private nameValidation(c: DcvRow, t: DcvToken): NameValidation {
    const domain = baseDomain(c.name)
    const external = this.external?.handles(c.order_id) ? this.external.instructions(c.order_id, c.name) : null
    const instructions: NameValidation['instructions'] =
      external ??
      (c.method === 'dns'
        ? {
            method: 'dns',
            recordName: dnsRecordName(t, domain),
            recordType: 'CNAME',
            recordValue: dnsRecordValue(t),
            txtAlternative: dnsRecordValue(t)
          }
        : c.method === 'email'
          ? { method: 'email', approverEmail: c.approver_email ?? '', sentAt: c.email_sent_at }
          : {
              method: c.method,
              url: `${c.method}://${domain}${dcvFilePath(t)}`,
              fileName: dcvFileName(t),
              fileContent: dcvFileContent(t)
            })
    return {
      name: c.name,
      method: c.method,
      status: c.status,
      detail: c.detail,
      checkedAt: c.checked_at,
      validatedAt: c.validated_at,
      instructions
    }
  }

  private token(orderId: number): DcvToken {
    const r = this.request(orderId)
    return { md5: r.csr_md5, sha256: r.csr_sha256, unique: r.unique_value }
  }

  private request(orderId: number): RequestRow {
    const r = this.ctx.db.prepare('SELECT * FROM certificate_requests WHERE order_id = ?').get(orderId) as
      RequestRow | undefined
    if (!r) throw conflict(`order ${orderId} has no CSR yet; POST /ssl/configure first`)
    return r
  }

  private checks(orderId: number): DcvRow[] {
    return this.ctx.db.prepare('SELECT * FROM dcv_checks WHERE order_id = ? ORDER BY id').all(orderId) as DcvRow[]
  }

  private orderStatus(orderId: number): string {
    return (this.ctx.db.prepare('SELECT status FROM orders WHERE id = ?').get(orderId) as { status: string }).status
  }

  private orderById(orderId: number): Order {
    const { reseller_id } = this.ctx.db.prepare('SELECT reseller_id FROM orders WHERE id = ?').get(orderId) as {
      reseller_id: number
    }
    return this.orders.get(reseller_id, orderId)
  }

  private product(order: Order): Product {
    const p = this.catalogue.allProducts().find((x) => x.id === order.productId)
    if (!p) throw notFound(`product ${order.productId} not found`)
    if (p.fulfillment === 'acme_subscription') {
      throw invalid(
        `order ${order.orderNumber} is an ACME subscription: its certificates come from your ACME client, not from a CSR`
      )
    }
    return p
  }

  private setStatus(orderId: number, status: string, note: string | null, now: Date): void {
    this.ctx.db
      .prepare('UPDATE orders SET status = ?, status_note = ?, updated_at = ? WHERE id = ?')
      .run(status, note, isoTimestamp(now), orderId)
  }

  private touch(orderId: number, now: Date): void {
    this.ctx.db.prepare('UPDATE orders SET updated_at = ? WHERE id = ?').run(isoTimestamp(now), orderId)
  }
}
