/** Orders (reseller API v3.0, "Order", "POST /orders", "PUT /orders/{id}"). */
import { Type } from '@sinclair/typebox'
import {
  INVOICE_STATUSES,
  ORDER_STATUSES,
  PAYMENT_STATUSES,
  PRODUCT_TYPES,
  VALIDATION_TYPES
} from '../../../src-shared/constants'
import { Day, Id, Money, Nullable, ok, Pagination, StringEnum, Timestamp } from './kit'

export const OrderStatus = StringEnum(
  ORDER_STATUSES,
  'pending: paid, waiting for its CSR (POST /ssl/configure); validation_pending: waiting for domain validation; processing: validated, being issued; completed: issued (or an ACME subscription set up); cancelled; expired: the subscription and its last certificate have ended; pending_configuration: waiting for configuration'
)

/** Months of subscription: 12 × years, up to 5 years (products.max_years is 1 to 5). */
export const PERIODS = [12, 24, 36, 48, 60] as const

/** The `{ id, name }` of a name an ACME subscription covers (reseller API v3.0, "ACME subscription details"). */
export const AcmeDomainJson = Type.Object(
  {
    id: Type.String({ description: 'a stable id of the name within the subscription' }),
    name: Type.String({ description: 'the domain name' })
  },
  { title: 'AcmeDomain' }
)

const RenewalFields = {
  auto_reissue_enabled: Type.Boolean({
    description: 'whether CertDesk reissues the certificate by itself before it ends (never for code signing)'
  }),
  max_validity_days: Type.Integer({
    minimum: 1,
    description: 'the longest certificate lifetime allowed on the order day'
  }),
  purchase_end_date: Day('the end of the paid subscription'),
  next_reissue_at: Nullable(Day('the next automatic reissue; null when none will follow')),
  reissue_count: Type.Integer({ minimum: 0, description: 'automatic reissues done so far' }),
  cert_valid_from: Nullable(Day('the current certificate starts; null before the first one')),
  cert_valid_till: Nullable(Day('the current certificate ends; null before the first one')),
  period: Type.Integer({ minimum: 12, maximum: 60, multipleOf: 12, description: 'the subscription length, months' })
}

export const OrderJson = Type.Object(
  {
    id: Id('the order id'),
    order_id: Id('the order id again, as v3.0 names it elsewhere'),
    order_number: Type.String({ pattern: '^ORD-\\d{4}-\\d{6,}$', description: 'the human-readable order number' }),
    product_id: Id('the product ordered'),
    product: Type.String({ description: 'the product name' }),
    brand: Type.String(),
    type: StringEnum(PRODUCT_TYPES),
    validation_type: StringEnum(VALIDATION_TYPES),
    domain: Type.String({ description: 'the ordered name; empty for code signing' }),
    san_count: Type.Integer({ minimum: 0 }),
    san_wildcard_count: Type.Integer({ minimum: 0 }),
    contact_email: Nullable(Type.String()),
    base_price: Money(),
    san_total: Money(),
    discount_amount: Money(),
    total: Money('base_price + san_total − discount_amount, USD'),
    currency: Type.Literal('USD'),
    status: OrderStatus,
    status_note: Nullable(Type.String({ description: 'why the order waits or failed, for a person' })),
    payment_status: StringEnum(PAYMENT_STATUSES),
    invoice_number: Nullable(Type.String()),
    invoice_status: Nullable(StringEnum(INVOICE_STATUSES)),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    ...RenewalFields,
    acme: Type.Optional(
      Type.Object(
        {
          status: StringEnum(['active', 'cancelled', 'expired'] as const),
          category: StringEnum(['caas', 'ais'] as const),
          subscription_id: Id('the ACME subscription'),
          domains: Type.Array(AcmeDomainJson),
          subscription: Type.Object({ begin: Day(), end: Nullable(Day()) }),
          bound_accounts: Type.Integer({ minimum: 0, description: 'ACME accounts bound with the EAB credentials' }),
          details_endpoint: Type.String({ description: 'where the EAB credentials are: GET /orders/{order_id}/acme' })
        },
        { title: 'AcmeOrderSummary', description: 'On ACME subscription orders only; holds no secret' }
      )
    )
  },
  { title: 'Order' }
)

export const CreateOrderBody = Type.Object(
  {
    product_id: Id('a product of your group (GET /products)'),
    domain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        description:
          'The name to certify; required except for code signing. For a wildcard_only subscription a wildcard name such as *.example.com; the www form is added to subscriptions by itself.'
      })
    ),
    period: Type.Optional(
      Type.Integer({
        enum: [...PERIODS],
        default: 12,
        description: 'The subscription length in months: 12 per year, up to the product’s max_years. Default 12.'
      })
    ),
    san_count: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, default: 0, description: 'Additional names (multi-domain products).' })
    ),
    san_wildcard_count: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, default: 0, description: 'Additional wildcard names.' })
    ),
    contact_email: Type.Optional(
      Type.String({
        maxLength: 254,
        description:
          'Where certificate and subscription notices go; required for auto-install (ais) subscriptions. A plain address: letters, digits, dots between them and _ % + - before the @ (not starting with -), a host name after it.'
      })
    )
  },
  { additionalProperties: false, title: 'CreateOrderRequest' }
)

/** The answer of a certificate product: `fulfillment: certificate`, waiting for its CSR. */
export const CreatedCertificateOrder = ok(
  {
    fulfillment: Type.Literal('certificate', { description: 'a certificate order: configure it with its CSR next' }),
    order_id: Id('the new order'),
    order_number: Type.String(),
    domain: Type.String(),
    base_price: Money(),
    san_total: Money(),
    discount_amount: Money(),
    total: Money(),
    status: OrderStatus,
    payment_status: StringEnum(PAYMENT_STATUSES),
    credit_used: Money('the amount taken from the credit balance'),
    new_balance: Money('the credit balance after the order'),
    invoice_number: Type.String(),
    auto_reissue_enabled: RenewalFields.auto_reissue_enabled,
    max_validity_days: RenewalFields.max_validity_days,
    purchase_end_date: RenewalFields.purchase_end_date,
    next_reissue_at: RenewalFields.next_reissue_at,
    period: RenewalFields.period
  },
  { title: 'CreatedCertificateOrder' }
)

/** Reseller API v3.0, "POST /orders": the short answer for an ACME subscription product. */
export const CreatedAcmeOrder = ok(
  {
    fulfillment: Type.Literal('acme_subscription', { description: 'an ACME subscription, set up at once' }),
    order_id: Id('the new order'),
    order_number: Type.String(),
    status: Type.Literal('completed'),
    total: Money(),
    credit_used: Money('the amount taken from the credit balance'),
    new_balance: Money('the credit balance after the order'),
    invoice_number: Type.String(),
    acme: Type.Object({
      status: Type.Literal('created'),
      subscription_id: Id('the ACME subscription'),
      details_endpoint: Type.String({ description: 'GET it for the EAB credentials' })
    })
  },
  { title: 'CreatedAcmeOrder' }
)

/** Which branch an answer is: `fulfillment` says it (OpenAPI 3.0 §4.8.25, Discriminator Object). */
export const CreateOrderResponse = Type.Union([CreatedCertificateOrder, CreatedAcmeOrder], {
  title: 'CreateOrderResponse',
  discriminator: {
    propertyName: 'fulfillment',
    mapping: {
      certificate: '#/components/schemas/CreatedCertificateOrder',
      acme_subscription: '#/components/schemas/CreatedAcmeOrder'
    }
  }
})

export const OrderStatusQuery = Type.Optional(
  StringEnum(
    ORDER_STATUSES,
    'Only orders in this state (every order status is accepted, not only the four v3.0 lists).'
  )
)

export const OrderListResponse = ok(
  { orders: Type.Array(OrderJson), pagination: Pagination },
  { title: 'OrderListResponse' }
)
export const OrderResponse = ok({ order: OrderJson }, { title: 'OrderResponse' })

export const CancelOrderBody = Type.Object(
  { action: StringEnum(['cancel'] as const, 'The action; cancel is the only one.') },
  { additionalProperties: false, title: 'OrderActionRequest' }
)

export const CancelOrderResponse = ok(
  {
    order_id: Id('the cancelled order'),
    status: OrderStatus,
    refunded: Money('the amount refunded to credit'),
    new_balance: Money('the credit balance after the refund'),
    order: OrderJson
  },
  { title: 'CancelOrderResponse' }
)
