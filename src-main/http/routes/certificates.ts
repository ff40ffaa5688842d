/**
 * The certificate half of the spec (SSL configure/validation/reissue, CSR decode, download).
 * Until issuance lands these answer 501 in the envelope, after the same checks a real answer
 * would make (the order must exist and be the caller's), never with a fake success.
 */
import { Type } from '@sinclair/typebox'
import { notImplemented } from '../../core/errors'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { IdParam } from '../schemas'
import { ErrorRef } from './common'

const NOT_YET = 'certificate issuance is not available yet in this version of CertDesk'

export function registerCertificateRoutes(r: ApiRouter, service: Service): void {
  const byOrder = (resellerId: number, orderId: number): never => {
    service.orders.get(resellerId, orderId)
    throw notImplemented(NOT_YET)
  }
  const OrderBody = Type.Object({ order_id: Type.Integer({ minimum: 1 }) }, { additionalProperties: true })
  for (const path of ['/ssl/configure', '/ssl/resend-validation', '/ssl/change-dcv', '/ssl/reissue']) {
    r.post(path, { body: OrderBody, response: { ...ErrorRef } }, async (request) =>
      byOrder(caller(request).id, request.body.order_id)
    )
  }
  r.post('/csr/decode', { body: Type.Object({ csr: Type.String() }), response: { ...ErrorRef } }, async () => {
    throw notImplemented(NOT_YET)
  })
  r.get('/ssl/:order_id', { params: IdParam('order_id'), response: { ...ErrorRef } }, async (request) =>
    byOrder(caller(request).id, request.params.order_id)
  )
  r.get('/certificate/:order_id', { params: IdParam('order_id'), response: { ...ErrorRef } }, async (request) =>
    byOrder(caller(request).id, request.params.order_id)
  )
  r.get(
    '/certificate/:order_id/download',
    { params: IdParam('order_id'), response: { ...ErrorRef } },
    async (request) => byOrder(caller(request).id, request.params.order_id)
  )
}
