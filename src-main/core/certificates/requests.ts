/**
 * The certificate request of an order: the CSR a paid order is configured with (POST
 * /ssl/configure), another validation method for its names (POST /ssl/change-dcv), and a
 * reissue of an active certificate (POST /ssl/reissue), each in the reseller API v3.0.
 */
import type { Product } from '../catalogue'
import type { DecodedCsr } from '../csr'
import type { DcvMethod } from '../dcv'
import { conflict, invalid, ServiceError } from '../errors'
import type { Order } from '../orders'
import { assertReissueAllowed } from '../reissue-limits'
import { isoDate, parseDate } from '../time'
import { acceptCsr, namesFor, productFor, subjectFor } from './csr-policy'
import { approversFor, countPendingApprovals, sendApprovals } from './email-approval'
import { issueLocked } from './issuance'
import { latestCertificate, readChecks, readRequest, setOrderStatus, storeRequest, touchOrder } from './records'
import type { CertificatesScope } from './scope'
import { resetChecks, staleChecks } from './validation'

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

/** POST /ssl/configure. */
export async function configure(scope: CertificatesScope, resellerId: number, input: ConfigureInput): Promise<void> {
  const db = scope.ctx.db
  const order = scope.orders.get(resellerId, input.orderId)
  const product = productFor(scope.catalogue, order)
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
  const csr = await acceptCsr(input.csr, product)
  const names = namesFor(order, product, csr)
  const subject = subjectFor(order, product, csr, names)
  const now = scope.ctx.clock()
  if (product.type === 'code-signing') {
    // No domain to validate: a code-signing order goes straight to issuance (docs/decisions.md,
    // "Code signing"; BR §3.2.2.4 applies to domain names only).
    storeRequest(db, order, csr, names, subject, 'none', null, 'initial', now)
    setOrderStatus(db, order.id, 'processing', null, now)
    await issueLocked(scope, order.id, 'initial')
    return
  }
  const method = input.dcvMethod ?? 'email'
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, method)
  const approvers = approversFor(order, method, names, now, {
    approverEmail: input.approverEmail,
    perName: input.approvers
  })
  db.transaction(() => {
    storeRequest(db, order, csr, names, subject, method, approvers.get(names[0]) ?? null, 'initial', now)
    resetChecks(db, order.id, names, method, approvers, now, 'none')
    setOrderStatus(db, order.id, 'validation_pending', null, now)
    if (method === 'email') countPendingApprovals(db, order, now)
  }).immediate()
  if (method === 'email') await sendApprovals(scope, order, now)
}

/** POST /ssl/change-dcv: a new method (and approver) for every name not yet validated. */
export async function changeDcv(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  method: DcvMethod,
  approverEmail?: string
): Promise<void> {
  const db = scope.ctx.db
  const order = scope.orders.get(resellerId, orderId)
  if (order.status !== 'validation_pending') {
    throw conflict(
      `could not change the validation method of order ${order.orderNumber}: it is ${order.status}, not validation_pending`
    )
  }
  const req = readRequest(db, order.id)
  const names = JSON.parse(req.names) as string[]
  const now = scope.ctx.clock()
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, method)
  const approvers = approversFor(order, method, names, now, { approverEmail })
  db.transaction(() => {
    db.prepare('UPDATE certificate_requests SET dcv_method = ?, approver_email = ? WHERE order_id = ?').run(
      method,
      approvers.get(names[0]) ?? null,
      order.id
    )
    resetChecks(db, order.id, names, method, approvers, now, 'valid')
    touchOrder(db, order.id, now)
    if (method === 'email') countPendingApprovals(db, order, now)
  }).immediate()
  if (method === 'email') await sendApprovals(scope, order, now)
}

/**
 * POST /ssl/reissue: needs an active certificate; new validation only when names or method
 * change. At most a few per order and hour or day (reissue-limits.ts), else 429.
 */
export async function reissue(scope: CertificatesScope, resellerId: number, input: ReissueInput): Promise<void> {
  const db = scope.ctx.db
  const order = scope.orders.get(resellerId, input.orderId)
  const product = productFor(scope.catalogue, order)
  const now = scope.ctx.clock()
  const current = latestCertificate(db, order.id)
  if (order.status !== 'completed' || !current || parseDate(current.validTill).getTime() <= now.getTime()) {
    throw conflict(
      `could not reissue order ${order.orderNumber}: it has no active certificate (status ${order.status})`
    )
  }
  assertReissueAllowed(db, order.id, order.orderNumber, now)
  const newCsr = input.csr !== undefined && input.csr.trim() !== ''
  if (input.privateKeyPem !== undefined && !newCsr) {
    throw invalid('could not reissue with a new private key: send the CSR made from that key with it')
  }
  const csr = newCsr
    ? await acceptCsr(input.csr as string, product)
    : await acceptCsr(readRequest(db, order.id).csr_pem, product)
  const names = namesFor(order, product, csr)
  const subject = subjectFor(order, product, csr, names)
  const keys = scope.keys
  if (input.privateKeyPem !== undefined) {
    if (!keys) throw new ServiceError('unavailable', 'could not keep the new private key: no key store is set up')
    // Held until the certificate for it is stored, then kept in the same transaction (issueNow).
    keys.stage(resellerId, order.id, input.privateKeyPem, csr.der)
  } else if (newCsr) {
    // A key held for an earlier CSR will never get its certificate now.
    keys?.discard(order.id)
  }
  try {
    await reissueWith(scope, order, product, input, csr, names, subject, now)
  } catch (err) {
    if (input.privateKeyPem !== undefined) keys?.discard(order.id)
    throw err
  }
}

async function reissueWith(
  scope: CertificatesScope,
  order: Order,
  product: Product,
  input: ReissueInput,
  csr: DecodedCsr,
  names: string[],
  subject: Record<string, string>,
  now: Date
): Promise<void> {
  const db = scope.ctx.db
  const req = readRequest(db, order.id)
  const oldNames = JSON.parse(req.names) as string[]
  if (product.type === 'code-signing') {
    storeRequest(db, order, csr, names, subject, 'none', null, 'reissue', now)
    await issueLocked(scope, order.id, 'reissue')
    return
  }
  const method = input.dcvMethod ?? (req.dcv_method === 'none' ? 'email' : req.dcv_method)
  const sameNames = names.length === oldNames.length && names.every((n) => oldNames.includes(n))
  const stale = staleChecks(db, order.id, now)
  if (sameNames && method === req.dcv_method && input.approverEmail === undefined && stale.length === 0) {
    storeRequest(db, order, csr, names, subject, method, req.approver_email, 'reissue', now)
    await issueLocked(scope, order.id, 'reissue')
    return
  }
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, method)
  // Without a new approver, names that stay with email keep the mailbox they had.
  const previous = new Map(
    readChecks(db, order.id)
      .filter((c) => c.method === 'email' && c.approver_email)
      .map((c) => [c.name, c.approver_email as string])
  )
  const approvers = approversFor(order, method, names, now, { approverEmail: input.approverEmail, previous })
  db.transaction(() => {
    storeRequest(db, order, csr, names, subject, method, approvers.get(names[0]) ?? null, 'reissue', now)
    // Names whose validation is still fresh and whose method is unchanged keep it (BR §4.2.1 reuse).
    resetChecks(db, order.id, names, method, approvers, now, 'valid-same-method')
    setOrderStatus(
      db,
      order.id,
      'validation_pending',
      `reissue requested on ${isoDate(now)}: waiting for domain validation`,
      now
    )
    if (method === 'email') countPendingApprovals(db, order, now)
  }).immediate()
  if (method === 'email') await sendApprovals(scope, order, now)
}
