/**
 * What servers present (the installation checker), certificates bought elsewhere (imports) and
 * the expiry report, as the core returns them and the bridge carries them.
 */
import { Type, type Static } from '@sinclair/typebox'
import { OneOf, Nullable, NullableStamp, Stamp, Text, Flag, WholeNumber } from './schema-kit'
import { OrderView, QuoteView, Stats } from './account-records'

/** Verdicts from worst to best; an order's badge is the worst verdict of its endpoints. */
export const INSTALLATION_VERDICTS = [
  'unreachable',
  'revoked',
  'other_certificate',
  'old_certificate',
  'expired',
  'hostname_mismatch',
  'chain_incomplete',
  'ok'
] as const
export const STARTTLS_PROTOCOLS = ['smtp', 'imap', 'pop3'] as const

export const Verdict = OneOf(INSTALLATION_VERDICTS)
export type Verdict = Static<typeof Verdict>
export const StartTls = OneOf(STARTTLS_PROTOCOLS)
export type StartTls = Static<typeof StartTls>

export const InstallationEndpoint = Type.Object({
  id: Type.Integer(),
  orderId: Type.Integer(),
  host: Type.String(),
  port: Type.Integer(),
  /** Connect here instead of resolving `host` (one server of many, like curl's --resolve). */
  address: Nullable(Type.String()),
  starttls: Nullable(StartTls)
})
export type InstallationEndpoint = Static<typeof InstallationEndpoint>

export const EndpointInput = Type.Object(
  {
    host: Text,
    port: Type.Optional(WholeNumber),
    address: Type.Optional(Nullable(Text)),
    starttls: Type.Optional(Nullable(StartTls))
  },
  { must: 'must be { host, port?, address?, starttls? }' }
)
export type EndpointInput = Static<typeof EndpointInput>

export const InstallationResult = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  verdict: Verdict,
  label: Type.String(),
  detail: Type.String(),
  servedSerial: Nullable(Type.String()),
  servedValidTill: NullableStamp,
  checkedAt: Stamp
})
export type InstallationResult = Static<typeof InstallationResult>

export const InstallationReport = Type.Object({
  orderId: Type.Integer(),
  orderNumber: Type.String(),
  /** Null before the first check. */
  verdict: Nullable(Verdict),
  label: Type.String(),
  checkedAt: NullableStamp,
  results: Type.Array(InstallationResult),
  endpoints: Type.Array(InstallationEndpoint)
})
export type InstallationReport = Static<typeof InstallationReport>

export const InstallationBadge = Type.Object({ verdict: Verdict, label: Type.String(), checkedAt: Stamp })
export type InstallationBadge = Static<typeof InstallationBadge>

export const ValidationLevel = OneOf(['dv', 'ov', 'ev', 'unknown'] as const)
export type ValidationLevel = Static<typeof ValidationLevel>

export const ImportedCertificate = Type.Object({
  id: Type.Integer(),
  resellerId: Type.Integer(),
  /** SHA-256 of the DER, lower-case hex. */
  fingerprint: Type.String(),
  commonName: Nullable(Type.String()),
  names: Type.Array(Type.String()),
  domain: Type.String(),
  issuer: Type.String(),
  serial: Type.String(),
  validFrom: Stamp,
  validTill: Stamp,
  validationLevel: ValidationLevel,
  /** `file:<path>`, `upload:<name>` or `endpoint:<host>:<port>`. */
  source: Type.String(),
  keyKept: Type.Boolean(),
  replacementOrderId: Nullable(Type.Integer()),
  createdAt: Stamp
})
export type ImportedCertificate = Static<typeof ImportedCertificate>

export const ImportOutcome = Type.Object({
  imported: Type.Array(ImportedCertificate),
  /** Already known for this reseller (same fingerprint): not imported twice. */
  duplicates: Type.Array(Type.Object({ source: Type.String(), id: Type.Integer() })),
  /** Files or endpoints that gave no certificate, and why. */
  skipped: Type.Array(Type.Object({ source: Type.String(), reason: Type.String() })),
  /** Where a private key was found and left in place. */
  keysLeftInPlace: Type.Array(Type.String())
})
export type ImportOutcome = Static<typeof ImportOutcome>

export const ImportOptions = Type.Object(
  {
    password: Type.Optional(Text),
    withKeys: Type.Optional(Flag),
    /** Folder imports: follow symbolic links that stay inside the folder (Let's Encrypt's live/ → archive/). */
    followLinks: Type.Optional(Flag)
  },
  { must: 'must be { password?, withKeys?, followLinks? }' }
)
export type ImportOptions = Static<typeof ImportOptions>

/** A file the user picked in the UI, carried as base64 (a certificate file is a few kB). */
export const UploadedFile = Type.Object(
  { name: Text, base64: Type.String({ maxLength: 1_500_000, must: 'must be base64 of at most 1 MB' }) },
  { must: 'must be { name, base64 }' }
)
export type UploadedFile = Static<typeof UploadedFile>

export const ReplacementQuote = Type.Object({
  importedId: Type.Integer(),
  productId: Type.Integer(),
  quote: QuoteView,
  input: Type.Object({
    productId: Type.Integer(),
    domain: Type.String(),
    period: Type.Integer(),
    sanCount: Type.Integer(),
    sanWildcardCount: Type.Integer()
  })
})
export type ReplacementQuote = Static<typeof ReplacementQuote>

export const ExpiringCertificate = Type.Object({
  kind: OneOf(['issued', 'imported'] as const),
  resellerId: Type.Integer(),
  resellerName: Type.String(),
  /** The order number (issued) or `IMP-<id>` (imported). */
  reference: Type.String(),
  orderId: Nullable(Type.Integer()),
  importedId: Nullable(Type.Integer()),
  domain: Type.String(),
  validTill: Stamp,
  daysLeft: Type.Integer(),
  /** When CertDesk reissues it on its own; null when nothing is planned. */
  renewalPlannedAt: NullableStamp,
  contact: Type.String()
})
export type ExpiringCertificate = Static<typeof ExpiringCertificate>

/** The dashboard's look at the expiry report (core/reports.ts, `expiringSummary`). */
export const ExpiringSummary = Type.Object({
  days: Type.Integer(),
  /** Every certificate ending within `days`, issued here or imported: what the report lists. */
  total: Type.Integer(),
  /** Of those, the ones no automatic reissue replaces. */
  withoutRenewal: Type.Integer(),
  /** The soonest of those. */
  soonest: Type.Array(ExpiringCertificate)
})
export type ExpiringSummary = Static<typeof ExpiringSummary>

export const DashboardView = Type.Object({
  stats: Stats,
  /** Certificates ending within 30 days, issued here or imported (the expiry report's rows). */
  expiring: ExpiringSummary,
  /** Orders waiting for their CSR or domain validation, oldest first. */
  waitingForValidation: Type.Array(OrderView)
})
export type DashboardView = Static<typeof DashboardView>
