/** Invoices, the credit ledger and the account (reseller API v3.0, "Invoice", "Credit transaction", "Account", "Statistics"). */
import { Type } from '@sinclair/typebox'
import { INVOICE_STATUSES, ORDER_STATUSES } from '../../../src-shared/constants'
import { Day, Id, Money, Nullable, ok, Pagination, StringEnum, Timestamp } from './kit'

export const InvoiceStatus = StringEnum(
  INVOICE_STATUSES,
  'unpaid → sent (emailed) → paid; cancelled when its order is cancelled'
)

export const InvoiceJson = Type.Object(
  {
    id: Id('the invoice id'),
    invoice_number: Type.String({ pattern: '^INV-\\d{4}-\\d{6,}$' }),
    order_id: Id('the order it bills'),
    order_number: Type.String(),
    domain: Type.String(),
    product: Type.String(),
    total: Money(),
    currency: Type.Literal('USD'),
    status: InvoiceStatus,
    due_date: Day(),
    created_at: Timestamp(),
    paid_at: Nullable(Timestamp()),
    sent_at: Nullable(Timestamp()),
    cancelled_at: Nullable(Timestamp())
  },
  { title: 'Invoice' }
)

export const TransactionJson = Type.Object(
  {
    id: Id('the transaction id'),
    amount: Money('negative for a debit, positive for a credit, USD'),
    type: StringEnum(['debit', 'credit'] as const),
    description: Type.String(),
    balance_after: Money('the credit balance after this transaction'),
    order_id: Nullable(Id('the order it belongs to; null for a top-up')),
    created_at: Timestamp()
  },
  { title: 'CreditTransaction' }
)

export const InvoiceListResponse = ok(
  { invoices: Type.Array(InvoiceJson), pagination: Pagination },
  { title: 'InvoiceListResponse' }
)
export const InvoiceResponse = ok({ invoice: InvoiceJson }, { title: 'InvoiceResponse' })

export const CreditsResponse = ok(
  {
    balance: Money('the credit balance now'),
    currency: Type.Literal('USD'),
    transactions: Type.Array(TransactionJson),
    pagination: Pagination
  },
  { title: 'CreditsResponse' }
)

export const PayOrderBody = Type.Object(
  { order_id: Id('An unpaid order (one placed on invoice in the desktop app).') },
  { additionalProperties: false, title: 'PayOrderRequest' }
)

export const PaymentResponse = ok(
  {
    order_id: Id('the order paid'),
    amount_paid: Money('the amount taken from the credit balance'),
    new_balance: Money('the credit balance after the payment')
  },
  { title: 'PaymentResponse' }
)

export const BalanceResponse = ok(
  {
    balance: Money('the credit balance now'),
    currency: Type.Literal('USD'),
    transactions: Type.Array(TransactionJson, { maxItems: 10, description: 'the last 10 transactions, newest first' })
  },
  { title: 'BalanceResponse' }
)

export const ResellerJson = Type.Object(
  {
    id: Id('the reseller account'),
    name: Type.String(),
    email: Type.String(),
    company: Type.String(),
    discount_rate: Type.Number({ minimum: 0, maximum: 100, description: 'percent off every order' }),
    credit_balance: Money(),
    group_id: Nullable(Id('the reseller group; null when none is set (catalogue and ordering are then 403)')),
    group_name: Nullable(Type.String()),
    api_access: Type.Boolean(),
    created_at: Timestamp(),
    stats: Type.Object({ order_count: Type.Integer({ minimum: 0 }), total_revenue: Money() })
  },
  { title: 'Reseller' }
)

export const AccountResponse = ok({ reseller: ResellerJson }, { title: 'AccountResponse' })

export const StatsJson = Type.Object(
  {
    total_orders: Type.Integer({ minimum: 0 }),
    active_orders: Type.Integer({ minimum: 0, description: 'completed orders' }),
    pending_orders: Type.Integer({
      minimum: 0,
      description: 'orders pending, pending_configuration, validation_pending or processing'
    }),
    total_revenue: Money('paid orders; a refunded order drops out'),
    monthly_revenue: Money('the current calendar month, UTC'),
    credit_balance: Money()
  },
  { title: 'Stats' }
)

export const ChartsJson = Type.Object(
  {
    daily_sales: Type.Array(Type.Object({ date: Day(), orders: Type.Integer({ minimum: 0 }), revenue: Money() }), {
      description: 'the last 30 days, today included'
    }),
    brand_distribution: Type.Array(Type.Object({ brand: Type.String(), count: Type.Integer({ minimum: 0 }) })),
    status_distribution: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: `orders by status (${ORDER_STATUSES.join(', ')}); completed, pending, processing and cancelled always appear, others when they have orders`
    })
  },
  { title: 'Charts' }
)

/** GET /stats; one object, so that an answer made outside the route is serialised as the route does. */
export const StatsResponse = ok({ stats: StatsJson, charts: ChartsJson }, { title: 'StatsResponse' })
