/** Accounts, API keys, the catalogue, orders, billing and settings, as the bridge carries them. */
import { Type, type Static } from '@sinclair/typebox'
import {
  Cents,
  Flag,
  InvoiceStatus,
  Nullable,
  NullableStamp,
  OneOf,
  OrderStatus,
  PaymentStatus,
  ProductType,
  Stamp,
  Text,
  ValidationType,
  WholeNumber
} from './schema-kit'

// ---- resellers ----------------------------------------------------------------------------

export const Reseller = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  company: Type.String(),
  groupId: Nullable(Type.Integer()),
  discountRate: Type.Number(),
  status: OneOf(['active', 'suspended']),
  apiAccess: Type.Boolean(),
  creditBalance: Cents,
  createdAt: Stamp
})
export type Reseller = Static<typeof Reseller>

export const ResellerView = Type.Composite([Reseller, Type.Object({ groupName: Nullable(Type.String()) })])
export type ResellerView = Static<typeof ResellerView>

export const NewReseller = Type.Object(
  {
    name: Text,
    email: Text,
    company: Type.Optional(Text),
    groupId: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { must: 'must be a group id or null' })
    ),
    discountRate: Type.Optional(Type.Number({ must: 'must be a number' }))
  },
  { must: 'must be { name, email, company?, groupId?, discountRate? }' }
)
export type NewReseller = Static<typeof NewReseller>

export const ApiKeyInfo = Type.Object({
  id: Type.Integer(),
  resellerId: Type.Integer(),
  prefix: Type.String(),
  label: Type.String(),
  createdAt: Stamp,
  revokedAt: NullableStamp,
  lastUsedAt: NullableStamp
})
export type ApiKeyInfo = Static<typeof ApiKeyInfo>
/** The UI acts for one reseller already; the owner id stays in the core. */
export const ApiKeyView = Type.Omit(ApiKeyInfo, ['resellerId'])
export type ApiKeyView = Static<typeof ApiKeyView>

// ---- catalogue ----------------------------------------------------------------------------

export const ProductFilter = Type.Object(
  {
    brand: Type.Optional(Text),
    type: Type.Optional(ProductType),
    validation: Type.Optional(ValidationType),
    includeAcme: Type.Optional(Flag)
  },
  { must: 'must be { brand?, type?, validation?, includeAcme? }' }
)
export type ProductFilter = Static<typeof ProductFilter>

export const YearPriceView = Type.Object({
  years: Type.Integer(),
  price: Cents,
  listPrice: Cents,
  sanPrice: Cents,
  wildcardSanPrice: Cents
})
export type YearPriceView = Static<typeof YearPriceView>

export const ProductView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  brand: Type.String(),
  type: ProductType,
  validationType: ValidationType,
  maxYears: Type.Integer(),
  warranty: Type.String(),
  sanEnabled: Type.Boolean(),
  wildcardSanEnabled: Type.Boolean(),
  includedSans: Type.Integer(),
  maxSans: Type.Integer(),
  description: Type.String(),
  acme: Type.Boolean(),
  /** `caas` (the customer's ACME client) or `ais` (auto-install, needs a contact email); null for certificates. */
  acmeType: Nullable(OneOf(['caas', 'ais'])),
  /** Group prices next to list prices, one entry per year count. */
  prices: Type.Array(YearPriceView)
})
export type ProductView = Static<typeof ProductView>

// ---- orders -------------------------------------------------------------------------------

export const OrderInput = Type.Object(
  {
    productId: Type.Integer({ minimum: 1, title: 'product id', must: 'must be a positive whole number' }),
    domain: Type.Optional(Text),
    period: Type.Optional(WholeNumber),
    sanCount: Type.Optional(WholeNumber),
    sanWildcardCount: Type.Optional(WholeNumber),
    /** Required for auto-install (ais) ACME subscriptions: where certificate notices go. */
    contactEmail: Type.Optional(Type.String({ title: 'contact email', must: 'must be text' }))
  },
  { must: 'must be { productId, domain?, period?, sanCount?, sanWildcardCount?, contactEmail? }' }
)
export type OrderInput = Static<typeof OrderInput>

export const QuoteView = Type.Object({
  productName: Type.String(),
  domain: Type.String(),
  periodMonths: Type.Integer(),
  basePrice: Cents,
  sanTotal: Cents,
  discountRate: Type.Number(),
  discountAmount: Cents,
  total: Cents,
  balance: Cents,
  /** False when paying from credit would be refused (402). */
  affordable: Type.Boolean()
})
export type QuoteView = Static<typeof QuoteView>

export const Order = Type.Object({
  id: Type.Integer(),
  orderNumber: Type.String(),
  resellerId: Type.Integer(),
  productId: Type.Integer(),
  productName: Type.String(),
  brand: Type.String(),
  productType: ProductType,
  validationType: ValidationType,
  domain: Type.String(),
  periodMonths: Type.Integer(),
  sanCount: Type.Integer(),
  sanWildcardCount: Type.Integer(),
  contactEmail: Nullable(Type.String()),
  basePrice: Cents,
  sanTotal: Cents,
  discountAmount: Cents,
  total: Cents,
  status: OrderStatus,
  paymentStatus: PaymentStatus,
  autoReissue: Type.Boolean(),
  maxValidityDays: Type.Integer(),
  purchaseEndDate: Type.String(),
  reissueCount: Type.Integer(),
  certValidFrom: NullableStamp,
  certValidTill: NullableStamp,
  nextReissueAt: NullableStamp,
  statusNote: Nullable(Type.String()),
  invoiceNumber: Nullable(Type.String()),
  invoiceStatus: Nullable(Type.String()),
  createdAt: Stamp,
  updatedAt: Stamp
})
export type Order = Static<typeof Order>

export const OrderView = Type.Composite([
  Order,
  /** A private key generated in the app is kept (encrypted) for this order. */
  Type.Object({
    hasStoredKey: Type.Boolean(),
    /** The order's current certificate was revoked (it must not be installed; reissue to replace it). */
    certificateRevoked: Type.Boolean()
  })
])
export type OrderView = Static<typeof OrderView>

export const OrderFilter = Type.Object(
  { status: Type.Optional(OrderStatus), domain: Type.Optional(Text) },
  { must: 'must be { status?, domain? }' }
)
export type OrderFilter = Static<typeof OrderFilter>

export const CreatedOrderView = Type.Object({ order: OrderView, creditUsed: Cents, newBalance: Cents })
export type CreatedOrderView = Static<typeof CreatedOrderView>
export const CancelledOrderView = Type.Object({ order: OrderView, refunded: Cents, newBalance: Cents })
export type CancelledOrderView = Static<typeof CancelledOrderView>
export const PaidOrderView = Type.Object({ order: OrderView, amountPaid: Cents, newBalance: Cents })
export type PaidOrderView = Static<typeof PaidOrderView>

// ---- billing ------------------------------------------------------------------------------

export const Invoice = Type.Object({
  id: Type.Integer(),
  invoiceNumber: Type.String(),
  orderId: Type.Integer(),
  orderNumber: Type.String(),
  domain: Type.String(),
  productName: Type.String(),
  total: Cents,
  currency: Type.Literal('USD'),
  status: InvoiceStatus,
  dueDate: Type.String(),
  createdAt: Stamp,
  paidAt: NullableStamp,
  sentAt: NullableStamp,
  cancelledAt: NullableStamp
})
export type Invoice = Static<typeof Invoice>
export type InvoiceView = Invoice

export const InvoiceFilter = Type.Object({ status: Type.Optional(InvoiceStatus) }, { must: 'must be { status? }' })
export type InvoiceFilter = Static<typeof InvoiceFilter>

export const CreditTransaction = Type.Object({
  id: Type.Integer(),
  amount: Cents,
  type: OneOf(['debit', 'credit']),
  description: Type.String(),
  balanceAfter: Cents,
  orderId: Nullable(Type.Integer()),
  createdAt: Stamp
})
export type CreditTransaction = Static<typeof CreditTransaction>
export type TransactionView = CreditTransaction

export const Stats = Type.Object({
  totalOrders: Type.Integer(),
  activeOrders: Type.Integer(),
  pendingOrders: Type.Integer(),
  totalRevenue: Cents,
  monthlyRevenue: Cents,
  creditBalance: Cents,
  dailySales: Type.Array(Type.Object({ date: Type.String(), orders: Type.Integer(), revenue: Cents })),
  brandDistribution: Type.Array(Type.Object({ brand: Type.String(), count: Type.Integer() })),
  statusDistribution: Type.Record(Type.String(), Type.Integer())
})
export type Stats = Static<typeof Stats>
export type StatsView = Stats

// ---- settings -----------------------------------------------------------------------------

/** The settings domain validation uses; empty means the default (system resolver, ports 80/443, the outbox). */
export const DcvSettingsView = Type.Object({
  dcvResolver: Type.String(),
  dcvHttpPort: Type.String(),
  dcvHttpsPort: Type.String(),
  smtpUrl: Type.String(),
  smtpFrom: Type.String(),
  /** Lab use: validation may reach loopback and private addresses (off: refused, as public CAs do). */
  dcvAllowPrivateAddresses: Type.Boolean()
})
export type DcvSettingsView = Static<typeof DcvSettingsView>

/** The seller block of every invoice: the admin's business name and postal address. */
export const InvoiceSettingsView = Type.Object({
  sellerName: Type.String(),
  /** One line per line of the address. */
  sellerAddress: Type.String()
})
export type InvoiceSettingsView = Static<typeof InvoiceSettingsView>

/** Every value the Settings screen edits. */
export const SettingsValues = Type.Composite([DcvSettingsView, InvoiceSettingsView])
export type SettingsValues = Static<typeof SettingsValues>

export const SettingsView = Type.Composite([
  SettingsValues,
  Type.Object({
    dataDir: Type.String(),
    listenerUrl: Type.String(),
    apiVersion: Type.String(),
    transport: OneOf(['electron', 'browser'])
  })
])
export type SettingsView = Static<typeof SettingsView>

/** Typed values as the Settings screen sends them: text, or a switch for the lab setting. */
export const SettingsInput = Type.Object(
  {
    dcvResolver: Type.Optional(Text),
    dcvHttpPort: Type.Optional(Text),
    dcvHttpsPort: Type.Optional(Text),
    smtpUrl: Type.Optional(Text),
    smtpFrom: Type.Optional(Text),
    dcvAllowPrivateAddresses: Type.Optional(Flag),
    sellerName: Type.Optional(Text),
    sellerAddress: Type.Optional(Text)
  },
  { must: 'must be an object of settings' }
)
export type SettingsInput = Static<typeof SettingsInput>

/** Why a typed setting would be refused, by field; a field the core accepts is absent. */
export const SettingsProblems = Type.Partial(Type.Record(Type.KeyOf(SettingsValues), Type.String()))
export type SettingsProblems = Partial<Record<keyof SettingsValues, string>>
