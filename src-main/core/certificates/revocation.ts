import { conflict, invalid, notFound } from '../errors'
import { recordEvent } from '../events'
import { isoDate, isoTimestamp, parseDate } from '../time'
import { REASON_CODES, REVOCATION_REASONS, type RevocationReason } from './revocation-reasons'
import { latestCertificate, readCertificate, toCert, type CertRow, type StoredCertificate } from './records'
import type { CertificatesScope } from './scope'
import type { Store } from '../store'

/** What revokes at the external CA that issued a certificate (acme-issuer.ts). */
export interface ExternalRevocation {
  /** Revokes the order's certificate at the CA whose directory is `directoryUrl`; throws with the CA's reason. */
  revoke(
    orderId: number,
    names: string[],
    directoryUrl: string,
    certificatePem: string,
    reasonCode: number
  ): Promise<void>
}

/** The CRL to sign again after a revocation of the local CA (local-ca-crl.ts). */
export interface CrlPublisher {
  publish(): Promise<unknown>
}

/** The local CA's name in `certificates.issuer`; an external ACME CA's is `acme:<directory>`. */
const LOCAL_CA = 'local-ca'
const ACME_PREFIX = 'acme:'

/** Which certificate of an order: by id (the app), by serial (the API), else the current one. */
export interface CertificateChoice {
  certificateId?: number
  serial?: string
}

export async function certificateOf(
  db: Store,
  orderId: number,
  which: CertificateChoice
): Promise<StoredCertificate | null> {
  if (which.certificateId === undefined && which.serial === undefined) return await latestCertificate(db, orderId)
  const row = (
    which.certificateId !== undefined
      ? await db.get('SELECT * FROM certificates WHERE id = ? AND order_id = ?', which.certificateId, orderId)
      : await db.get(
          'SELECT * FROM certificates WHERE upper(serial) = upper(?) AND order_id = ?',
          String(which.serial).replace(/:/g, ''),
          orderId
        )
  ) as CertRow | undefined
  return row ? toCert(row) : null
}

export async function revoke(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  input: CertificateChoice & { reason: string }
): Promise<StoredCertificate> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  if (!(REVOCATION_REASONS as readonly string[]).includes(input.reason)) {
    throw invalid(
      `could not revoke: reason ${JSON.stringify(String(input.reason).slice(0, 40))} is not one the Baseline Requirements allow for a subscriber certificate; use ${REVOCATION_REASONS.join(', ')}`
    )
  }
  const reason = input.reason as RevocationReason
  const cert = await certificateOf(db, order.id, input)
  if (!cert) {
    throw input.certificateId === undefined && input.serial === undefined
      ? conflict(`could not revoke a certificate of order ${order.orderNumber}: none has been issued`)
      : notFound(
          `certificate ${JSON.stringify(String(input.serial ?? input.certificateId).slice(0, 64))} of order ${order.orderNumber} not found`
        )
  }
  if (cert.revokedAt) {
    throw conflict(
      `could not revoke certificate ${cert.serial}: it was revoked on ${cert.revokedAt} (${cert.revocationReason})`
    )
  }
  const now = scope.ctx.clock()
  if (parseDate(cert.validTill).getTime() <= now.getTime()) {
    throw conflict(
      `could not revoke certificate ${cert.serial}: it expired on ${cert.validTill} and is no longer trusted`
    )
  }
  const code = REASON_CODES[reason]
  if (cert.issuer.startsWith(ACME_PREFIX)) {
    if (!scope.revoker) throw conflict(`could not revoke certificate ${cert.serial}: no ACME CA is set up`)
    await scope.revoker.revoke(order.id, cert.names, cert.issuer.slice(ACME_PREFIX.length), cert.certificatePem, code)
  } else if (cert.issuer !== LOCAL_CA) {
    throw conflict(`could not revoke certificate ${cert.serial}: it was issued by ${cert.issuer}, not by CertDesk`)
  }
  const current = (await latestCertificate(db, order.id))?.id === cert.id
  const at = isoTimestamp(now)
  const stopped = `not deployed: certificate ${cert.serial} was revoked on ${at} (${reason})`
  await db.tx(async () => {
    await db.run(
      'UPDATE certificates SET revoked_at = ?, revocation_reason = ? WHERE id = ? AND revoked_at IS NULL',
      at,
      code,
      cert.id
    )
    // BR §4.9: a revoked certificate must not be installed anywhere again.
    await db.run(
      `UPDATE deploy_runs SET status = 'superseded', next_attempt_at = NULL, last_error = ?, updated_at = ?
        WHERE order_id = ? AND serial = ? AND status = 'pending'`,
      stopped,
      at,
      order.id,
      cert.serial
    )
    if (current) {
      // No automatic renewal of it either: an external CA's renewal window (RFC 9773, ari.ts)
      // would renew it with the same CSR, so the same key. The next certificate brings a new one.
      await db.run('DELETE FROM ari_windows WHERE order_id = ?', order.id)
      await db.run(
        'UPDATE orders SET next_reissue_at = NULL, status_note = ?, updated_at = ? WHERE id = ?',
        `certificate ${cert.serial} revoked on ${isoDate(now)} (${reason}); reissue to replace it`,
        at,
        order.id
      )
    }
    await recordEvent(db, now, {
      type: 'certificate.revoked',
      resellerId,
      orderId: order.id,
      message: `Certificate ${cert.serial} of ${order.orderNumber} revoked (${reason})${cert.issuer === LOCAL_CA ? '; the CRL lists it' : ' at the ACME CA'}`,
      data: { serial: cert.serial, reason, reason_code: code, issuer: cert.issuer }
    })
  })
  // The CRL says so at once; a failure to sign it now is caught up by the next request or pass.
  if (cert.issuer === LOCAL_CA) await scope.crl?.publish().catch(() => undefined)
  return await readCertificate(db, cert.id)
}
