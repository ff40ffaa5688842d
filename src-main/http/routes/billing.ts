import { Type } from '@sinclair/typebox'
import { Idempotency } from '../../core/orders/idempotency'
import { INVOICE_STATUSES } from '../../core/billing/invoices'
import { centsToUsd } from '../../core/billing/money'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { paging } from '../paging'
import { invoiceJson, paginationJson, transactionJson } from '../present'
import type { ApiRouter } from '../router'
import {
  BalanceResponse,
  CreditsResponse,
  Failures,
  IdParams,
  InvoiceListResponse,
  InvoiceResponse,
  PagingQuery,
  PaymentResponse,
  PayOrderBody,
  Query,
  StringEnum
} from '../schemas'
import { IdempotencyHeaders } from './common'

/** Spec, GET /balance: the last 10 transactions. */
export const BALANCE_TRANSACTIONS = 10

export function registerBillingRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/invoices',
    {
      operationId: 'listInvoices',
      tags: ['Invoices'],
      summary: 'List your invoices, newest first',
      description: 'Your invoices, one page at a time, optionally only those in one state.',
      querystring: Query({
        status: Type.Optional(StringEnum(INVOICE_STATUSES, 'Only invoices in this state.')),
        ...PagingQuery
      }),
      response: { 200: InvoiceListResponse }
    },
    async (request) => {
      const page = await service.invoices.list(
        caller(request).id,
        { status: request.query.status },
        paging(request.query)
      )
      return { success: true as const, invoices: page.items.map(invoiceJson), pagination: paginationJson(page) }
    }
  )

  r.get(
    '/invoices/:id',
    {
      operationId: 'getInvoice',
      tags: ['Invoices'],
      summary: 'Show an invoice',
      description: 'One of your invoices with its order, total, state and dates.',
      params: IdParams('id', 'The invoice id, as listInvoices shows it.'),
      response: { 200: InvoiceResponse }
    },
    async (request) => ({
      success: true as const,
      invoice: invoiceJson(await service.invoices.get(caller(request).id, request.params.id))
    })
  )

  r.get(
    '/credits',
    {
      operationId: 'listCreditTransactions',
      tags: ['Credits'],
      summary: 'Show your balance and credit history',
      description: 'Your credit balance and every debit and credit on it, newest first, one page at a time.',
      querystring: Query({ ...PagingQuery }),
      response: { 200: CreditsResponse }
    },
    async (request) => {
      const id = caller(request).id
      const page = await service.ledger.transactions(id, paging(request.query))
      return {
        success: true as const,
        balance: centsToUsd(await service.ledger.balance(id)),
        currency: 'USD' as const,
        transactions: page.items.map(transactionJson),
        pagination: paginationJson(page)
      }
    }
  )

  r.post(
    '/credits',
    {
      operationId: 'payOrderFromCredit',
      tags: ['Credits'],
      summary: 'Pay an unpaid order from your credit',
      description:
        'Pays an order placed on invoice in the desktop app from your credit balance. 402 when the balance is short, 409 when the order is not unpaid. Send an Idempotency-Key to retry safely.',
      headers: IdempotencyHeaders,
      body: PayOrderBody,
      response: { 200: PaymentResponse, ...Failures }
    },
    async (request, reply) => {
      const reseller = caller(request)
      const orderId = request.body.order_id
      const answer = await service.idempotency.run(
        reseller.id,
        request.headers['idempotency-key'],
        () => Idempotency.fingerprint('POST', '/credits', request.body),
        async () => {
          const paid = await service.orders.payFromCredit(reseller.id, orderId)
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
      return reply.code(answer.statusCode).send(answer.body as never)
    }
  )

  r.get(
    '/balance',
    {
      operationId: 'getBalance',
      tags: ['Credits'],
      summary: 'Show your balance and the last 10 transactions',
      description: 'Your credit balance in USD and the last 10 debits and credits, newest first.',
      response: { 200: BalanceResponse }
    },
    async (request) => {
      const id = caller(request).id
      const page = await service.ledger.transactions(id, { limit: BALANCE_TRANSACTIONS, offset: 0 })
      return {
        success: true as const,
        balance: centsToUsd(await service.ledger.balance(id)),
        currency: 'USD' as const,
        transactions: page.items.map(transactionJson)
      }
    }
  )
}
