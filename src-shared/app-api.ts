/**
 * The bridge contract, written once: every method the UI may call, with the TypeBox schema of
 * each argument and of its result. `AppApi` (what the UI calls), the handler table of
 * src-main/app (what main answers) and the argument check both transports run before a handler
 * (src-main/app/validate.ts) all come from this table, so none can drift from another.
 *
 * The UI acts for one reseller account at a time: every reseller-scoped method takes its id
 * first (docs/guide.md, "The desktop app").
 */
import { OrderRenewalView } from './renewal-records'
import {
  AlertChannelInput,
  AlertChannelView,
  AlertDeliveryView,
  AlertRuleChange,
  AlertRuleView,
  AlertView,
  CreatedAlertChannel
} from './alert-records'
import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox'
import type { ADMIN_ROLES } from './constants'
import {
  AdminName,
  AdminRole,
  AdminView,
  AuditEntry,
  AuditFilter,
  NewAdmin,
  Password,
  PasswordChange,
  SessionView,
  TeamSignIn,
  TotpCode,
  TotpEnrolment
} from './admin-records'
import {
  AcmeHmacKeyView,
  AcmeSubscriptionView,
  ApiKeyView,
  CancelledOrderView,
  CertificateDetailView,
  ConfigureInput,
  CreatedDeployTargetView,
  CreatedOrderView,
  CreditTransaction,
  CsrDraft,
  CsrDraftInput,
  DashboardView,
  DcvMethod,
  DeployRunView,
  DeployTargetInput,
  DeployTargetView,
  Id,
  InvoiceFilter,
  Invoice,
  NewReseller,
  OrderFilter,
  OrderInput,
  OrderView,
  OutboxMessageView,
  PageOf,
  PageRequest,
  PaidOrderView,
  PaymentMethod,
  ProductFilter,
  ProductView,
  QuoteView,
  ReissueInput,
  PfxEncryption,
  ReissuePlanView,
  ResellerView,
  RevocationInput,
  SettingsInput,
  SettingsProblems,
  SettingsView,
  SslStatusView,
  Text,
  Cents,
  EndpointInput,
  ExpiringCertificate,
  ImportedCertificate,
  ImportOptions,
  ImportOutcome,
  InstallationBadge,
  InstallationEndpoint,
  InstallationReport,
  ReplacementQuote,
  UploadedFile,
  AcmeSubscriptionPageView,
  EventFilter,
  EventView
} from './records'
import {
  ExportJobView,
  ExportRequest,
  ExportTarget,
  KeyedPageOf,
  LedgerRow,
  ListQuery,
  OrderListRow,
  OrderViewCounts
} from './list-records'

/** A backup the app started: its state, how far it got, and the file it writes. */
const BackupJobView = Type.Object({
  state: Type.Union([Type.Literal('idle'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  percent: Type.Integer({ minimum: 0, maximum: 100 }),
  file: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()])
})

/** One argument: the name a refusal uses, and its schema (`Type.Optional` for a trailing optional one). */
export interface ArgSpec<S extends TSchema = TSchema> {
  name: string
  schema: S
}

/**
 * Who may call a method and what the audit log keeps of it. The bridge checks the role before
 * the handler runs and writes the audit row around it, in one place for both transports
 * (src-main/app/bridge-gate.ts); the UI shows the actions of the methods a session may call.
 */
export interface Access {
  /** The lowest role that may call it (`ADMIN_ROLES`, lowest first). */
  role: (typeof ADMIN_ROLES)[number]
  /**
   * An admin action: every call is kept in the audit log, before it runs and with its outcome.
   * Plain reads are not (a screen that polls would bury the actions); a refused call of any
   * method is always kept.
   */
  audited: boolean
  /**
   * Answered by the process the UI talks to, also while the desktop app is a client of a team
   * server (connecting to one and leaving it); every other method then goes to the team server.
   */
  local?: true
}

export interface MethodSpec {
  args: readonly ArgSpec[]
  result: TSchema
  access: Access
}

const arg = <S extends TSchema>(name: string, schema: S): ArgSpec<S> => ({ name, schema })
const optional = <S extends TSchema>(name: string, schema: S): ArgSpec<TOptional<S>> => ({
  name,
  schema: Type.Optional(schema) as TOptional<S>
})
const kind =
  (access: Access) =>
  <const A extends readonly ArgSpec[], R extends TSchema>(args: A, result: R) => ({ args, result, access })

/** Reads that show nothing secret: every role, not audited. */
const read = kind({ role: 'viewer', audited: false })
/** Reads of what only those who work on orders may see (approval codes): operators, not audited. */
const operatorRead = kind({ role: 'operator', audited: false })
/** Owner-only reads that show no secret (job progress, the admins, the audit log): not audited. */
const ownerRead = kind({ role: 'owner', audited: false })
/** Work on orders, certificates and deploys: operators and owners, audited. */
const operate = kind({ role: 'operator', audited: true })
/**
 * Money, keys and secrets (reading one too), backups, files on the server's machine, settings,
 * reseller accounts and admins: owners only, audited.
 */
const own = kind({ role: 'owner', audited: true })
/** The caller's own account (password, TOTP): every role, audited. */
const self = kind({ role: 'viewer', audited: true })
/** Choosing the book: the desktop user (owner of this machine), answered here, audited. */
const ownHere = kind({ role: 'owner', audited: true, local: true })

const reseller = arg('reseller id', Id)
const WholeNumberArg = Type.Integer({ minimum: 0, must: 'must be a whole number' })
const order = arg('order id', Id)

export const APP_API = {
  /** Where the reseller API listens and which transport the UI runs over. */
  settings: read([], SettingsView),
  /** Saves every value or none: a value the core refuses fails the call with its reason (400). */
  updateSettings: own([arg('input', SettingsInput)], SettingsView),
  /** The core's reason for each value it would refuse, so the UI can say it next to the field. */
  checkSettings: read([arg('input', SettingsInput)], SettingsProblems),

  listResellers: read([], Type.Array(ResellerView)),
  /** Without `groupId` the core puts the new reseller in its default group. */
  createReseller: own([arg('input', NewReseller)], ResellerView),
  /** Changes a reseller's name, email, company, group and discount (all or none). */
  updateReseller: own([reseller, arg('input', NewReseller)], ResellerView),
  /** The reseller groups, for choosing one. */
  listGroups: read([], Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() }))),

  dashboard: read([reseller], DashboardView),

  listProducts: read([reseller, arg('filter', ProductFilter)], Type.Array(ProductView)),
  quoteOrder: read([reseller, arg('input', OrderInput)], QuoteView),
  createOrder: operate([reseller, arg('input', OrderInput), arg('payment', PaymentMethod)], CreatedOrderView),
  listOrders: read([reseller, arg('filter', OrderFilter), arg('page', PageRequest)], PageOf(OrderView)),
  getOrder: read([reseller, order], OrderView),
  cancelOrder: operate([reseller, order], CancelledOrderView),
  payOrder: operate([reseller, order], PaidOrderView),

  /**
   * Keeps a private key generated in the UI for an order, encrypted with a key from the OS
   * keychain. The reseller HTTP API never returns it.
   */
  storePrivateKey: operate([reseller, order, arg('private key', Text)], Type.Object({ stored: Type.Literal(true) })),
  /**
   * Keeps a key and the CSR generated with it in the UI for an order waiting for its CSR, until
   * it is submitted or discarded: the key encrypted like `storePrivateKey`, the CSR beside it.
   * Refused unless the CSR was signed by that key.
   */
  keepCsrDraft: operate([reseller, order, arg('draft', CsrDraftInput)], CsrDraft),
  /** The kept, unsubmitted CSR of an order waiting for one; null when there is none. */
  csrDraft: read([reseller, order], Type.Union([CsrDraft, Type.Null()])),
  /** Forgets the kept key and CSR of an order that has not taken a CSR. */
  discardCsrDraft: operate([reseller, order], Type.Object({ discarded: Type.Literal(true) })),
  /**
   * The stored key, for the desktop user's own export, and whether it belongs to the order's
   * current certificate (null before one exists): after a reissue from another CSR it does not.
   */
  exportPrivateKey: own(
    [reseller, order],
    Type.Object({ pkcs8Pem: Type.String(), matchesCertificate: Type.Union([Type.Boolean(), Type.Null()]) })
  ),
  /**
   * The kept key as an encrypted PKCS#8 PEM ("BEGIN ENCRYPTED PRIVATE KEY"), built in the main
   * process so the page never holds the password-based encryption.
   */
  exportEncryptedKey: own([reseller, order, arg('password', Text)], Type.Object({ pem: Type.String() })),
  /**
   * A PKCS#12 file of the kept key, the current certificate and its chain, with friendlyName and
   * localKeyID on the key and the certificate (RFC 7292 §4.2), built in the main process.
   * Refused when the kept key is not the current certificate's key. The file is base64.
   * `encryption`: AES-256 (the default) or the legacy 3DES/SHA-1 profile older Windows reads.
   */
  exportPfx: own(
    [reseller, order, arg('password', Text), optional('encryption', PfxEncryption)],
    Type.Object({ pfxBase64: Type.String() })
  ),
  configureOrder: operate([reseller, arg('input', ConfigureInput)], SslStatusView),
  /** Runs the pending domain checks now (issuing once every name passed) and answers the status. */
  sslStatus: operate([reseller, order], SslStatusView),
  /** The status as it stands, without running a check: what a viewer's order page shows. */
  storedSslStatus: read([reseller, order], SslStatusView),
  changeDcv: operate([reseller, order, arg('method', DcvMethod), optional('approver email', Text)], SslStatusView),
  /** Another method for one name not yet validated; every other name stays as it is. */
  changeNameDcv: operate(
    [reseller, order, arg('name', Text), arg('method', DcvMethod), optional('approver email', Text)],
    SslStatusView
  ),
  /** The constructed approver addresses of each name (BR §3.2.2.4.4), for choosing before a CSR is submitted. */
  approverChoices: read(
    [arg('names', Type.Array(Text, { maxItems: 1000 }))],
    Type.Record(Type.String(), Type.Array(Type.String()))
  ),
  resendValidation: operate([reseller, order], SslStatusView),
  /** Approval messages of an order kept by CertDesk, newest first. */
  emailOutbox: operatorRead([reseller, order], Type.Array(OutboxMessageView)),
  /** Records an email approval with the code from the message; with `name`, the code of that name. */
  approveEmail: operate([reseller, order, arg('code', Text), optional('name', Text)], SslStatusView),
  /** Another approver address for one name waiting for email approval; a new code is mailed to it. */
  chooseApprover: operate([reseller, order, arg('name', Text), arg('approver email', Text)], SslStatusView),
  reissue: operate([reseller, arg('input', ReissueInput)], SslStatusView),
  /** What a reissue for `names` (the current names by default) would do: validation, validity, deploys. */
  reissuePlan: read([reseller, order, optional('names', Type.Array(Text, { maxItems: 1000 }))], ReissuePlanView),
  certificate: read([reseller, order], CertificateDetailView),
  /**
   * Revokes a certificate of the order (the current one unless `certificateId` names another)
   * with an RFC 5280 reason: onto the local CA's CRL, or at the external ACME CA that issued it.
   */
  revokeCertificate: operate([reseller, order, arg('revocation', RevocationInput)], CertificateDetailView),
  /** The local CA's root, for trust stores. */
  caRootPem: read([], Type.Object({ pem: Type.String() })),

  /** The order's deploy targets with their newest run. */
  listDeployTargets: read([reseller, order], Type.Array(DeployTargetView)),
  addDeployTarget: own([reseller, order, arg('target', DeployTargetInput)], CreatedDeployTargetView),
  removeDeployTarget: operate([reseller, order, arg('target id', Id)], Type.Object({ removed: Type.Literal(true) })),
  /** Deploys the current certificate to every target now and answers the runs' outcome. */
  deployNow: operate([reseller, order], Type.Array(DeployRunView)),
  listDeployRuns: read([reseller, order, arg('page', PageRequest)], PageOf(DeployRunView)),

  /** The reseller's ACME subscription orders, newest first. */
  listAcmeSubscriptions: read([reseller], Type.Array(AcmeSubscriptionView)),
  /** The EAB HMAC key of a subscription, read from the OS keychain on an explicit request, and the commands holding it. */
  acmeHmacKey: own([reseller, order], AcmeHmacKeyView),

  listInvoices: read([reseller, arg('filter', InvoiceFilter), arg('page', PageRequest)], PageOf(Invoice)),
  listTransactions: read([reseller, arg('page', PageRequest)], PageOf(CreditTransaction)),
  topUp: own([reseller, arg('amount', Cents), optional('description', Text)], CreditTransaction),

  listApiKeys: read([reseller], Type.Array(ApiKeyView)),
  /** The plain key is in this answer once; afterwards only `revealApiKey` reads it from the keychain. */
  createApiKey: own([reseller, optional('label', Text)], Type.Object({ key: Type.String(), info: ApiKeyView })),
  revealApiKey: own([reseller, arg('key id', Id)], Type.Object({ key: Type.String() })),
  revokeApiKey: own([reseller, arg('key id', Id)], ApiKeyView),

  // What servers really present, certificates bought elsewhere, and the expiry report.
  /** The newest installation results of an order, without connecting anywhere. */
  installationReport: read([reseller, order], InstallationReport),
  /** Connects to each name and endpoint of the order now and answers the new results. */
  checkInstallation: operate([reseller, order], InstallationReport),
  addInstallationEndpoint: operate([reseller, order, arg('endpoint', EndpointInput)], InstallationEndpoint),
  removeInstallationEndpoint: operate(
    [reseller, order, arg('endpoint id', Id)],
    Type.Object({ removed: Type.Literal(true) })
  ),
  /** The badge of each checked order among `order ids` (a page of the orders list). */
  installationBadges: read(
    [reseller, arg('order ids', Type.Array(Id, { maxItems: 500 }))],
    Type.Record(Type.String(), InstallationBadge)
  ),
  listImported: read([reseller], Type.Array(ImportedCertificate)),
  /** Files the user picked: PEM, DER or PFX (the password in `options`). */
  importUploads: operate(
    [reseller, arg('files', Type.Array(UploadedFile, { maxItems: 50 })), arg('options', ImportOptions)],
    ImportOutcome
  ),
  /** A folder on this machine, scanned recursively (links are not followed). */
  importFolder: own([reseller, arg('folder', Text), arg('options', ImportOptions)], ImportOutcome),
  /** `host:port`, `address:port` or a local range such as `192.168.1.0/24:443`. */
  importEndpoints: operate([reseller, arg('endpoints', Type.Array(Text, { maxItems: 64 }))], ImportOutcome),
  replacementQuote: read([reseller, arg('imported id', Id)], ReplacementQuote),
  /** Places the replacement order in one step (from credit or on invoice). */
  renewImported: operate([reseller, arg('imported id', Id), arg('payment', PaymentMethod)], CreatedOrderView),
  expiringReport: read([reseller, arg('days', WholeNumberArg)], Type.Array(ExpiringCertificate)),
  /** The same report as CSV (RFC 4180) for a spreadsheet. */
  expiringCsv: read([reseller, arg('days', WholeNumberArg)], Type.Object({ csv: Type.String() })),
  // Backup of the store from the settings screen (docs/backup.md): started, then polled for progress.
  /** Starts a consistent copy of the store into `folder` (default `<data dir>/backups`); answers at once. */
  startBackup: own([optional('folder', Text)], BackupJobView),
  backupProgress: ownerRead([], BackupJobView),
  // Renewal automation: the window (RFC 9773), delegation CNAMEs and dns-persist-01 records of an order.
  orderRenewal: read([reseller, order], OrderRenewalView),
  /** Switches how the order renews at the external ACME CA (dns renews with nobody once set up). */
  setRenewalMethod: operate([reseller, order, arg('method', DcvMethod)], OrderRenewalView),
  // ---- screens: event log, ACME subscription page, invoice document, validation cancel
  /** The reseller's events, newest first, as GET /events pages them. */
  listEvents: read([reseller, arg('filter', EventFilter), arg('page', PageRequest)], PageOf(EventView)),
  /** An ACME subscription order with the certificates issued through it; null for any other order. */
  acmeSubscription: read([reseller, order], Type.Union([AcmeSubscriptionPageView, Type.Null()])),
  /** One invoice of the reseller, for the printable invoice page. */
  getInvoice: read([reseller, arg('invoice id', Id)], Invoice),
  /** Stops the first validation of an order: its CSR and checks are dropped and it waits for a CSR again. */
  cancelValidation: operate([reseller, order], SslStatusView),
  // Lists paged by key and CSV exports written by the main process (src-main/core/list-pages.ts).
  orderPage: read([reseller, arg('query', ListQuery)], KeyedPageOf(OrderListRow)),
  /** How many orders each saved view of the orders list holds. */
  orderViewCounts: read([reseller], OrderViewCounts),
  invoicePage: read([reseller, arg('query', ListQuery)], KeyedPageOf(Invoice)),
  ledgerPage: read([reseller, arg('query', ListQuery)], KeyedPageOf(LedgerRow)),
  /** The desktop app's save dialog answers the path; browser mode answers a suggestion to edit. */
  chooseExportPath: ownerRead([arg('file name', Text)], ExportTarget),
  startExport: own([reseller, arg('export', ExportRequest)], ExportJobView),
  exportJobs: ownerRead([], Type.Array(ExportJobView)),
  cancelExport: own([arg('export id', Id)], ExportJobView),
  /** Forgets a finished export: its notice is gone for good. */
  dismissExport: own([arg('export id', Id)], Type.Object({ dismissed: Type.Literal(true) })),
  /** Forgets every finished export (before signing out). */
  dismissFinishedExports: own([], Type.Object({ dismissed: Type.Literal(true) })),
  // Alerts (the admin's, not one reseller's): rules, channels, a test message, alerts and deliveries.
  alertRules: read([], Type.Array(AlertRuleView)),
  /** Turns a rule on or off; `thresholdHours` is the validation wait (validation_waiting only). */
  updateAlertRule: operate([arg('rule', Text), arg('change', AlertRuleChange)], AlertRuleView),
  alertChannels: read([], Type.Array(AlertChannelView)),
  /** Credentials go to the keychain; a generic webhook's signing secret is answered once. */
  addAlertChannel: own([arg('channel', AlertChannelInput)], CreatedAlertChannel),
  removeAlertChannel: own([arg('channel id', Id)], Type.Object({ removed: Type.Literal(true) })),
  /** Sends a test message to the channel now and answers its delivery. */
  testAlertChannel: operate([arg('channel id', Id)], AlertDeliveryView),
  /** The newest deliveries first. */
  alertDeliveries: read([arg('page', PageRequest)], PageOf(AlertDeliveryView)),
  /** Alerts raised, newest first. */
  listAlerts: read([arg('page', PageRequest)], PageOf(AlertView)),
  // ---- who the UI acts as, which book it is on, admins and the audit log
  /** The caller, their role, the book, and the methods the role may call. */
  session: read([], SessionView),
  /**
   * The desktop app signs in to a team server and works on its book from then on (every method
   * but these `here` ones goes there); refused on a server that signs admins in itself.
   */
  connectTeam: ownHere([arg('sign-in', TeamSignIn)], SessionView),
  /** Signs out of the team server and works on this machine's own book again. */
  disconnectTeam: ownHere([], SessionView),
  changePassword: self([arg('passwords', PasswordChange)], Type.Object({ changed: Type.Literal(true) })),
  /** A new TOTP secret for the caller's account, in use once `confirmTotp` has seen a code from it. */
  beginTotp: self([], TotpEnrolment),
  confirmTotp: self([arg('code', TotpCode)], SessionView),
  /** Turns TOTP off for the caller's account; the password proves it is them. */
  disableTotp: self([arg('password', Password)], SessionView),
  listAdmins: ownerRead([], Type.Array(AdminView)),
  addAdmin: own([arg('admin', NewAdmin)], AdminView),
  /** Ends the admin's sessions, so the new role holds from their next sign-in. */
  setAdminRole: own([arg('name', AdminName), arg('role', AdminRole)], AdminView),
  /** A disabled admin cannot sign in, and their sessions end at once. */
  setAdminEnabled: own(
    [arg('name', AdminName), arg('enabled', Type.Boolean({ must: 'must be true or false' }))],
    AdminView
  ),
  /** The audit log, newest first; it has no method that changes or removes an entry. */
  auditLog: ownerRead([arg('filter', AuditFilter), arg('page', PageRequest)], PageOf(AuditEntry))
} as const satisfies Record<string, MethodSpec>

/** The access of every method, as the bridge checks it and the audit log keeps it. */
export const accessOf = (method: AppMethod): Access => APP_API[method].access

export type AppMethod = keyof typeof APP_API

/** The TypeScript parameters of a method: each argument's `Static<>`, trailing optional ones optional. */
type Params<A extends readonly ArgSpec[]> = A extends readonly [
  infer H extends ArgSpec,
  ...infer R extends readonly ArgSpec[]
]
  ? H['schema'] extends TOptional<TSchema>
    ? [arg?: Static<H['schema']>, ...Params<R>]
    : [Static<H['schema']>, ...Params<R>]
  : []

/** The bridge as the UI calls it, derived from the table. */
export type AppApi = {
  [K in AppMethod]: (...args: Params<(typeof APP_API)[K]['args']>) => Promise<Static<(typeof APP_API)[K]['result']>>
}
