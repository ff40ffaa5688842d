/**
 * Issuance: signing a validated request and storing the certificate, one at a time per order,
 * and the two ways the validation of an order leads to it: a status poll or approval that
 * finds every name valid (`advance`), and the scheduler's automatic reissue (`autoReissue`).
 */
import { crashPoint } from '../crash-points'
import { constructedEmailAllowed, dcvReuseDays } from './cab-policy'
import { autoReissues } from '../billing/catalogue'
import { assertAcceptableCsr, decodeCsr } from './csr'
import { conflict, ServiceError } from '../errors'
import { RenewalNeedsCustomer, type CertificateProfile } from './issuer'
import { nextReissueAfter, validityWindow } from './lifecycle'
import { isoDate, isoTimestamp, parseDate } from '../time'
import { productFor } from './csr-policy'
import { sendApprovals } from './email-approval'
import {
  orderById,
  orderStatus,
  readCertificate,
  readRequest,
  setOrderStatus,
  type IssueReason,
  type StoredCertificate
} from './records'
import type { CertificatesScope } from './scope'
import { recheckStale, resetChecks, runChecks, staleChecks } from './validation'

/**
 * Runs the checks of a validation_pending (or stuck processing) order and issues when all
 * passed. Returns the certificate when one was issued.
 */
export function advance(scope: CertificatesScope, orderId: number): Promise<StoredCertificate | null> {
  const db = scope.ctx.store
  return scope.lock.run(orderId, async () => {
    const status = await orderStatus(db, orderId)
    if (status === 'validation_pending') {
      const allValid = await runChecks(scope, orderId)
      if (!allValid) return null
      await setOrderStatus(db, orderId, 'processing', null, scope.ctx.clock())
    } else if (status !== 'processing') {
      return null
    }
    return issueNow(scope, orderId, (await readRequest(db, orderId)).pending_issue ?? 'initial')
  })
}

/**
 * The automatic reissue of a due order: re-checks names whose validation is older than the
 * reuse period of today (BR §4.2.1); a failed re-check moves the order to validation_pending
 * and says why. Returns what happened. While an external CA issues, it validates the renewal
 * itself (`renewAtCa`): the local checks and their records never apply to it.
 */
export function autoReissue(
  scope: CertificatesScope,
  orderId: number
): Promise<{ issued: StoredCertificate | null; validationNeeded: string | null }> {
  const db = scope.ctx.store
  return scope.lock.run(orderId, async () => {
    const now = scope.ctx.clock()
    if (await scope.external?.validatesRenewals()) return renewAtCa(scope, orderId, now)
    const stale = await staleChecks(db, orderId, now)
    const failures = await recheckStale(scope, orderId, stale, now)
    if (failures.length > 0) {
      const note = `automatic reissue on ${isoDate(now)} needs domain validation again (the previous check is older than ${dcvReuseDays(now)} days): ${failures.join('; ')}`
      await db.run(`UPDATE certificate_requests SET pending_issue = 'auto_reissue' WHERE order_id = ?`, orderId)
      await setOrderStatus(db, orderId, 'validation_pending', note, now)
      if (stale.some((c) => c.method === 'email') && constructedEmailAllowed(now)) {
        await sendApprovals(scope, await orderById(scope, orderId), now)
      }
      return { issued: null, validationNeeded: note }
    }
    return { issued: await issueNow(scope, orderId, 'auto_reissue'), validationNeeded: null }
  })
}

/**
 * A renewal at the external CA: issued when the CA's authorizations are still valid or a
 * dns-persist-01 record or delegated CNAME answers them; otherwise the CA order waits for the
 * customer with the CA's own instructions, and the order moves to validation_pending saying so.
 */
async function renewAtCa(
  scope: CertificatesScope,
  orderId: number,
  now: Date
): Promise<{ issued: StoredCertificate | null; validationNeeded: string | null }> {
  const db = scope.ctx.store
  try {
    return { issued: await issueNow(scope, orderId, 'auto_reissue'), validationNeeded: null }
  } catch (err) {
    if (!(err instanceof RenewalNeedsCustomer)) throw err
    const note = `automatic renewal on ${isoDate(now)} needs the customer: ${err.message}`
    const names = JSON.parse((await readRequest(db, orderId)).names) as string[]
    await db.tx(async () => {
      await db.run(
        `UPDATE certificate_requests SET pending_issue = 'auto_reissue', dcv_method = ?, approver_email = NULL WHERE order_id = ?`,
        err.method,
        orderId
      )
      await resetChecks(db, orderId, names, new Map(names.map((n) => [n, err.method])), new Map(), now, 'none')
      await setOrderStatus(db, orderId, 'validation_pending', note, now)
    })
    return { issued: null, validationNeeded: note }
  }
}

/** Issues under the order's lock (configure and reissue when nothing is left to validate). */
export function issueLocked(
  scope: CertificatesScope,
  orderId: number,
  reason: IssueReason
): Promise<StoredCertificate> {
  return scope.lock.run(orderId, () => issueNow(scope, orderId, reason))
}

/** Signs and stores one certificate, and moves the order to completed, in one transaction. */
async function issueNow(scope: CertificatesScope, orderId: number, reason: IssueReason): Promise<StoredCertificate> {
  const db = scope.ctx.store
  const order = await orderById(scope, orderId)
  const product = await productFor(scope.catalogue, order)
  const req = await readRequest(db, orderId)
  const now = scope.ctx.clock()
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
    issued = await scope.issuer.issue({
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
    await db.run(
      'UPDATE orders SET status_note = ?, updated_at = ? WHERE id = ?',
      `could not issue certificate: ${why}`,
      isoTimestamp(now),
      orderId
    )
    throw err instanceof ServiceError ? err : new ServiceError('unavailable', `could not issue certificate: ${why}`)
  }
  // A crash here loses only the signature: the order stays processing and the next pass issues.
  crashPoint('issuance:signed')
  const nextReissue = nextReissueAfter(issued, end, autoReissues(product))
  const id = await db.tx(async () => {
    const r = await db.insert(
      `INSERT INTO certificates (order_id, serial, issuer, certificate_pem, chain_pem, names, valid_from, valid_till, reason, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    await db.run(
      `UPDATE orders SET status = 'completed', status_note = NULL, cert_valid_from = ?, cert_valid_till = ?, next_reissue_at = ?,
           reissue_count = reissue_count + ?, updated_at = ? WHERE id = ?`,
      isoDate(issued.validFrom),
      isoDate(issued.validTill),
      nextReissue ? isoDate(nextReissue) : null,
      reason === 'auto_reissue' ? 1 : 0,
      isoTimestamp(now),
      orderId
    )
    await db.run('UPDATE certificate_requests SET pending_issue = NULL WHERE order_id = ?', orderId)
    // The key generated for this certificate is kept with it before anything (a deploy) reads it.
    await scope.keys?.promote(orderId, issued.certificatePem)
    return r
  })
  await scope.onStored?.({ orderId, reason, certificatePem: issued.certificatePem, chainPem: issued.chainPem })
  return await readCertificate(db, id)
}
