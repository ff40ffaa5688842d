/**
 * GET /orders/{id}/renewal: how an order renews without the customer. The renewal window and
 * its source (RFC 9773 renewal information, or 14 days before the certificate ends), each
 * name's `_acme-challenge` CNAME into the delegated zone and whether it is in place, the
 * dns-persist-01 records for the external ACME CA, and whether renewals run with nobody.
 * POST switches the method the order's renewals use (to dns, which can renew with nobody).
 * Beyond the spec (reseller API v3.0 has no renewal resource); it follows the spec's envelope,
 * and the GET's DNS looks change nothing.
 */
import { orderRenewalView } from '../../core/ari-order-view'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { Type } from '@sinclair/typebox'
import { IdParam, ok, RenewalJson, StringEnum } from '../schemas'
import { ErrorRef } from './common'

export function registerRenewalRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders/:order_id/renewal',
    {
      summary: 'Renewal window (RFC 9773), DNS delegation and dns-persist-01 records of an order',
      params: IdParam('order_id'),
      response: { 200: ok({ renewal: RenewalJson }), ...ErrorRef }
    },
    async (request) => {
      // Another reseller's order is a 404 (orders.get), never a view of it.
      const order = service.orders.get(caller(request).id, request.params.order_id)
      const renewal = await orderRenewalView(service.ctx, service.settings, service.acmeIssuer, order.id)
      return { success: true as const, renewal }
    }
  )
  r.post(
    '/orders/:order_id/renewal',
    {
      summary: 'Switch how the order renews at the external ACME CA (dns renews with nobody once set up)',
      params: IdParam('order_id'),
      body: Type.Object(
        {
          dcv_method: StringEnum(['dns', 'http'] as const, 'dns: delegated DNS or dns-persist-01; http: http-01')
        },
        { additionalProperties: false }
      ),
      response: { 200: ok({ renewal: RenewalJson }), ...ErrorRef }
    },
    async (request) => {
      const reseller = caller(request).id
      await service.certificates.switchRenewalMethod(reseller, request.params.order_id, request.body.dcv_method)
      const renewal = await orderRenewalView(service.ctx, service.settings, service.acmeIssuer, request.params.order_id)
      return { success: true as const, renewal }
    }
  )
}
