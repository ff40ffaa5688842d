/**
 * Admins of a book: accounts with roles (`accounts.ts`), their sign-in and sessions
 * (`sessions.ts`, passwords through `password-hash.ts`, codes through `totp.ts`), and the audit
 * log of what they did (`audit-log.ts`). `Admins` is the one object callers hold.
 */
import type { CoreContext } from '../context'
import { AdminAccounts } from './accounts'
import { AuditLog } from './audit-log'
import { AdminSessions } from './sessions'

export { adminName, MIN_PASSWORD_LENGTH, type AdminView, type NewAdmin } from './accounts'
export { auditQuery, outcomeOf, type ActionStart, type Actor, type AuditEntry, type AuditQuery } from './audit-log'
export {
  SESSION_ABSOLUTE_HOURS,
  SESSION_IDLE_MINUTES,
  SIGN_IN_LIMITS,
  type AdminSession,
  type SessionCheck,
  type SignIn
} from './sessions'

export class Admins {
  readonly accounts: AdminAccounts
  readonly audit: AuditLog
  readonly sessions: AdminSessions

  constructor(ctx: CoreContext) {
    this.accounts = new AdminAccounts(ctx)
    this.audit = new AuditLog(ctx)
    this.sessions = new AdminSessions(ctx, this.accounts, this.audit)
  }
}
