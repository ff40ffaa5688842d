/**
 * The typed contract between the UI and the main process, as the UI imports it (`import type`
 * only: no schema code may enter the renderer bundle). The method table with its schemas is
 * src-shared/app-api.ts; the records are src-shared/records.ts; the run-time names and prefixes
 * are ./channels.ts, re-exported here for main and the tests.
 */
export type { AppApi, AppMethod } from '../src-shared/app-api'
export type {
  AcmeCommandsView,
  AcmeSubscriptionView,
  ApiKeyView,
  CancelledOrderView,
  Cents,
  CertificateDetailView,
  CertificateView,
  ConfigureInput,
  CreatedDeployTargetView,
  CreatedOrderView,
  CsrDraftView,
  DashboardView,
  DcvMethod,
  DcvSettingsView,
  DeployLayout,
  DeployRunStatus,
  DeployRunView,
  DeployTargetInput,
  DeployTargetKind,
  DeployTargetView,
  InvoiceStatus,
  InvoiceView,
  NameChoice,
  NameValidationView,
  OrderFilter,
  OrderInput,
  OrderStatus,
  OrderView,
  OutboxMessageView,
  Page as PageView,
  PageRequest,
  PaymentMethod,
  ProductFilter,
  ProductType,
  ProductView,
  QuoteView,
  ReissueInput,
  ReissuePlanView,
  PfxEncryption,
  RevocationInput,
  RevocationReason,
  ResellerView,
  SettingsInput,
  SettingsProblems,
  SettingsView,
  SslStatusView,
  StatsView,
  TransactionView,
  ValidationType,
  YearPriceView,
  EndpointInput,
  ExpiringCertificate,
  ImportedCertificate,
  ImportOutcome,
  InstallationBadge,
  InstallationEndpoint,
  InstallationReport,
  ReplacementQuote,
  StartTls,
  UploadedFile,
  Verdict
} from '../src-shared/records'
export * from './channels'
// screens: event log, ACME subscription page
export type { AcmeIssuedCertificateView, AcmeSubscriptionPageView, EventFilter, EventView } from '../src-shared/records'
// alerts
export type {
  AlertChannelInputT as AlertChannelInput,
  AlertChannelViewT as AlertChannelView,
  AlertDeliveryViewT as AlertDeliveryView,
  AlertRuleViewT as AlertRuleView,
  AlertViewT as AlertView
} from '../src-shared/alert-records'
// admins, sessions and the audit log
export type {
  AdminRole,
  AdminView,
  AuditEntry,
  AuditFilter,
  AuditOutcome,
  AuditTargets,
  BookView,
  NewAdmin,
  SessionView,
  TeamSignIn,
  TotpEnrolment
} from '../src-shared/admin-records'
