/**
 * Stopping a first validation: the reseller submitted a CSR, the names wait for domain control,
 * and the reseller wants out (a wrong CSR, a name nobody can validate). The reseller API v3.0
 * cancels only `pending` or `processing` orders ("Certificate lifecycle rule"), so the order
 * goes back to `pending`: it takes another CSR, or the reseller cancels it with its refund.
 */
import { conflict } from '../errors'
import { isoDate } from '../time'
import { latestCertificate, readRequest, setOrderStatus } from './records'
import type { CertificatesScope } from './scope'

export async function cancelValidation(scope: CertificatesScope, resellerId: number, orderId: number): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  // Under the order's lock, so a check that is passing right now cannot issue into a cancelled request.
  await scope.lock.run(order.id, async () => {
    const now = scope.ctx.clock()
    await db.tx(async () => {
      const current = await scope.orders.get(resellerId, orderId)
      if (current.status !== 'validation_pending') {
        throw conflict(
          `could not cancel the validation of order ${current.orderNumber}: it is ${current.status}, not validation_pending`
        )
      }
      // A reissue's validation replaced the request of a certificate in use; dropping it would
      // leave the automatic reissues without a CSR. Another method (change-dcv) is the way out there.
      if (
        (await readRequest(db, order.id)).pending_issue !== 'initial' ||
        (await latestCertificate(db, order.id)) !== null
      ) {
        throw conflict(
          `could not cancel the validation of order ${current.orderNumber}: it validates a reissue of an issued certificate; change the validation method instead`
        )
      }
      // The approval codes' hashes go with the checks, so a message already sent approves nothing.
      await db.run('DELETE FROM dcv_checks WHERE order_id = ?', order.id)
      await db.run('DELETE FROM certificate_requests WHERE order_id = ?', order.id)
      // An external CA's order for these names is abandoned; the next CSR starts its own.
      await db.run('DELETE FROM acme_issuer_orders WHERE order_id = ?', order.id)
      await setOrderStatus(db, order.id, 'pending', `validation cancelled on ${isoDate(now)}: waiting for a CSR`, now)
    })
  })
}
