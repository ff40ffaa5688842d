/**
 * How an order's renewals at the external ACME CA prove control: switching the order to DNS
 * (delegated dns-01, RFC 8555 §8.4, or dns-persist-01, draft-ietf-acme-dns-persist), the methods
 * that renew with nobody, or back to http-01. While the order waits for validation this is
 * POST /ssl/change-dcv; once it holds a certificate, only the method its next renewals use
 * changes, and the certificate it has stays as it is.
 */
import type { DcvMethod } from '../dcv/dcv'
import { conflict, invalid } from '../errors'
import { readRequest, touchOrder } from './records'
import { changeDcv } from './requests'
import type { CertificatesScope } from './scope'

export async function switchRenewalMethod(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  method: DcvMethod
): Promise<void> {
  const db = scope.ctx.store
  // Another reseller's order is a 404 before anything else is said about it.
  const order = await scope.orders.get(resellerId, orderId)
  if (method !== 'http' && method !== 'dns')
    throw invalid(
      `could not change how order ${order.orderNumber} renews: an ACME CA renews over http (http-01) or dns (dns-01, delegated DNS, dns-persist-01), not ${method}`
    )
  if (!(await scope.external?.validatesRenewals()))
    throw conflict(
      `could not change how order ${order.orderNumber} renews: no external ACME CA issues its certificates; the local CA checks each reissue itself (use POST /ssl/reissue with dcv_method)`
    )
  if (order.status === 'validation_pending') {
    await changeDcv(scope, resellerId, orderId, method)
    return
  }
  if (order.status !== 'completed')
    throw conflict(
      `could not change how order ${order.orderNumber} renews: it is ${order.status}; it needs a certificate first (POST /ssl/configure)`
    )
  const req = await readRequest(db, order.id)
  if (req.dcv_method === 'none')
    throw conflict(`could not change how order ${order.orderNumber} renews: code signing has no names to validate`)
  const wild = (JSON.parse(req.names) as string[]).find((n) => n.startsWith('*.'))
  if (wild && method === 'http')
    throw invalid(`http validation cannot validate the wildcard name ${wild} (RFC 8555 §7.1.3); use dns`)
  await db.tx(async () => {
    await db.run(
      'UPDATE certificate_requests SET dcv_method = ?, approver_email = NULL WHERE order_id = ?',
      method,
      order.id
    )
    await touchOrder(db, order.id, scope.ctx.clock())
  })
}
