import { Type } from '@sinclair/typebox'
import { Idempotency } from '../../core/orders/idempotency'
import { centsToUsd } from '../../core/billing/money'
import type { CreatedOrder } from '../../core/orders/orders'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { paging } from '../paging'
import { JSON_CONTENT_TYPE, orderPageBytes } from '../order-page'
import { keepOrderPage } from '../read-cache'
import { acmeSummaryJson, createdOrderAnswer, orderJson } from '../present'
import type { ApiRouter } from '../router'
import {
  CancelOrderBody,
  CancelOrderResponse,
  CreatedCertificateOrder,
  CreateOrderBody,
  CreateOrderResponse,
  IdParams,
  OrderListResponse,
  OrderResponse,
  OrderStatusQuery,
  Failures,
  PagingQuery,
  Query
} from '../schemas'
import { IdempotencyHeaders } from './common'

/** An ACME subscription product's answer (its `fulfillment` field), which has a branch of its own. */
const isAcmeAnswer = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { fulfillment?: unknown }).fulfillment === 'acme_subscription'

export function registerOrderRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders',
    {
      operationId: 'listOrders',
      tags: ['Orders'],
      summary: 'List your orders, newest first',
      description:
        'Your orders, one page at a time, optionally only those in one state or whose domain contains a text.',
      querystring: Query({
        status: OrderStatusQuery,
        domain: Type.Optional(
          Type.String({
            maxLength: 253,
            examples: ['example.com'],
            description: 'Only orders whose domain contains this text (any case).'
          })
        ),
        ...PagingQuery
      }),
      response: { 200: OrderListResponse }
    },
    async (request, reply) => {
      const q = request.query
      const filter = { status: q.status, domain: q.domain?.trim() || undefined }
      const page = await service.orders.list(caller(request).id, filter, paging(q))
      // The plain newest-first list, which the reseller's next order can move forward.
      if (!filter.status && !filter.domain) keepOrderPage(request, page)
      // Already the bytes the response schema makes of the page (order-page.ts).
      return reply.header('content-type', JSON_CONTENT_TYPE).send(orderPageBytes(reply, page) as never)
    }
  )

  r.get(
    '/orders/:id',
    {
      operationId: 'getOrder',
      tags: ['Orders'],
      summary: 'Show an order',
      description:
        'One of your orders with its prices, payment, invoice and renewal dates; an ACME subscription order also carries an acme summary (without secrets).',
      params: IdParams('id', 'The order id (order_id in other answers).'),
      response: { 200: OrderResponse }
    },
    async (request) => {
      const order = orderJson(await service.orders.get(caller(request).id, request.params.id))
      // Spec "Order": an ACME subscription order carries an `acme` summary (no secrets in it).
      const sub = await service.acme.summaryForOrder(caller(request).id, request.params.id)
      return { success: true as const, order: sub ? { ...order, acme: acmeSummaryJson(sub) } : order }
    }
  )

  r.post(
    '/orders',
    {
      operationId: 'createOrder',
      tags: ['Orders'],
      summary: 'Place an order, paid from your credit',
      description:
        'Places an order and pays it from your credit balance at once, with its invoice. A certificate order then waits for its CSR (configureSsl); an ACME subscription is set up at once. Nothing is created or charged when the balance is short (402). Send an Idempotency-Key to retry safely.',
      headers: IdempotencyHeaders,
      body: CreateOrderBody,
      response: { 200: CreateOrderResponse, ...Failures }
    },
    async (request, reply) => {
      const reseller = caller(request)
      const b = request.body
      let placed: CreatedOrder | undefined
      let writesBefore = 0
      const answer = await service.idempotency.run(
        reseller.id,
        request.headers['idempotency-key'],
        () => Idempotency.fingerprint('POST', '/orders', b),
        async () => {
          writesBefore = service.ctx.localWrites()
          placed = await service.orders.create(reseller, {
            productId: b.product_id,
            domain: b.domain,
            period: b.period,
            sanCount: b.san_count,
            sanWildcardCount: b.san_wildcard_count,
            contactEmail: b.contact_email
          })
          return createdOrderAnswer(placed)
        }
      )
      if (answer.replayed) reply.header('idempotent-replayed', 'true')
      // Committed: what the server keeps for this reseller follows the write. An answer it could
      // not bring forward is simply rebuilt when next asked for.
      else if (placed) {
        try {
          await request.server.orderPlaced(reply, reseller.id, placed, writesBefore)
        } catch {
          // the order stands; kept answers it could not move stay behind and are rebuilt
        }
      }
      // A certificate order's answer, serialised with its own branch of the response union:
      // fastify's serialiser of a union validates the answer against each branch first to pick
      // one (profiled: a visible share of a POST /orders). The bytes are the same.
      if (answer.statusCode === 200 && !isAcmeAnswer(answer.body)) {
        const bytes = reply.compileSerializationSchema(CreatedCertificateOrder)(answer.body as Record<string, unknown>)
        return reply
          .code(200)
          .header('content-type', JSON_CONTENT_TYPE)
          .send(bytes as never)
      }
      return reply.code(answer.statusCode).send(answer.body as never)
    }
  )

  r.put(
    '/orders/:id',
    {
      operationId: 'cancelOrder',
      tags: ['Orders'],
      summary: 'Cancel an order and refund it',
      description:
        'Cancels a pending or processing order: what was paid goes back to your credit balance as a credit transaction, and the invoice is cancelled. Any other state is 409.',
      params: IdParams('id', 'The order to cancel.'),
      body: CancelOrderBody,
      response: { 200: CancelOrderResponse }
    },
    async (request) => {
      const result = await service.orders.cancel(caller(request).id, request.params.id)
      return {
        success: true as const,
        message:
          `Order ${result.order.orderNumber} cancelled` +
          (result.refunded > 0 ? `; ${centsToUsd(result.refunded).toFixed(2)} USD refunded to credit` : ''),
        order_id: result.order.id,
        status: result.order.status,
        refunded: centsToUsd(result.refunded),
        new_balance: centsToUsd(result.newBalance),
        order: orderJson(result.order)
      }
    }
  )
}
