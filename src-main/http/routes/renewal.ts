/**
 * GET /orders/{id}/renewal: how an order renews without the customer. The renewal window and
 * its source (RFC 9773 renewal information, or 14 days before the certificate ends), each
 * name's `_acme-challenge` CNAME into the delegated zone and whether it is in place, the
 * dns-persist-01 records for the external ACME CA, and whether renewals run with nobody.
 * POST switches the method the order's renewals use (to dns, which can renew with nobody).
 * Beyond the spec (reseller API v3.0 has no renewal resource); it follows the spec's envelope,
 * and the GET's DNS looks change nothing.
 */
import { orderRenewalView } from '../../core/acme-client/ari-order-view'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { IdParams, RenewalMethodBody, RenewalResponse } from '../schemas'

export function registerRenewalRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders/:order_id/renewal',
    {
      operationId: 'getOrderRenewal',
      tags: ['Renewal'],
      summary: 'Show how an order renews without the customer',
      description:
        "The renewal window and where it comes from (RFC 9773 renewal information, or 14 days before the certificate ends), each name's _acme-challenge CNAME into the zone delegated to CertDesk and whether it is in place, and the dns-persist-01 records. The DNS looks change nothing.",
      params: IdParams('order_id', 'The order.'),
      response: { 200: RenewalResponse }
    },
    async (request) => {
      // Another reseller's order is a 404 (orders.get), never a view of it.
      const order = await service.orders.get(caller(request).id, request.params.order_id)
      const renewal = await orderRenewalView(service.ctx, service.settings, service.acmeIssuer, order.id)
      return { success: true as const, renewal }
    }
  )
  r.post(
    '/orders/:order_id/renewal',
    {
      operationId: 'switchOrderRenewalMethod',
      tags: ['Renewal'],
      summary: 'Switch how an order renews at the external ACME CA',
      description:
        "Changes the method the order's renewals validate with: dns (delegated DNS or dns-persist-01, which renew with nobody once the customer has set the record) or http (http-01, a new file at every renewal). While the order waits for validation this is POST /ssl/change-dcv; once it holds a certificate, that certificate stays. Answers the renewal view.",
      params: IdParams('order_id', 'The order.'),
      body: RenewalMethodBody,
      response: { 200: RenewalResponse }
    },
    async (request) => {
      const reseller = caller(request).id
      await service.certificates.switchRenewalMethod(reseller, request.params.order_id, request.body.dcv_method)
      const renewal = await orderRenewalView(service.ctx, service.settings, service.acmeIssuer, request.params.order_id)
      return { success: true as const, renewal }
    }
  )
}
