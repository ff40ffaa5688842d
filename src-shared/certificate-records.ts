/** Certificates and domain validation, deploy targets and runs, and ACME subscriptions. */
import { Type, type Static } from '@sinclair/typebox'
import {
  DcvMethod,
  DeployLayout,
  DeployRunStatus,
  DeployTargetKind,
  DeployTrigger,
  Flag,
  Id,
  Nullable,
  NullableStamp,
  OneOf,
  RevocationReason,
  Stamp,
  Text,
  WholeNumber
} from './schema-kit'
import { OrderView } from './account-records'
import { REVOCATION_REASONS } from './constants'
import { UnattendedRenewalView } from './renewal-records'

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
    Type.Object({
      method: Type.Literal('email'),
      approverEmail: Type.String(),
      sentAt: NullableStamp,
      /** Every constructed address the name may be approved at (BR §3.2.2.4.4), the name's own first. */
      approverChoices: Type.Array(Type.String())
    })
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
  createdAt: Stamp,
  /** When it was revoked, and why (RFC 5280 §5.3.1); null while it is not. */
  revokedAt: NullableStamp,
  revocationReason: Nullable(RevocationReason)
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
  certificate: Nullable(CertificateView),
  /** Whether renewals at the external ACME CA run with nobody; null for the local CA. */
  unattendedRenewal: Type.Union([UnattendedRenewalView, Type.Null()])
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

/** A name validated by a method of its own, and its approver when that is email. */
export const NameChoice = Type.Object(
  {
    name: Text,
    method: DcvMethod,
    approverEmail: Type.Optional(Type.String({ title: 'approver email', must: 'must be text' }))
  },
  { title: 'name choice', must: 'must be { name, method, approverEmail? }' }
)
export type NameChoice = Static<typeof NameChoice>
const NameChoices = Type.Array(NameChoice, { maxItems: 1000, title: 'per-name methods', must: 'must be a list' })

export const ConfigureInput = Type.Object(
  {
    orderId: Type.Integer({ minimum: 1, title: 'order id', must: 'must be a positive whole number' }),
    csr: Text,
    dcvMethod: DcvMethod,
    approverEmail: Type.Optional(Type.String({ title: 'approver email', must: 'must be text' })),
    approvers: Type.Optional(Approvers),
    perName: Type.Optional(NameChoices)
  },
  { must: 'must be { orderId, csr, dcvMethod, approverEmail?, approvers?, perName? }' }
)
export type ConfigureInput = Static<typeof ConfigureInput>

export const ReissueInput = Type.Object(
  {
    orderId: Type.Integer({ minimum: 1, title: 'order id', must: 'must be a positive whole number' }),
    csr: Type.Optional(Text),
    dcvMethod: Type.Optional(DcvMethod),
    approverEmail: Type.Optional(Type.String({ title: 'approver email', must: 'must be text' })),
    perName: Type.Optional(NameChoices),
    /** The names of the new certificate with the same key (a CSR is made from the kept key). */
    names: Type.Optional(Type.Array(Text, { maxItems: 1000, title: 'names', must: 'must be a list of names' })),
    /** The key `csr` was generated from in the app: kept with the certificate issued for it. */
    privateKeyPem: Type.Optional(Type.String({ title: 'private key', must: 'must be text' }))
  },
  { must: 'must be { orderId, csr?, dcvMethod?, approverEmail?, perName?, names?, privateKeyPem? }' }
)
export type ReissueInput = Static<typeof ReissueInput>

/**
 * How a PFX export is encrypted: AES-256 (PBES2, the default), or the RFC 7292 3DES/SHA-1
 * profile for Windows before Server 2019 (weaker; offered beside AES-256 only).
 */
export const PfxEncryption = Type.Union([Type.Literal('aes-256'), Type.Literal('legacy-3des')], {
  title: 'encryption',
  must: 'must be aes-256 or legacy-3des'
})
export type PfxEncryption = Static<typeof PfxEncryption>

/** What a reissue would do (core/certificates/reissue-plan.ts), for the confirmation. */
export const ReissuePlanView = Type.Object({
  names: Type.Array(Type.String()),
  added: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  included: Type.Array(Type.String()),
  allowance: Nullable(
    Type.Object({
      names: Type.Object({ used: Type.Integer(), paid: Type.Integer() }),
      wildcards: Type.Object({ used: Type.Integer(), paid: Type.Integer() })
    })
  ),
  validation: Type.Array(Type.Object({ name: Type.String(), method: DcvMethod, reused: Type.Boolean() })),
  validFrom: Stamp,
  validTill: Stamp,
  deploys: Type.Array(Type.Object({ kind: Type.String(), target: Type.String() })),
  current: Type.Object({ serial: Type.String(), validTill: Stamp, revokedAt: NullableStamp })
})
export type ReissuePlanView = Static<typeof ReissuePlanView>

export const RevocationInput = Type.Object(
  {
    certificateId: Type.Optional(Id),
    reason: Type.Union(
      REVOCATION_REASONS.map((r) => Type.Literal(r)),
      { title: 'reason', must: `must be one of ${REVOCATION_REASONS.join(', ')}` }
    )
  },
  { must: 'must be { certificateId?, reason }' }
)
export type RevocationInput = Static<typeof RevocationInput>

// ---- deploys ------------------------------------------------------------------------------

/** A deploy target as the renderer adds it; the core checks the values. */
export const DeployTargetInput = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('folder'),
      path: Text,
      layout: Type.Optional(DeployLayout),
      pfx: Type.Optional(Flag),
      // deploy key check: the key file the server reads, for a key the customer keeps
      keyFile: Type.Optional(Text)
    }),
    Type.Object({
      kind: Type.Literal('command'),
      command: Text,
      timeoutSeconds: Type.Optional(WholeNumber),
      // verify after reload: host:port of each server the command reloads
      verify: Type.Optional(Type.Array(Text, { maxItems: 8 }))
    }),
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
  /** Folder targets: the key file the server reads (a key the customer keeps), null when CertDesk keeps it. */
  keyFile: Nullable(Type.String()),
  /** Command targets. */
  command: Nullable(Type.String()),
  timeoutSeconds: Nullable(Type.Integer()),
  /** Command targets: host:port checked over TLS after the command to serve the new certificate. */
  verify: Type.Array(Type.String()),
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

// ---- event log and ACME subscription pages of the desktop screens --------------------------

/** One event of the log as the acting reseller reads it (GET /events carries the same). */
export const EventView = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  orderId: Nullable(Type.Integer()),
  orderNumber: Nullable(Type.String()),
  message: Type.String(),
  createdAt: Stamp
})
export type EventView = Static<typeof EventView>

/** `since` is a day (`YYYY-MM-DD`, from its start, UTC); `type` one of the core's event types. */
export const EventFilter = Type.Object(
  {
    type: Type.Optional(Text),
    since: Type.Optional(Text),
    orderId: Type.Optional(Type.Integer({ minimum: 1, title: 'order id', must: 'must be a positive whole number' }))
  },
  { must: 'must be { type?, since?, orderId? }' }
)
export type EventFilter = Static<typeof EventFilter>

/** A certificate an ACME client obtained through a subscription (RFC 8555 §7.4.2), full chain leaf first. */
export const AcmeIssuedCertificateView = Type.Object({
  serial: Type.String(),
  names: Type.Array(Type.String()),
  notBefore: Stamp,
  notAfter: Stamp,
  revoked: Type.Boolean(),
  chainPem: Type.String()
})
export type AcmeIssuedCertificateView = Static<typeof AcmeIssuedCertificateView>

export const AcmeSubscriptionPageView = Type.Object({
  subscription: AcmeSubscriptionView,
  certificates: Type.Array(AcmeIssuedCertificateView)
})
export type AcmeSubscriptionPageView = Static<typeof AcmeSubscriptionPageView>
