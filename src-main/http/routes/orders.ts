import { Type } from '@sinclair/typebox'
import { Idempotency } from '../../core/idempotency'
import { centsToUsd } from '../../core/money'
import { ORDER_STATUSES, type CreatedOrder } from '../../core/orders'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { paging } from '../paging'
import { JSON_CONTENT_TYPE, orderPageBytes } from '../order-page'
import { keepOrderPage } from '../read-cache'
import { acmeSummaryJson, createdOrderAnswer, orderJson } from '../present'
import type { ApiRouter } from '../router'
import {
  AcmeCreateResponse,
  CreateOrderResponse,
  IdParam,
  Money,
  ok,
  OrderJson,
  Pagination,
  PagingQuery,
  StringEnum
} from '../schemas'
import { ErrorRef, IdempotencyHeaders } from './common'

export const CreateOrderBody = Type.Object(
  {
    product_id: Type.Integer({ minimum: 1 }),
    domain: Type.Optional(Type.String({ maxLength: 253 })),
    period: Type.Optional(Type.Integer({ description: 'months, a multiple of 12; default 12' })),
    san_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    san_wildcard_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    contact_email: Type.Optional(Type.String({ maxLength: 254 }))
  },
  { additionalProperties: false }
)

/** An ACME subscription product's answer (its `fulfillment` field), which has a branch of its own. */
const isAcmeAnswer = (body: unknown): boolean => typeof body === 'object' && body !== null && 'fulfillment' in body

export function registerOrderRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders',
    {
      summary: 'Order list, newest first',
      querystring: Type.Object({
        status: Type.Optional(StringEnum(ORDER_STATUSES)),
        domain: Type.Optional(Type.String({ maxLength: 253 })),
        ...PagingQuery
      }),
      response: { 200: ok({ orders: Type.Array(OrderJson), pagination: Pagination }), ...ErrorRef }
    },
    async (request, reply) => {
      const q = request.query
      const filter = { status: q.status, domain: q.domain?.trim() || undefined }
      const page = service.orders.list(caller(request).id, filter, paging(q))
      // The plain newest-first list, which the reseller's next order can move forward.
      if (!filter.status && !filter.domain) keepOrderPage(request, page)
      // Already the bytes the response schema makes of the page (order-page.ts).
      return reply.header('content-type', JSON_CONTENT_TYPE).send(orderPageBytes(reply, page) as never)
    }
  )

  r.get(
    '/orders/:id',
    { summary: 'Order detail', params: IdParam('id'), response: { 200: ok({ order: OrderJson }), ...ErrorRef } },
    async (request) => {
      const order = orderJson(service.orders.get(caller(request).id, request.params.id))
      // Spec "Order": an ACME subscription order carries an `acme` summary (no secrets in it).
      const sub = service.acme.summaryForOrder(caller(request).id, request.params.id)
      return { success: true as const, order: sub ? { ...order, acme: acmeSummaryJson(sub) } : order }
    }
  )

  r.post(
    '/orders',
    {
      summary: 'Create an order, paid from credit at once (402 when the balance is short)',
      headers: IdempotencyHeaders,
      body: CreateOrderBody,
      response: { 200: Type.Union([CreateOrderResponse, AcmeCreateResponse]), ...ErrorRef }
    },
    async (request, reply) => {
      const reseller = caller(request)
      const b = request.body
      let placed: CreatedOrder | undefined
      let writesBefore = 0
      const answer = service.idempotency.run(
        reseller.id,
        request.headers['idempotency-key'],
        () => Idempotency.fingerprint('POST', '/orders', b),
        () => {
          writesBefore = service.ctx.localWrites()
          placed = service.orders.create(reseller, {
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
          request.server.orderPlaced(reply, reseller.id, placed, writesBefore)
        } catch {
          // the order stands; kept answers it could not move stay behind and are rebuilt
        }
      }
      // A TLS order's answer, serialised with its own branch of the response union: fastify's
      // serialiser of a union validates the answer against each branch first to pick one
      // (profiled: a visible share of a POST /orders). The bytes are the same.
      if (answer.statusCode === 200 && !isAcmeAnswer(answer.body)) {
        const bytes = reply.compileSerializationSchema(CreateOrderResponse)(answer.body as Record<string, unknown>)
        return reply
          .code(200)
          .header('content-type', JSON_CONTENT_TYPE)
          .send(bytes as never)
      }
      return reply.code(answer.statusCode).send(answer.body)
    }
  )

  r.put(
    '/orders/:id',
    {
      summary: 'Order action: cancel (pending or processing only; refunds what was paid)',
      params: IdParam('id'),
      body: Type.Object({ action: StringEnum(['cancel'] as const) }, { additionalProperties: false }),
      response: {
        200: ok({
          order_id: Type.Integer(),
          status: Type.String(),
          refunded: Money,
          new_balance: Money,
          order: OrderJson
        }),
        ...ErrorRef
      }
    },
    async (request) => {
      const result = service.orders.cancel(caller(request).id, request.params.id)
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
