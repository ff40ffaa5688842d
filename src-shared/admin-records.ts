/**
 * Admin accounts, their sessions and the audit log, as the core returns them and the bridge
 * carries them. No record here ever holds a password, a password hash or a TOTP secret, except
 * `TotpEnrolment`, which hands a new secret to the admin enrolling it, once.
 */
import { Type, type Static } from '@sinclair/typebox'
import { ADMIN_ROLES, AUDIT_OUTCOMES } from './constants'
import { Id, Nullable, NullableStamp, OneOf, Stamp } from './schema-kit'

export const AdminRole = OneOf(ADMIN_ROLES)
export type AdminRole = Static<typeof AdminRole>

/** A sign-in name: letters, digits and `.`, `_`, `-`, `@`; compared without case. */
export const AdminName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$',
  must: 'must be 1-64 letters, digits, dots, dashes, underscores or @, starting with a letter or digit'
})

/**
 * A password as typed. The length bounds are NIST SP 800-63B §3.1.1.2's: at least 15 characters
 * for a password used alone, and at least 64 accepted; 1024 keeps a pasted file from becoming
 * one. The core checks the lower bound when a password is set, never when one is tried.
 */
export const Password = Type.String({ maxLength: 1024, must: 'must be text of at most 1024 characters' })

/** A TOTP code as typed: six digits, spaces allowed between them. */
export const TotpCode = Type.String({ maxLength: 16, must: 'must be the 6-digit code' })

export const AdminView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  role: AdminRole,
  enabled: Type.Boolean(),
  totpEnabled: Type.Boolean(),
  createdAt: Stamp,
  lastSignInAt: NullableStamp
})
export type AdminView = Static<typeof AdminView>

export const NewAdmin = Type.Object(
  { name: AdminName, role: AdminRole, password: Password },
  { additionalProperties: false, must: 'must be { name, role, password }' }
)
export type NewAdmin = Static<typeof NewAdmin>

/** Which book the UI works on: this machine's own store, or a team server's. */
export const BookView = Type.Union([
  Type.Object({ kind: Type.Literal('local') }),
  Type.Object({ kind: Type.Literal('team'), server: Type.String() })
])
export type BookView = Static<typeof BookView>

/** Who the UI acts as, on which book, and which bridge methods that role may call. */
export const SessionView = Type.Object({
  /** The admin's sign-in name, or `desktop` for the local desktop user (the owner). */
  actor: Type.String(),
  role: AdminRole,
  /** Signed in with an admin account (a team server), not the local desktop user. */
  account: Type.Boolean(),
  /** Whether the account signs in with a TOTP code as well; false for the desktop user. */
  totpEnabled: Type.Boolean(),
  book: BookView,
  /** This desktop app reaches the book as a client of a team server, and can go back to its own. */
  teamClient: Type.Boolean(),
  /** The bridge methods the role may call, from the method table; the UI shows only their actions. */
  allowed: Type.Array(Type.String())
})
export type SessionView = Static<typeof SessionView>

/** A new TOTP secret for the enrolling admin: the base32 key and the otpauth URI holding it. */
export const TotpEnrolment = Type.Object({ secret: Type.String(), uri: Type.String() })
export type TotpEnrolment = Static<typeof TotpEnrolment>

export const PasswordChange = Type.Object(
  { current: Password, next: Password },
  { additionalProperties: false, must: 'must be { current, next }' }
)
export type PasswordChange = Static<typeof PasswordChange>

/** Where the desktop app signs in to a team server. */
export const TeamSignIn = Type.Object(
  {
    url: Type.String({ maxLength: 2048, must: 'must be the address of a CertDesk team server' }),
    name: AdminName,
    password: Password,
    code: Type.Optional(TotpCode),
    /**
     * The SHA-256 of the team server's CertDesk root, for a server whose certificate its own
     * CertDesk CA issued: that root is then the one anchor of the connection. Without it the
     * certificate must chain to a CA this machine trusts (src-main/app/team-transport.ts).
     */
    rootSha256: Type.Optional(
      Type.String({
        maxLength: 100,
        pattern: '^\\s*([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}\\s*$',
        must: "must be the SHA-256 of the team server's CertDesk root: 64 hex digits"
      })
    )
  },
  { additionalProperties: false, must: 'must be { url, name, password, code?, rootSha256? }' }
)
export type TeamSignIn = Static<typeof TeamSignIn>

export const AuditOutcome = OneOf(AUDIT_OUTCOMES)
export type AuditOutcome = Static<typeof AuditOutcome>

const FilterText = Type.String({ maxLength: 100, must: 'must be text of at most 100 characters' })

export const AuditFilter = Type.Object(
  {
    actor: Type.Optional(FilterText),
    action: Type.Optional(FilterText),
    outcome: Type.Optional(AuditOutcome),
    /** A calendar day, UTC: entries from its start on. */
    since: Type.Optional(FilterText)
  },
  { additionalProperties: false, must: 'must be { actor?, action?, outcome?, since? }' }
)
export type AuditFilter = Static<typeof AuditFilter>

/**
 * What an action named, by argument (`order id`, `input.orderId`, `name`): record ids and admin
 * names only, never any other value, so no password, key or code can reach the log.
 */
export const AuditTargets = Type.Record(
  Type.String(),
  Type.Union([Type.Integer(), Type.Array(Type.Integer()), Type.String()])
)
export type AuditTargets = Static<typeof AuditTargets>

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Stamp,
  /** An admin's name, `desktop`, `cli:<os user>`, or `(unknown name)` for a sign-in under no account. */
  actor: Type.String(),
  adminId: Nullable(Id),
  role: Nullable(AdminRole),
  /** Where the action came from: the client's address, the desktop window, or the CLI's host. */
  source: Type.String(),
  /** The bridge method, `signIn`/`signOut`, or the CLI command (`cli reseller add`). */
  action: Type.String(),
  targets: AuditTargets,
  /** Null while the action runs, and for an action whose process stopped before it ended. */
  outcome: Nullable(AuditOutcome),
  /** The HTTP status the outcome had (or the CLI's exit code as 200/4xx/5xx). */
  status: Nullable(Type.Integer()),
  finishedAt: NullableStamp
})
export type AuditEntry = Static<typeof AuditEntry>
