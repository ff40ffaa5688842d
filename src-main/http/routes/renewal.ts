/**
 * GET /orders/{id}/renewal: how an order renews without the customer. The renewal window and
 * its source (RFC 9773 renewal information, or 14 days before the certificate ends), each
 * name's `_acme-challenge` CNAME into the delegated zone and whether it is in place, and the
 * dns-persist-01 records for the external ACME CA. Beyond the spec (reseller API v3.0 has no
 * renewal resource); it follows the spec's envelope, and its DNS looks change nothing.
 */
import { orderRenewalView } from '../../core/ari-order-view'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { IdParams, RenewalResponse } from '../schemas'

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
      const order = service.orders.get(caller(request).id, request.params.order_id)
      const renewal = await orderRenewalView(service.ctx, service.settings, service.acmeIssuer, order.id)
      return { success: true as const, renewal }
    }
  )
}
