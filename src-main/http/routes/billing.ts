import { Type } from '@sinclair/typebox'
import { Idempotency } from '../../core/idempotency'
import { INVOICE_STATUSES } from '../../core/invoices'
import { centsToUsd } from '../../core/money'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { paging } from '../paging'
import { invoiceJson, paginationJson, transactionJson } from '../present'
import type { ApiRouter } from '../router'
import { IdParam, InvoiceJson, Money, ok, Pagination, PagingQuery, StringEnum, TransactionJson } from '../schemas'
import { ErrorRef, IdempotencyHeaders } from './common'

/** Spec, GET /balance: the last 10 transactions. */
export const BALANCE_TRANSACTIONS = 10

export function registerBillingRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/invoices',
    {
      summary: 'Invoice list, newest first',
      querystring: Type.Object({ status: Type.Optional(StringEnum(INVOICE_STATUSES)), ...PagingQuery }),
      response: { 200: ok({ invoices: Type.Array(InvoiceJson), pagination: Pagination }), ...ErrorRef }
    },
    async (request) => {
      const page = service.invoices.list(caller(request).id, { status: request.query.status }, paging(request.query))
      return { success: true as const, invoices: page.items.map(invoiceJson), pagination: paginationJson(page) }
    }
  )

  r.get(
    '/invoices/:id',
    { summary: 'Invoice detail', params: IdParam('id'), response: { 200: ok({ invoice: InvoiceJson }), ...ErrorRef } },
    async (request) => ({
      success: true as const,
      invoice: invoiceJson(service.invoices.get(caller(request).id, request.params.id))
    })
  )

  r.get(
    '/credits',
    {
      summary: 'Credit balance and transaction history, newest first',
      querystring: Type.Object({ ...PagingQuery }),
      response: {
        200: ok({
          balance: Money,
          currency: Type.Literal('USD'),
          transactions: Type.Array(TransactionJson),
          pagination: Pagination
        }),
        ...ErrorRef
      }
    },
    async (request) => {
      const id = caller(request).id
      const page = service.ledger.transactions(id, paging(request.query))
      return {
        success: true as const,
        balance: centsToUsd(service.ledger.balance(id)),
        currency: 'USD' as const,
        transactions: page.items.map(transactionJson),
        pagination: paginationJson(page)
      }
    }
  )

  r.post(
    '/credits',
    {
      summary: 'Pay an unpaid order from credit (402 when the balance is short)',
      headers: IdempotencyHeaders,
      body: Type.Object({ order_id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
      response: {
        200: ok({ order_id: Type.Integer(), amount_paid: Money, new_balance: Money }),
        ...ErrorRef
      }
    },
    async (request, reply) => {
      const reseller = caller(request)
      const orderId = request.body.order_id
      const answer = service.idempotency.run(
        reseller.id,
        request.headers['idempotency-key'],
        () => Idempotency.fingerprint('POST', '/credits', request.body),
        () => {
          const paid = service.orders.payFromCredit(reseller.id, orderId)
          return {
            statusCode: 200,
            body: {
              success: true,
              message: `Order ${paid.order.orderNumber} paid from credit`,
              order_id: paid.order.id,
              amount_paid: centsToUsd(paid.amountPaid),
              new_balance: centsToUsd(paid.newBalance)
            }
          }
        }
      )
      if (answer.replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(answer.statusCode).send(answer.body)
    }
  )

  r.get(
    '/balance',
    {
      summary: 'Balance and the last 10 transactions',
      response: {
        200: ok({ balance: Money, currency: Type.Literal('USD'), transactions: Type.Array(TransactionJson) }),
        ...ErrorRef
      }
    },
    async (request) => {
      const id = caller(request).id
      const page = service.ledger.transactions(id, { limit: BALANCE_TRANSACTIONS, offset: 0 })
      return {
        success: true as const,
        balance: centsToUsd(service.ledger.balance(id)),
        currency: 'USD' as const,
        transactions: page.items.map(transactionJson)
      }
    }
  )
}
