/**
 * TypeBox schemas of the reseller API v3.0 (its section "Resources and their fields" gives the
 * shapes). They validate requests, serialise responses and make /openapi.json; handler types
 * come from them (`Static<typeof X>`), so validation and types are one thing.
 */
import { EVENT_TYPES } from '../core/events'
import { Type, type TInteger, type TLiteral, type TSchema, type TUnion, type Static } from '@sinclair/typebox'
import { PersistRecordView as PersistRecordJson } from '../../src-shared/renewal-records'

/** A string enum that reads as one in errors and in OpenAPI (not an anyOf of literals). */
export const StringEnum = <const T extends string>(values: readonly T[], description?: string) =>
  Type.String({ enum: [...values], ...(description ? { description } : {}) }) as unknown as TUnion<TLiteral<T>[]>

export const Money = Type.Number({ description: 'USD, two decimals' })
export const Day = Type.String({ description: 'YYYY-MM-DD (UTC)' })
export const Timestamp = Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const ErrorEnvelope = Type.Object(
  { success: Type.Literal(false), error: Type.String() },
  { $id: 'ErrorEnvelope', description: 'Failure envelope' }
)

/** `{ success: true, ...data }` */
export const ok = <P extends Record<string, TSchema>>(props: P) =>
  Type.Object({ success: Type.Literal(true), message: Type.Optional(Type.String()), ...props })

export const Pagination = Type.Object({
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer()
})

export const PagingQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: 'page size, default 50, values above 100 are clamped to 100' })
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'start position, default 0' }))
}

export const IdParam = <K extends string>(name: K) =>
  Type.Object({ [name]: Type.Integer({ minimum: 1 }) } as Record<K, TInteger>)

const PriceByYears = Type.Record(Type.String({ pattern: '^[0-9]+$' }), Money)

export const ProductJson = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  brand: Type.String(),
  type: Type.String(),
  validation_type: Type.String(),
  domain_type: Type.String(),
  list_price: Money,
  list_pricing: PriceByYears,
  reseller_price: Money,
  pricing: PriceByYears,
  max_years: Type.Integer(),
  warranty: Type.String(),
  san_enabled: Type.Boolean(),
  fulfillment: Type.Optional(Type.String()),
  requires_csr: Type.Optional(Type.Boolean()),
  acme_type: Type.Optional(Type.String()),
  wildcard_only: Type.Optional(Type.Boolean())
})

const SanPriceByYears = Type.Record(
  Type.String({ pattern: '^[0-9]+$' }),
  Type.Object({ san_price: Money, wildcard_san_price: Money })
)

export const SanPricingJson = Type.Object({
  product_id: Type.Integer(),
  product_name: Type.String(),
  san_enabled: Type.Boolean(),
  wildcard_san_enabled: Type.Boolean(),
  included_sans: Type.Integer(),
  max_sans: Type.Integer(),
  san_price: Money,
  wildcard_san_price: Money,
  pricing: SanPriceByYears,
  list_pricing: SanPriceByYears
})

export const ProductDetailJson = Type.Composite([
  ProductJson,
  Type.Object({
    description: Type.String(),
    wildcard_san_enabled: Type.Boolean(),
    included_sans: Type.Integer(),
    max_sans: Type.Integer(),
    san_pricing: SanPricingJson
  })
])

const RenewalFields = {
  auto_reissue_enabled: Type.Boolean(),
  max_validity_days: Type.Integer(),
  purchase_end_date: Day,
  next_reissue_at: Nullable(Day),
  reissue_count: Type.Integer(),
  cert_valid_from: Nullable(Day),
  cert_valid_till: Nullable(Day),
  period: Type.Integer({ description: 'months' })
}

export const OrderJson = Type.Object({
  id: Type.Integer(),
  order_id: Type.Integer(),
  order_number: Type.String(),
  product_id: Type.Integer(),
  product: Type.String(),
  brand: Type.String(),
  type: Type.String(),
  validation_type: Type.String(),
  domain: Type.String(),
  san_count: Type.Integer(),
  san_wildcard_count: Type.Integer(),
  contact_email: Nullable(Type.String()),
  base_price: Money,
  san_total: Money,
  discount_amount: Money,
  total: Money,
  currency: Type.Literal('USD'),
  status: Type.String(),
  status_note: Nullable(Type.String()),
  payment_status: Type.String(),
  invoice_number: Nullable(Type.String()),
  invoice_status: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  ...RenewalFields,
  acme: Type.Optional(
    Type.Object({
      status: Type.String(),
      category: Type.String(),
      subscription_id: Type.Integer(),
      domains: Type.Array(Type.String()),
      subscription: Type.Object({ begin: Day, end: Nullable(Day) }),
      bound_accounts: Type.Integer(),
      details_endpoint: Type.String()
    })
  )
})

export const CreateOrderResponse = ok({
  order_id: Type.Integer(),
  order_number: Type.String(),
  domain: Type.String(),
  base_price: Money,
  san_total: Money,
  discount_amount: Money,
  total: Money,
  status: Type.String(),
  payment_status: Type.String(),
  credit_used: Money,
  new_balance: Money,
  invoice_number: Type.String(),
  auto_reissue_enabled: Type.Boolean(),
  max_validity_days: Type.Integer(),
  purchase_end_date: Day,
  next_reissue_at: Nullable(Day),
  period: Type.Integer()
})

/** Spec "POST /orders": the short answer for an ACME subscription product. */
export const AcmeCreateResponse = ok({
  order_id: Type.Integer(),
  order_number: Type.String(),
  status: Type.Literal('completed'),
  fulfillment: Type.Literal('acme_subscription'),
  total: Money,
  credit_used: Money,
  new_balance: Money,
  invoice_number: Type.String(),
  acme: Type.Object({
    status: Type.Literal('created'),
    subscription_id: Type.Integer(),
    details_endpoint: Type.String()
  })
})

// dns-persist-01 records and the renewal view are one contract with the desktop bridge.
export {
  PersistRecordView as PersistRecordJson,
  OrderRenewalView as RenewalJson
} from '../../src-shared/renewal-records'

export const AcmeDetailsJson = Type.Object({
  status: Type.String(),
  category: Type.String(),
  domains: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  subscription: Type.Object({ begin: Day, next_renewal: Day, end: Nullable(Day) }),
  account: Type.Object({
    eab_kid: Type.String(),
    eab_hmac_key: Type.String({ description: 'secret: keep it like a password' }),
    server_url: Type.String({ description: 'the ACME directory' }),
    status: Type.String({
      description: 'pending until an ACME account is bound with these EAB credentials, then valid'
    }),
    accounts: Type.Array(Type.Object({ url: Type.String(), status: Type.String(), created_at: Timestamp }))
  }),
  allowed_identifiers: Type.Array(Type.String()),
  dns_persist: Type.Optional(Type.Array(PersistRecordJson)),
  root_ca_url: Type.String({ description: "the CertDesk root the directory's HTTPS certificate chains to" }),
  commands: Type.Object(
    {
      root_ca: Type.String(),
      certbot: Type.String(),
      acme_sh: Type.String(),
      lego: Type.String()
    },
    { description: 'ready-to-paste POSIX shell command lines; every value in them is shell-quoted' }
  ),
  autoinstall: Nullable(Type.Object({ login_url: Type.String() }))
})

export const InvoiceJson = Type.Object({
  id: Type.Integer(),
  invoice_number: Type.String(),
  order_id: Type.Integer(),
  order_number: Type.String(),
  domain: Type.String(),
  product: Type.String(),
  total: Money,
  currency: Type.Literal('USD'),
  status: Type.String(),
  due_date: Day,
  created_at: Timestamp,
  paid_at: Nullable(Timestamp),
  sent_at: Nullable(Timestamp),
  cancelled_at: Nullable(Timestamp)
})

export const TransactionJson = Type.Object({
  id: Type.Integer(),
  amount: Money,
  type: StringEnum(['debit', 'credit'] as const),
  description: Type.String(),
  balance_after: Money,
  order_id: Nullable(Type.Integer()),
  created_at: Timestamp
})

export const ResellerJson = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  company: Type.String(),
  discount_rate: Type.Number(),
  credit_balance: Money,
  group_id: Nullable(Type.Integer()),
  group_name: Nullable(Type.String()),
  api_access: Type.Boolean(),
  created_at: Timestamp,
  stats: Type.Object({ order_count: Type.Integer(), total_revenue: Money })
})

export const StatsJson = Type.Object({
  total_orders: Type.Integer(),
  active_orders: Type.Integer(),
  pending_orders: Type.Integer(),
  total_revenue: Money,
  monthly_revenue: Money,
  credit_balance: Money
})

export const ChartsJson = Type.Object({
  daily_sales: Type.Array(Type.Object({ date: Day, orders: Type.Integer(), revenue: Money })),
  brand_distribution: Type.Array(Type.Object({ brand: Type.String(), count: Type.Integer() })),
  status_distribution: Type.Record(Type.String(), Type.Integer())
})

/** GET /stats; one object, so that an answer made outside the route is serialised as the route does. */
export const StatsResponse = ok({ stats: StatsJson, charts: ChartsJson })

/** GET /events. The spec shows no events (reseller API v3.0, "Events": not shown); this follows its envelope. */
export const EventJson = Type.Object({
  id: Type.Integer(),
  type: StringEnum(EVENT_TYPES),
  order_id: Type.Union([Type.Integer(), Type.Null()]),
  order_number: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  data: Type.Object(
    {},
    { additionalProperties: true, description: 'details by type; never a secret or a private key' }
  ),
  created_at: Timestamp
})

export type OrderJsonT = Static<typeof OrderJson>
export type ProductJsonT = Static<typeof ProductJson>
