/**
 * The typed contract between the UI and the main process. One interface, `AppApi`; the IPC
 * handler table (src-main/app), the preload object and the browser-mode RPC client are all
 * derived from it, so the three cannot drift.
 *
 * Every value here crosses a process boundary as structured-clone or JSON data: plain
 * objects, numbers and strings only. Money is integer cents, dates are UTC text as in the core.
 * The UI acts for one reseller account at a time: every reseller-scoped method takes its id
 * first (README, "Desktop app").
 */

export type Cents = number

export type ProductType = 'ssl' | 'wildcard' | 'multi-domain' | 'code-signing'
export type ValidationType = 'dv' | 'ov' | 'ev'
export type OrderStatus =
  'pending' | 'processing' | 'validation_pending' | 'pending_configuration' | 'completed' | 'cancelled' | 'expired'
export type InvoiceStatus = 'unpaid' | 'paid' | 'cancelled' | 'sent'
export type PaymentMethod = 'credit' | 'invoice'
export type DcvMethod = 'email' | 'http' | 'https' | 'dns'

export interface ResellerView {
  id: number
  name: string
  email: string
  company: string
  groupId: number | null
  groupName: string | null
  discountRate: number
  status: 'active' | 'suspended'
  apiAccess: boolean
  creditBalance: Cents
}

export interface YearPriceView {
  years: number
  price: Cents
  listPrice: Cents
  sanPrice: Cents
  wildcardSanPrice: Cents
}

export interface ProductView {
  id: number
  name: string
  brand: string
  type: ProductType
  validationType: ValidationType
  maxYears: number
  warranty: string
  sanEnabled: boolean
  wildcardSanEnabled: boolean
  includedSans: number
  maxSans: number
  description: string
  acme: boolean
  /** `caas` (the customer's ACME client) or `ais` (auto-install, needs a contact email); null for certificates. */
  acmeType: 'caas' | 'ais' | null
  /** Group prices next to list prices, one entry per year count. */
  prices: YearPriceView[]
}

export interface ProductFilter {
  brand?: string
  type?: ProductType
  validation?: ValidationType
  includeAcme?: boolean
}

export interface OrderInput {
  productId: number
  domain?: string
  period?: number
  sanCount?: number
  sanWildcardCount?: number
  /** Required for auto-install (ais) ACME subscriptions: where certificate notices go. */
  contactEmail?: string
}

export interface QuoteView {
  productName: string
  domain: string
  periodMonths: number
  basePrice: Cents
  sanTotal: Cents
  discountRate: number
  discountAmount: Cents
  total: Cents
  balance: Cents
  /** False when paying from credit would be refused (402). */
  affordable: boolean
}

export interface OrderView {
  id: number
  orderNumber: string
  productId: number
  productName: string
  brand: string
  productType: ProductType
  domain: string
  periodMonths: number
  sanCount: number
  sanWildcardCount: number
  basePrice: Cents
  sanTotal: Cents
  discountAmount: Cents
  total: Cents
  status: OrderStatus
  paymentStatus: 'paid' | 'unpaid' | 'refunded'
  autoReissue: boolean
  maxValidityDays: number
  purchaseEndDate: string
  reissueCount: number
  certValidFrom: string | null
  certValidTill: string | null
  nextReissueAt: string | null
  statusNote: string | null
  invoiceNumber: string | null
  invoiceStatus: string | null
  createdAt: string
  updatedAt: string
  /** A private key generated in the app is kept (encrypted) for this order. */
  hasStoredKey: boolean
}

export interface OrderFilter {
  status?: OrderStatus
  domain?: string
}

export interface PageRequest {
  limit: number
  offset: number
}

export interface PageView<T> {
  items: T[]
  total: number
  limit: number
  offset: number
}

export interface CreatedOrderView {
  order: OrderView
  creditUsed: Cents
  newBalance: Cents
}

export interface CancelledOrderView {
  order: OrderView
  refunded: Cents
  newBalance: Cents
}

export interface InvoiceView {
  id: number
  invoiceNumber: string
  orderId: number
  orderNumber: string
  domain: string
  productName: string
  total: Cents
  status: InvoiceStatus
  dueDate: string
  createdAt: string
  paidAt: string | null
}

export interface TransactionView {
  id: number
  amount: Cents
  type: 'debit' | 'credit'
  description: string
  balanceAfter: Cents
  orderId: number | null
  createdAt: string
}

export interface StatsView {
  totalOrders: number
  activeOrders: number
  pendingOrders: number
  totalRevenue: Cents
  monthlyRevenue: Cents
  creditBalance: Cents
  dailySales: { date: string; orders: number; revenue: Cents }[]
  brandDistribution: { brand: string; count: number }[]
  statusDistribution: Record<string, number>
}

export interface DashboardView {
  stats: StatsView
  /** Issued certificates ending within 30 days whose subscription does not renew them. */
  expiringSoon: OrderView[]
  /** Orders waiting for their CSR or domain validation, oldest first. */
  waitingForValidation: OrderView[]
}

export interface ApiKeyView {
  id: number
  prefix: string
  label: string
  createdAt: string
  revokedAt: string | null
  lastUsedAt: string | null
}

/** The settings domain validation uses; empty means the default (system resolver, ports 80/443, the outbox). */
export interface DcvSettingsView {
  dcvResolver: string
  dcvHttpPort: string
  dcvHttpsPort: string
  smtpUrl: string
  smtpFrom: string
  /** Lab use: validation may reach loopback and private addresses (off: refused, as public CAs do). */
  dcvAllowPrivateAddresses: boolean
}

export interface SettingsView extends DcvSettingsView {
  dataDir: string
  listenerUrl: string
  apiVersion: string
  transport: 'electron' | 'browser'
}

export type SettingsInput = Partial<DcvSettingsView>

/** Why a typed setting would be refused, by field; a field the core accepts is absent. */
export type SettingsProblems = Partial<Record<keyof DcvSettingsView, string>>

export interface NameValidationView {
  name: string
  method: DcvMethod
  status: 'pending' | 'valid' | 'failed'
  detail: string | null
  checkedAt: string | null
  validatedAt: string | null
  instructions:
    | { method: 'http' | 'https'; url: string; fileName: string; fileContent: string }
    | { method: 'dns'; recordName: string; recordType: 'CNAME' | 'TXT'; recordValue: string; txtAlternative: string }
    | { method: 'email'; approverEmail: string; sentAt: string | null }
}

/** A CSR generated here with the order's kept key, waiting to be submitted. */
export interface CsrDraftView {
  csrPem: string
  /** When it was generated, UTC `YYYY-MM-DD HH:MM:SS`. */
  createdAt: string
}

export interface CertificateView {
  id: number
  serial: string
  issuer: string
  certificatePem: string
  chainPem: string
  names: string[]
  validFrom: string
  validTill: string
  reason: 'initial' | 'reissue' | 'auto_reissue'
  createdAt: string
}

export interface SslStatusView {
  order: OrderView
  dcvMethod: DcvMethod | 'none' | null
  approverEmail: string | null
  names: string[]
  validation: NameValidationView[]
  certificate: CertificateView | null
}

export interface CertificateDetailView {
  certificate: CertificateView | null
  daysRemaining: number | null
  isExpired: boolean
  /** Every certificate issued for the order, newest first (reissues included). */
  history: CertificateView[]
}

/** An approval message kept by CertDesk (the outbox when no SMTP relay is set, or a copy). */
export interface OutboxMessageView {
  id: number
  /** The name the message asks approval for. */
  name: string | null
  to: string
  subject: string
  body: string
  delivery: string
  createdAt: string
}

export interface ReissueInput {
  orderId: number
  csr?: string
  dcvMethod?: DcvMethod
  approverEmail?: string
  /** The key `csr` was generated from in the app: kept with the certificate issued for it. */
  privateKeyPem?: string
}

export interface ConfigureInput {
  orderId: number
  csr: string
  dcvMethod: DcvMethod
  approverEmail?: string
  /** Email validation: the approver address of each name (name → address). */
  approvers?: Record<string, string>
}

export type DeployLayout = 'nginx' | 'apache' | 'haproxy' | 'iis'
export type DeployTargetKind = 'folder' | 'command' | 'webhook'
export type DeployRunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'superseded'

/** A deploy target as the renderer adds it; the core checks the values. */
export type DeployTargetInput =
  | { kind: 'folder'; path: string; layout?: DeployLayout; pfx?: boolean }
  | { kind: 'command'; command: string; timeoutSeconds?: number }
  | { kind: 'webhook'; url: string }

export interface DeployRunView {
  id: number
  targetId: number
  kind: DeployTargetKind
  serial: string
  trigger: 'issued' | 'reissued' | 'auto_reissue' | 'manual'
  status: DeployRunStatus
  attempts: number
  nextAttemptAt: string | null
  lastError: string | null
  /** The last attempt's summary (files written, exit code, HTTP status), null before the first. */
  summary: string | null
  createdAt: string
  updatedAt: string
}

export interface DeployTargetView {
  id: number
  kind: DeployTargetKind
  /** Folder targets. */
  path: string | null
  layout: DeployLayout | null
  pfx: boolean
  /** Command targets. */
  command: string | null
  timeoutSeconds: number | null
  /** Webhook targets. */
  url: string | null
  createdAt: string
  /** The newest run on this target, null before the first. */
  lastRun: DeployRunView | null
}

export interface CreatedDeployTargetView {
  target: DeployTargetView
  /** Shown once: the webhook secret or the PFX password CertDesk created in the keychain. */
  secret: { name: 'webhook_secret' | 'pfx_password'; value: string } | null
}

/** An ACME subscription order with its set-up, the HMAC key left out (`acmeHmacKey` reads it). */
export interface AcmeSubscriptionView {
  orderId: number
  orderNumber: string
  productName: string
  status: 'active' | 'cancelled' | 'expired'
  category: 'caas' | 'ais'
  domains: string[]
  begin: string
  nextRenewal: string
  end: string | null
  eabKid: string
  serverUrl: string
  accountStatus: 'valid' | 'pending'
  accounts: { url: string; status: string; createdAt: string }[]
  rootCaUrl: string
  /** Ready-to-paste commands, HMAC_KEY_PLACEHOLDER in place of the HMAC key (`acmeHmacKey` answers the real ones). */
  commands: AcmeCommandsView
  setupUrl: string | null
}

/** The set-up commands as the core builds them, every value shell-quoted; the renderer shows them as they are. */
export interface AcmeCommandsView {
  rootCa: string
  certbot: string
  lego: string
  acmeSh: string
}

/**
 * The approver mailboxes of email validation, CA/B Baseline Requirements §3.2.2.4.4 (constructed
 * email to the domain contact), for the UI's choice per name. The core checks against its own
 * copy (src-main/core/cab-policy.ts); test/app/email-approvers.test.ts keeps the two equal.
 */
export const APPROVER_LOCAL_PARTS = ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster'] as const

/** Stands for the EAB HMAC key in `AcmeSubscriptionView.commands`. */
export const HMAC_KEY_PLACEHOLDER = '<EAB_HMAC_KEY>'

export interface AppApi {
  /** Where the reseller API listens and which transport the UI runs over. */
  settings(): Promise<SettingsView>
  /** Saves every value or none: a value the core refuses fails the call with its reason (400). */
  updateSettings(input: SettingsInput): Promise<SettingsView>
  /** The core's reason for each value it would refuse, so the UI can say it next to the field. */
  checkSettings(input: SettingsInput): Promise<SettingsProblems>

  listResellers(): Promise<ResellerView[]>
  createReseller(input: {
    name: string
    email: string
    company?: string
    groupId?: number | null
    discountRate?: number
  }): Promise<ResellerView>

  dashboard(resellerId: number): Promise<DashboardView>

  listProducts(resellerId: number, filter: ProductFilter): Promise<ProductView[]>
  quoteOrder(resellerId: number, input: OrderInput): Promise<QuoteView>
  createOrder(resellerId: number, input: OrderInput, payment: PaymentMethod): Promise<CreatedOrderView>
  listOrders(resellerId: number, filter: OrderFilter, page: PageRequest): Promise<PageView<OrderView>>
  getOrder(resellerId: number, orderId: number): Promise<OrderView>
  cancelOrder(resellerId: number, orderId: number): Promise<CancelledOrderView>
  payOrder(resellerId: number, orderId: number): Promise<{ order: OrderView; amountPaid: Cents; newBalance: Cents }>

  /**
   * Keeps a private key generated in the UI for an order, encrypted with a key from the OS
   * keychain. The reseller HTTP API never returns it.
   */
  storePrivateKey(resellerId: number, orderId: number, pkcs8Pem: string): Promise<{ stored: true }>
  /**
   * Keeps a key and the CSR generated with it in the UI for an order waiting for its CSR, until
   * it is submitted or discarded: the key encrypted like `storePrivateKey`, the CSR beside it.
   * Refused unless the CSR was signed by that key.
   */
  keepCsrDraft(resellerId: number, orderId: number, draft: { pkcs8Pem: string; csrPem: string }): Promise<CsrDraftView>
  /** The kept, unsubmitted CSR of an order waiting for one; null when there is none. */
  csrDraft(resellerId: number, orderId: number): Promise<CsrDraftView | null>
  /** Forgets the kept key and CSR of an order that has not taken a CSR. */
  discardCsrDraft(resellerId: number, orderId: number): Promise<{ discarded: true }>
  /**
   * The stored key, for the desktop user's own export, and whether it belongs to the order's
   * current certificate (null before one exists): after a reissue from another CSR it does not.
   */
  exportPrivateKey(
    resellerId: number,
    orderId: number
  ): Promise<{ pkcs8Pem: string; matchesCertificate: boolean | null }>
  /**
   * The kept key as an encrypted PKCS#8 PEM ("BEGIN ENCRYPTED PRIVATE KEY"), built in the main
   * process so the page never holds the password-based encryption.
   */
  exportEncryptedKey(resellerId: number, orderId: number, password: string): Promise<{ pem: string }>
  /**
   * A PKCS#12 file of the kept key, the current certificate and its chain, with friendlyName and
   * localKeyID on the key and the certificate (RFC 7292 §4.2), built in the main process.
   * Refused when the kept key is not the current certificate's key. The file is base64.
   */
  exportPfx(resellerId: number, orderId: number, password: string): Promise<{ pfxBase64: string }>
  configureOrder(resellerId: number, input: ConfigureInput): Promise<SslStatusView>
  /** Runs the pending domain checks now (issuing once every name passed) and answers the status. */
  sslStatus(resellerId: number, orderId: number): Promise<SslStatusView>
  changeDcv(resellerId: number, orderId: number, method: DcvMethod, approverEmail?: string): Promise<SslStatusView>
  resendValidation(resellerId: number, orderId: number): Promise<SslStatusView>
  /** Approval messages of an order kept by CertDesk, newest first. */
  emailOutbox(resellerId: number, orderId: number): Promise<OutboxMessageView[]>
  /** Records an email approval with the code from the message; with `name`, the code of that name. */
  approveEmail(resellerId: number, orderId: number, code: string, name?: string): Promise<SslStatusView>
  /** Another approver address for one name waiting for email approval; a new code is mailed to it. */
  chooseApprover(resellerId: number, orderId: number, name: string, approverEmail: string): Promise<SslStatusView>
  reissue(resellerId: number, input: ReissueInput): Promise<SslStatusView>
  certificate(resellerId: number, orderId: number): Promise<CertificateDetailView>
  /** The local CA's root, for trust stores. */
  caRootPem(): Promise<{ pem: string }>

  /** The order's deploy targets with their newest run. */
  listDeployTargets(resellerId: number, orderId: number): Promise<DeployTargetView[]>
  addDeployTarget(resellerId: number, orderId: number, input: DeployTargetInput): Promise<CreatedDeployTargetView>
  removeDeployTarget(resellerId: number, orderId: number, targetId: number): Promise<{ removed: true }>
  /** Deploys the current certificate to every target now and answers the runs' outcome. */
  deployNow(resellerId: number, orderId: number): Promise<DeployRunView[]>
  listDeployRuns(resellerId: number, orderId: number, page: PageRequest): Promise<PageView<DeployRunView>>

  /** The reseller's ACME subscription orders, newest first. */
  listAcmeSubscriptions(resellerId: number): Promise<AcmeSubscriptionView[]>
  /** The EAB HMAC key of a subscription, read from the OS keychain on an explicit request, and the commands holding it. */
  acmeHmacKey(resellerId: number, orderId: number): Promise<{ eabHmacKey: string; commands: AcmeCommandsView }>

  listInvoices(
    resellerId: number,
    filter: { status?: InvoiceStatus },
    page: PageRequest
  ): Promise<PageView<InvoiceView>>
  listTransactions(resellerId: number, page: PageRequest): Promise<PageView<TransactionView>>
  topUp(resellerId: number, amount: Cents, description: string): Promise<TransactionView>

  listApiKeys(resellerId: number): Promise<ApiKeyView[]>
  /** The plain key is in this answer once; afterwards only `revealApiKey` reads it from the keychain. */
  createApiKey(resellerId: number, label: string): Promise<{ key: string; info: ApiKeyView }>
  revealApiKey(resellerId: number, keyId: number): Promise<{ key: string }>
  revokeApiKey(resellerId: number, keyId: number): Promise<ApiKeyView>
}

export type AppMethod = keyof AppApi

/**
 * The method names at run time (types vanish). `satisfies` makes the compiler refuse both a
 * missing and an extra name, so this list is checked against `AppApi`, not kept by hand.
 */
export const APP_METHODS = {
  settings: true,
  updateSettings: true,
  checkSettings: true,
  listResellers: true,
  createReseller: true,
  dashboard: true,
  listProducts: true,
  quoteOrder: true,
  createOrder: true,
  listOrders: true,
  getOrder: true,
  cancelOrder: true,
  payOrder: true,
  storePrivateKey: true,
  keepCsrDraft: true,
  csrDraft: true,
  discardCsrDraft: true,
  exportPrivateKey: true,
  exportEncryptedKey: true,
  exportPfx: true,
  configureOrder: true,
  sslStatus: true,
  changeDcv: true,
  resendValidation: true,
  emailOutbox: true,
  approveEmail: true,
  chooseApprover: true,
  reissue: true,
  certificate: true,
  caRootPem: true,
  listDeployTargets: true,
  addDeployTarget: true,
  removeDeployTarget: true,
  deployNow: true,
  listDeployRuns: true,
  listAcmeSubscriptions: true,
  acmeHmacKey: true,
  listInvoices: true,
  listTransactions: true,
  topUp: true,
  listApiKeys: true,
  createApiKey: true,
  revealApiKey: true,
  revokeApiKey: true
} as const satisfies Record<AppMethod, true>

export const appMethodNames = Object.keys(APP_METHODS) as AppMethod[]

export const isAppMethod = (name: string): name is AppMethod => Object.hasOwn(APP_METHODS, name)

/** IPC channels are `certdesk:<method>`; main refuses any other channel (VS Code's prefix check). */
export const CHANNEL_PREFIX = 'certdesk:'

/** Browser mode: POST `/rpc/<method>` with `{ args: [...] }`. */
export const RPC_PREFIX = '/rpc/'

/** Browser mode: POST here ends the session on the server (the sign-out button). */
export const SIGN_OUT_PATH = '/ui/logout'

/**
 * What a handler answers on either transport, in the reseller API's envelope; the client turns
 * a failure into an Error carrying the API's message, so the UI cannot tell the transports apart.
 */
export type BridgeResult<T> = { success: true; result: T } | { success: false; error: string }

export function unwrap<T>(r: BridgeResult<T>): T {
  if (r && r.success === true) return r.result
  throw new Error(r && typeof r.error === 'string' ? r.error : 'could not reach CertDesk: an answer without a result')
}

/** The browser-mode window global name and the Electron one are the same. */
export const BRIDGE_GLOBAL = 'certdesk'
