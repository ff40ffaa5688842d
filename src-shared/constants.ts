/**
 * Values both sides of the bridge know: the literal sets of the shared records, and the two
 * constants the UI shows. Plain data only, no schema library, so the renderer bundle can take
 * them as they are.
 */

export const PRODUCT_TYPES = ['ssl', 'wildcard', 'multi-domain', 'code-signing'] as const
export const VALIDATION_TYPES = ['dv', 'ov', 'ev'] as const
export const ORDER_STATUSES = [
  'pending',
  'processing',
  'validation_pending',
  'pending_configuration',
  'completed',
  'cancelled',
  'expired'
] as const
export const PAYMENT_STATUSES = ['paid', 'unpaid', 'refunded'] as const
export const INVOICE_STATUSES = ['unpaid', 'paid', 'cancelled', 'sent'] as const
/** How a desktop order is paid: from credit at once, or on an unpaid invoice. */
export const PAYMENT_METHODS = ['credit', 'invoice'] as const
export const DCV_METHODS = ['email', 'http', 'https', 'dns'] as const
export const DEPLOY_LAYOUTS = ['nginx', 'apache', 'haproxy', 'iis'] as const
export const DEPLOY_TARGET_KINDS = ['folder', 'command', 'webhook'] as const
export const DEPLOY_RUN_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'superseded'] as const
export const DEPLOY_TRIGGERS = ['issued', 'reissued', 'auto_reissue', 'manual'] as const

/**
 * The approver mailboxes of email validation, CA/B Baseline Requirements §3.2.2.4.4 (constructed
 * email to the domain contact), for the UI's choice per name. The core checks against its own
 * copy (src-main/core/cab-policy.ts); test/app/email-approvers.test.ts keeps the two equal.
 */
export const APPROVER_LOCAL_PARTS = ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster'] as const

/**
 * The reasons a subscriber certificate may be revoked for, as RFC 5280 §5.3.1 names them: the
 * subset the CA/Browser Forum Baseline Requirements allow (§4.9.1.1, §7.2.2: unspecified,
 * keyCompromise, affiliationChanged, superseded, cessationOfOperation, privilegeWithdrawn).
 * The core maps each to its CRLReason code (core/certificates/revocation.ts).
 */
export const REVOCATION_REASONS = [
  'unspecified',
  'keyCompromise',
  'affiliationChanged',
  'superseded',
  'cessationOfOperation',
  'privilegeWithdrawn'
] as const

/** Stands for the EAB HMAC key in an ACME subscription's set-up commands until it is asked for. */
export const HMAC_KEY_PLACEHOLDER = '<EAB_HMAC_KEY>'

/**
 * The roles of admin accounts, lowest first; each role may do everything the roles before it
 * may (docs/security.md, "Admins and roles"). A viewer reads; an operator also works on orders,
 * certificates and deploys; an owner also moves money, handles keys and secrets, backs up and
 * manages the admins.
 */
export const ADMIN_ROLES = ['viewer', 'operator', 'owner'] as const

/** Whether `have` may do what needs `need`. */
export const roleAtLeast = (have: (typeof ADMIN_ROLES)[number], need: (typeof ADMIN_ROLES)[number]): boolean =>
  ADMIN_ROLES.indexOf(have) >= ADMIN_ROLES.indexOf(need)

/**
 * How an admin action ended, as the audit log keeps it: `ok` (done), `denied` (the caller may
 * not: a role too low, a wrong password or code, too many attempts), `refused` (the request or
 * the state did not allow it), `failed` (CertDesk could not do it: a fault, a busy store).
 */
export const AUDIT_OUTCOMES = ['ok', 'denied', 'refused', 'failed'] as const
