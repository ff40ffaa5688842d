/**
 * The certificate request of an order: the CSR a paid order is configured with (POST
 * /ssl/configure), another validation method for its names (POST /ssl/change-dcv), and a
 * reissue of an active certificate (POST /ssl/reissue), each in the reseller API v3.0.
 */
import type { Product } from '../billing/catalogue'
import type { DecodedCsr } from './csr'
import type { DcvMethod } from '../dcv/dcv'
import { conflict, invalid, ServiceError } from '../errors'
import type { Order } from '../orders/orders'
import { assertReissueAllowed } from './reissue-limits'
import { isoDate, parseDate } from '../time'
import { acceptCsr, namesFor, productFor, subjectFor } from './csr-policy'
import { approversFor, countPendingApprovals, sendApprovals } from './email-approval'
import { issueLocked } from './issuance'
import { anyEmail, choiceApprovers, methodsFor, normalName, type NameChoice } from './name-methods'
import { latestCertificate, readChecks, readRequest, setOrderStatus, storeRequest, touchOrder } from './records'
import type { CertificatesScope } from './scope'
import { freshlyValid, resetChecks, staleChecks } from './validation'

export interface ConfigureInput {
  orderId: number
  csr: string
  dcvMethod?: DcvMethod
  approverEmail?: string
  /** The approver of single names (name → address); the desktop app chooses one per name. */
  approvers?: Record<string, string>
  /** Names validated otherwise than by `dcvMethod` (`dcv_per_name`, name-methods.ts). */
  perName?: NameChoice[]
}

export interface ReissueInput {
  orderId: number
  csr?: string
  dcvMethod?: DcvMethod
  approverEmail?: string
  /** Names validated otherwise than by `dcvMethod` or their current method (name-methods.ts). */
  perName?: NameChoice[]
  /**
   * The names of the new certificate, with the same key: a CSR for them is made from the kept
   * key of the current certificate (desktop app only). Without it the names come from the CSR.
   */
  names?: string[]
  /**
   * The private key of `csr` when it was generated on this machine (desktop app only; the
   * reseller API never carries a key). It becomes the order's kept key together with the
   * certificate issued for it, so that certificate's deploys find it.
   */
  privateKeyPem?: string
}

/** POST /ssl/configure. */
export async function configure(scope: CertificatesScope, resellerId: number, input: ConfigureInput): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, input.orderId)
  const product = await productFor(scope.catalogue, order)
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
    await storeRequest(db, order, csr, names, subject, 'none', null, 'initial', now)
    await setOrderStatus(db, order.id, 'processing', null, now)
    await issueLocked(scope, order.id, 'initial')
    return
  }
  const fallback = input.dcvMethod ?? 'email'
  const methods = methodsFor(order, names, () => fallback, input.perName)
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, methods)
  const approvers = approversFor(order, methods, names, now, {
    approverEmail: input.approverEmail,
    perName: [...Object.entries(input.approvers ?? {}), ...choiceApprovers(input.perName)]
  })
  await db.tx(async () => {
    await storeRequest(db, order, csr, names, subject, fallback, approvers.get(names[0]) ?? null, 'initial', now)
    await resetChecks(db, order.id, names, methods, approvers, now, 'none')
    await setOrderStatus(db, order.id, 'validation_pending', null, now)
    if (anyEmail(methods)) await countPendingApprovals(db, order, now)
  })
  if (anyEmail(methods)) await sendApprovals(scope, order, now)
}

/**
 * POST /ssl/change-dcv. With `method`, every name not yet validated takes it (the spec's one
 * field), except the names `perName` gives their own. Without it, only the names in `perName`
 * change and every other name stays exactly as it is (its file, record or approval code).
 */
export async function changeDcv(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  method: DcvMethod | undefined,
  approverEmail?: string,
  perName: NameChoice[] = []
): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  if (order.status !== 'validation_pending') {
    throw conflict(
      `could not change the validation method of order ${order.orderNumber}: it is ${order.status}, not validation_pending`
    )
  }
  if (method === undefined && perName.length === 0) {
    throw invalid('dcv_method is required, unless dcv_per_name names the names to change')
  }
  const req = await readRequest(db, order.id)
  const names = JSON.parse(req.names) as string[]
  const now = scope.ctx.clock()
  const checks = await readChecks(db, order.id)
  const current = new Map(checks.map((c) => [c.name, c.method]))
  const fallback = req.dcv_method === 'none' ? 'email' : req.dcv_method
  const methods = methodsFor(order, names, (n) => method ?? current.get(n) ?? fallback, perName)
  const only = method === undefined ? new Set(perName.map((c) => normalName(c.name))) : undefined
  for (const c of checks) {
    if (only?.has(c.name) && freshlyValid(c, now)) {
      throw conflict(`could not change the validation method of ${c.name}: it is validated already`)
    }
  }
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, methods)
  // Names that stay with email keep the mailbox they had, unless another is given.
  const previous = new Map(
    checks.filter((c) => c.method === 'email' && c.approver_email).map((c) => [c.name, c.approver_email as string])
  )
  const approvers = approversFor(order, methods, names, now, {
    approverEmail,
    perName: choiceApprovers(perName),
    previous
  })
  await db.tx(async () => {
    await resetChecks(db, order.id, names, methods, approvers, now, 'valid', only)
    await db.run(
      `UPDATE certificate_requests SET dcv_method = ?,
         approver_email = (SELECT approver_email FROM dcv_checks WHERE order_id = ? AND name = ?) WHERE order_id = ?`,
      method ?? req.dcv_method,
      order.id,
      names[0],
      order.id
    )
    await touchOrder(db, order.id, now)
    if (anyEmail(methods)) await countPendingApprovals(db, order, now, only)
  })
  if (anyEmail(methods)) await sendApprovals(scope, order, now, only)
}

/**
 * POST /ssl/reissue: needs an active certificate; new validation only when names or method
 * change. At most a few per order and hour or day (reissue-limits.ts), else 429.
 */
export async function reissue(scope: CertificatesScope, resellerId: number, input: ReissueInput): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, input.orderId)
  const product = await productFor(scope.catalogue, order)
  const now = scope.ctx.clock()
  const current = await latestCertificate(db, order.id)
  if (order.status !== 'completed' || !current || parseDate(current.validTill).getTime() <= now.getTime()) {
    throw conflict(
      `could not reissue order ${order.orderNumber}: it has no active certificate (status ${order.status})`
    )
  }
  await assertReissueAllowed(db, order.id, order.orderNumber, now)
  const givenCsr = input.csr !== undefined && input.csr.trim() !== ''
  if (input.privateKeyPem !== undefined && !givenCsr) {
    throw invalid('could not reissue with a new private key: send the CSR made from that key with it')
  }
  if (input.names !== undefined && givenCsr) {
    throw invalid('could not reissue: the names come from the CSR; send either a CSR or the names for the same key')
  }
  const keptKeyCsr =
    input.names !== undefined ? await sameKeyCsr(scope, order, current.certificatePem, input.names) : null
  const newCsr = givenCsr || keptKeyCsr !== null
  const csr = newCsr
    ? await acceptCsr(keptKeyCsr ?? (input.csr as string), product)
    : await acceptCsr((await readRequest(db, order.id)).csr_pem, product)
  const names = namesFor(order, product, csr)
  const subject = subjectFor(order, product, csr, names)
  const keys = scope.keys
  if (input.privateKeyPem !== undefined) {
    if (!keys) throw new ServiceError('unavailable', 'could not keep the new private key: no key store is set up')
    // Held until the certificate for it is stored, then kept in the same transaction (issueNow).
    await keys.stage(resellerId, order.id, input.privateKeyPem, csr.der)
  } else if (newCsr) {
    // A key held for an earlier CSR will never get its certificate now.
    await keys?.discard(order.id)
  }
  try {
    await reissueWith(scope, order, product, input, csr, names, subject, now)
  } catch (err) {
    if (input.privateKeyPem !== undefined) await keys?.discard(order.id)
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
  const db = scope.ctx.store
  const req = await readRequest(db, order.id)
  const oldNames = JSON.parse(req.names) as string[]
  if (product.type === 'code-signing') {
    await storeRequest(db, order, csr, names, subject, 'none', null, 'reissue', now)
    await issueLocked(scope, order.id, 'reissue')
    return
  }
  const fallback = input.dcvMethod ?? (req.dcv_method === 'none' ? 'email' : req.dcv_method)
  const checks = await readChecks(db, order.id)
  const currentMethods = new Map(checks.map((c) => [c.name, c.method]))
  // Without a new method, each name keeps its own; a name new to the order takes the default.
  const methods = methodsFor(order, names, (n) => input.dcvMethod ?? currentMethods.get(n) ?? fallback, input.perName)
  const sameNames = names.length === oldNames.length && names.every((n) => oldNames.includes(n))
  const sameMethods = names.every((n) => currentMethods.get(n) === methods.get(n))
  const perNameApprovers = choiceApprovers(input.perName)
  const stale = await staleChecks(db, order.id, now)
  if (
    sameNames &&
    sameMethods &&
    input.approverEmail === undefined &&
    perNameApprovers.length === 0 &&
    stale.length === 0
  ) {
    await storeRequest(db, order, csr, names, subject, fallback, req.approver_email, 'reissue', now)
    await issueLocked(scope, order.id, 'reissue')
    return
  }
  // An external ACME CA refuses methods it has no challenge for before anything else is said.
  await scope.external?.begin(order.id, names, methods)
  // Without a new approver, names that stay with email keep the mailbox they had.
  const previous = new Map(
    checks.filter((c) => c.method === 'email' && c.approver_email).map((c) => [c.name, c.approver_email as string])
  )
  const approvers = approversFor(order, methods, names, now, {
    approverEmail: input.approverEmail,
    perName: perNameApprovers,
    previous
  })
  await db.tx(async () => {
    await storeRequest(db, order, csr, names, subject, fallback, approvers.get(names[0]) ?? null, 'reissue', now)
    // Names whose validation is still fresh and whose method is unchanged keep it (BR §4.2.1 reuse).
    await resetChecks(db, order.id, names, methods, approvers, now, 'valid-same-method')
    await setOrderStatus(
      db,
      order.id,
      'validation_pending',
      `reissue requested on ${isoDate(now)}: waiting for domain validation`,
      now
    )
    if (anyEmail(methods)) await countPendingApprovals(db, order, now)
  })
  if (anyEmail(methods)) await sendApprovals(scope, order, now)
}

/**
 * A CSR for `names` made from the kept key of the current certificate: the same key for other
 * names (adding or removing SANs). 409 when no such key is kept here (its CSR was made elsewhere).
 */
async function sameKeyCsr(
  scope: CertificatesScope,
  order: Order,
  certificatePem: string,
  names: string[]
): Promise<string> {
  const wanted = [...new Set(names.map(normalName).filter(Boolean))]
  if (wanted.length === 0) throw invalid('could not reissue: give at least one name')
  const pem = scope.keys ? await scope.keys.csrFor(order.id, certificatePem, wanted) : null
  if (!pem) {
    throw conflict(
      `could not reissue order ${order.orderNumber} with the same key for other names: the private key of its certificate is not kept in CertDesk; send a CSR made from that key with the new names`
    )
  }
  return pem
}
