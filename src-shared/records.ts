/**
 * The records the core returns and the bridge carries, written once as TypeBox schemas: the
 * types are `Static<>` of them, and the bridge checks the renderer's arguments against the same
 * schemas (src-main/app/validate.ts). The core imports the types; the renderer imports them with
 * `import type` only, so no schema code enters its bundle. Views are the records themselves, or
 * derived from them with `Omit<>`/`Pick<>` where the UI must not see a field.
 *
 * Everything here crosses a process boundary as structured-clone or JSON data: plain objects,
 * numbers and strings. Money is integer cents, dates are UTC text (`YYYY-MM-DD`,
 * `YYYY-MM-DD HH:MM:SS`).
 *
 * `must` on a schema is the reason the bridge gives when a value does not fit it, after the
 * argument's or field's name ("domain must be text").
 */
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'
import {
  DCV_METHODS,
  DEPLOY_LAYOUTS,
  DEPLOY_RUN_STATUSES,
  DEPLOY_TARGET_KINDS,
  DEPLOY_TRIGGERS,
  INVOICE_STATUSES,
  ORDER_STATUSES,
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  PRODUCT_TYPES,
  VALIDATION_TYPES
} from './constants'

const spoken = (values: readonly string[]): string =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`

/** One of a literal set; refused with the set spelled out. */
export const OneOf = <const T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { must: `must be ${spoken(values)}` }
  )
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const Text = Type.String({ must: 'must be text' })
export const Flag = Type.Boolean({ must: 'must be true or false' })
export const WholeNumber = Type.Integer({ must: 'must be a whole number' })
/** A row id: a positive whole number, so a value like `1 OR 1` never reaches a query. */
export const Id = Type.Integer({ minimum: 1, must: 'must be a positive whole number' })
export const Cents = Type.Integer({ must: 'must be a whole number of cents' })
const Stamp = Type.String()
const NullableStamp = Nullable(Type.String())

export const ProductType = OneOf(PRODUCT_TYPES)
export const ValidationType = OneOf(VALIDATION_TYPES)
export const OrderStatus = OneOf(ORDER_STATUSES)
export const PaymentStatus = OneOf(PAYMENT_STATUSES)
export const InvoiceStatus = OneOf(INVOICE_STATUSES)
export const PaymentMethod = OneOf(PAYMENT_METHODS)
export const DcvMethod = OneOf(DCV_METHODS)
export const DeployLayout = OneOf(DEPLOY_LAYOUTS)
export const DeployTargetKind = OneOf(DEPLOY_TARGET_KINDS)
export const DeployRunStatus = OneOf(DEPLOY_RUN_STATUSES)
export const DeployTrigger = OneOf(DEPLOY_TRIGGERS)

export type Cents = Static<typeof Cents>
export type ProductType = Static<typeof ProductType>
export type ValidationType = Static<typeof ValidationType>
export type OrderStatus = Static<typeof OrderStatus>
export type PaymentStatus = Static<typeof PaymentStatus>
export type InvoiceStatus = Static<typeof InvoiceStatus>
export type PaymentMethod = Static<typeof PaymentMethod>
export type DcvMethod = Static<typeof DcvMethod>
export type DeployLayout = Static<typeof DeployLayout>
export type DeployTargetKind = Static<typeof DeployTargetKind>
export type DeployRunStatus = Static<typeof DeployRunStatus>
export type DeployTrigger = Static<typeof DeployTrigger>

// ---- paging -------------------------------------------------------------------------------

export const PageRequest = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, must: 'must be 1 or more' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, must: 'must be 0 or more' }))
  },
  { must: 'must be { limit, offset }' }
)
export type PageRequest = Static<typeof PageRequest>

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })
/** One page of a list, newest first, with the total count and the limit actually used. */
export interface Page<T> {
  items: T[]
  total: number
  limit: number
  offset: number
}

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
  Type.Object({ hasStoredKey: Type.Boolean() })
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

export const DashboardView = Type.Object({
  stats: Stats,
  /** Issued certificates ending within 30 days whose subscription does not renew them. */
  expiringSoon: Type.Array(OrderView),
  /** Orders waiting for their CSR or domain validation, oldest first. */
  waitingForValidation: Type.Array(OrderView)
})
export type DashboardView = Static<typeof DashboardView>

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

export const SettingsView = Type.Composite([
  DcvSettingsView,
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
    dcvAllowPrivateAddresses: Type.Optional(Flag)
  },
  { must: 'must be an object of settings' }
)
export type SettingsInput = Static<typeof SettingsInput>

/** Why a typed setting would be refused, by field; a field the core accepts is absent. */
export const SettingsProblems = Type.Partial(Type.Record(Type.KeyOf(DcvSettingsView), Type.String()))
export type SettingsProblems = Partial<Record<keyof DcvSettingsView, string>>

// ---- certificates and domain validation ----------------------------------------------------

export const NameValidation = Type.Object({
  name: Type.String(),
  method: DcvMethod,
  status: OneOf(['pending', 'valid', 'failed']),
  detail: Nullable(Type.String()),
  checkedAt: NullableStamp,
  validatedAt: NullableStamp,
  /** What the domain owner must do, for the method chosen. */
  instructions: Type.Union([
    Type.Object({
      method: OneOf(['http', 'https']),
      url: Type.String(),
      fileName: Type.String(),
      fileContent: Type.String()
    }),
    Type.Object({
      method: Type.Literal('dns'),
      recordName: Type.String(),
      recordType: OneOf(['CNAME', 'TXT']),
      recordValue: Type.String(),
      txtAlternative: Type.String()
    }),
    Type.Object({ method: Type.Literal('email'), approverEmail: Type.String(), sentAt: NullableStamp })
  ])
})
export type NameValidation = Static<typeof NameValidation>
export type NameValidationView = NameValidation

export const StoredCertificate = Type.Object({
  id: Type.Integer(),
  orderId: Type.Integer(),
  serial: Type.String(),
  issuer: Type.String(),
  certificatePem: Type.String(),
  chainPem: Type.String(),
  names: Type.Array(Type.String()),
  validFrom: Stamp,
  validTill: Stamp,
  reason: OneOf(['initial', 'reissue', 'auto_reissue']),
  createdAt: Stamp
})
export type StoredCertificate = Static<typeof StoredCertificate>
export const CertificateView = Type.Omit(StoredCertificate, ['orderId'])
export type CertificateView = Static<typeof CertificateView>

export const SslStatusView = Type.Object({
  order: OrderView,
  dcvMethod: Nullable(Type.Union([DcvMethod, Type.Literal('none')])),
  approverEmail: Nullable(Type.String()),
  names: Type.Array(Type.String()),
  validation: Type.Array(NameValidation),
  certificate: Nullable(CertificateView)
})
export type SslStatusView = Static<typeof SslStatusView>

export const CertificateDetailView = Type.Object({
  certificate: Nullable(CertificateView),
  daysRemaining: Nullable(Type.Integer()),
  isExpired: Type.Boolean(),
  /** Every certificate issued for the order, newest first (reissues included). */
  history: Type.Array(CertificateView)
})
export type CertificateDetailView = Static<typeof CertificateDetailView>

/** An approval message kept by CertDesk (the outbox when no SMTP relay is set, or a copy). */
export const OutboxMessageView = Type.Object({
  id: Type.Integer(),
  /** The name the message asks approval for. */
  name: Nullable(Type.String()),
  to: Type.String(),
  subject: Type.String(),
  body: Type.String(),
  delivery: Type.String(),
  createdAt: Stamp
})
export type OutboxMessageView = Static<typeof OutboxMessageView>

/** A CSR generated here with the order's kept key, waiting to be submitted. */
export const CsrDraft = Type.Object({
  csrPem: Type.String(),
  /** When it was generated, UTC `YYYY-MM-DD HH:MM:SS`. */
  createdAt: Stamp
})
export type CsrDraft = Static<typeof CsrDraft>
export type CsrDraftView = CsrDraft

export const CsrDraftInput = Type.Object({ pkcs8Pem: Text, csrPem: Text }, { must: 'must be { pkcs8Pem, csrPem }' })

/** Email validation: the approver address of each name (name → address). */
const Approvers = Type.Record(
  Type.String(),
  Type.String({ title: 'each approver', must: 'must be an email address' }),
  {
    title: 'approvers',
    must: 'must map each name to an approver address'
  }
)

export const ConfigureInput = Type.Object(
  {
    orderId: Type.Integer({ minimum: 1, title: 'order id', must: 'must be a positive whole number' }),
    csr: Text,
    dcvMethod: DcvMethod,
    approverEmail: Type.Optional(Type.String({ title: 'approver email', must: 'must be text' })),
    approvers: Type.Optional(Approvers)
  },
  { must: 'must be { orderId, csr, dcvMethod, approverEmail?, approvers? }' }
)
export type ConfigureInput = Static<typeof ConfigureInput>

export const ReissueInput = Type.Object(
  {
    orderId: Type.Integer({ minimum: 1, title: 'order id', must: 'must be a positive whole number' }),
    csr: Type.Optional(Text),
    dcvMethod: Type.Optional(DcvMethod),
    approverEmail: Type.Optional(Type.String({ title: 'approver email', must: 'must be text' })),
    /** The key `csr` was generated from in the app: kept with the certificate issued for it. */
    privateKeyPem: Type.Optional(Type.String({ title: 'private key', must: 'must be text' }))
  },
  { must: 'must be { orderId, csr?, dcvMethod?, approverEmail?, privateKeyPem? }' }
)
export type ReissueInput = Static<typeof ReissueInput>

// ---- deploys ------------------------------------------------------------------------------

/** A deploy target as the renderer adds it; the core checks the values. */
export const DeployTargetInput = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('folder'),
      path: Text,
      layout: Type.Optional(DeployLayout),
      pfx: Type.Optional(Flag)
    }),
    Type.Object({ kind: Type.Literal('command'), command: Text, timeoutSeconds: Type.Optional(WholeNumber) }),
    Type.Object({ kind: Type.Literal('webhook'), url: Text })
  ],
  { must: 'must be a folder, command or webhook target with its fields' }
)
export type DeployTargetInput = Static<typeof DeployTargetInput>

export const DeployRunView = Type.Object({
  id: Type.Integer(),
  targetId: Type.Integer(),
  kind: DeployTargetKind,
  serial: Type.String(),
  trigger: DeployTrigger,
  status: DeployRunStatus,
  attempts: Type.Integer(),
  nextAttemptAt: NullableStamp,
  lastError: Nullable(Type.String()),
  /** The last attempt's summary (files written, exit code, HTTP status), null before the first. */
  summary: Nullable(Type.String()),
  createdAt: Stamp,
  updatedAt: Stamp
})
export type DeployRunView = Static<typeof DeployRunView>

export const DeployTargetView = Type.Object({
  id: Type.Integer(),
  kind: DeployTargetKind,
  /** Folder targets. */
  path: Nullable(Type.String()),
  layout: Nullable(DeployLayout),
  pfx: Type.Boolean(),
  /** Command targets. */
  command: Nullable(Type.String()),
  timeoutSeconds: Nullable(Type.Integer()),
  /** Webhook targets. */
  url: Nullable(Type.String()),
  createdAt: Stamp,
  /** The newest run on this target, null before the first. */
  lastRun: Nullable(DeployRunView)
})
export type DeployTargetView = Static<typeof DeployTargetView>

export const CreatedDeployTargetView = Type.Object({
  target: DeployTargetView,
  /** Shown once: the webhook secret or the PFX password CertDesk created in the keychain. */
  secret: Nullable(Type.Object({ name: OneOf(['webhook_secret', 'pfx_password']), value: Type.String() }))
})
export type CreatedDeployTargetView = Static<typeof CreatedDeployTargetView>

// ---- ACME subscriptions -------------------------------------------------------------------

/** The set-up commands as the core builds them, every value shell-quoted; the renderer shows them as they are. */
export const AcmeCommandsView = Type.Object({
  rootCa: Type.String(),
  certbot: Type.String(),
  lego: Type.String(),
  acmeSh: Type.String()
})
export type AcmeCommandsView = Static<typeof AcmeCommandsView>

/** An ACME subscription order with its set-up, the HMAC key left out (`acmeHmacKey` reads it). */
export const AcmeSubscriptionView = Type.Object({
  orderId: Type.Integer(),
  orderNumber: Type.String(),
  productName: Type.String(),
  status: OneOf(['active', 'cancelled', 'expired']),
  category: OneOf(['caas', 'ais']),
  domains: Type.Array(Type.String()),
  begin: Type.String(),
  nextRenewal: Type.String(),
  end: Nullable(Type.String()),
  eabKid: Type.String(),
  serverUrl: Type.String(),
  accountStatus: OneOf(['valid', 'pending']),
  accounts: Type.Array(Type.Object({ url: Type.String(), status: Type.String(), createdAt: Stamp })),
  rootCaUrl: Type.String(),
  /** Ready-to-paste commands, HMAC_KEY_PLACEHOLDER in place of the HMAC key (`acmeHmacKey` answers the real ones). */
  commands: AcmeCommandsView,
  setupUrl: Nullable(Type.String())
})
export type AcmeSubscriptionView = Static<typeof AcmeSubscriptionView>

export const AcmeHmacKeyView = Type.Object({ eabHmacKey: Type.String(), commands: AcmeCommandsView })
export type AcmeHmacKeyView = Static<typeof AcmeHmacKeyView>
