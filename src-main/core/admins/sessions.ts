/**
 * Signing admins in and keeping their sessions. A session is a random 256-bit token the client
 * holds (an HttpOnly cookie); the store keeps only its SHA-256, so a copy of the store opens no
 * session. Sessions live in the store, so every node of a team server knows every session.
 *
 * Sign-in is limited per name and per client address before any password is checked, answers
 * the same for a wrong name as for a wrong password, and writes its own audit entry (it is not
 * a bridge method). TOTP codes are refused when reused (RFC 6238 §5.2).
 */
import { createHash, randomBytes } from 'node:crypto'
import type { CoreContext } from '../context'
import { forbidden, unauthorized } from '../errors'
import { limitHit, rateLimited, type LimitWindow } from '../rate-limits'
import { storageFault } from '../store/store-faults'
import type { SqlArg } from '../store'
import { isoTimestamp, parseDate } from '../time'
import type { AdminRole, AdminView } from '../../../src-shared/admin-records'
import { adminName, adminView, type AdminAccounts, type AdminRow } from './accounts'
import type { ActionStart, AuditLog } from './audit-log'
import { needsRehash, hashPassword, NO_ACCOUNT_HASH, verifyPassword } from './password-hash'
import { matchTotp } from './totp'

/**
 * How long a session lasts without a request: 30 minutes, the idle limit OWASP's Session
 * Management Cheat Sheet gives for low-risk applications at most ("Idle Timeout"); the same as
 * the desktop's browser mode.
 */
export const SESSION_IDLE_MINUTES = 30
/**
 * How long a session lasts at most, however busy: 8 hours, the top of the range OWASP's Session
 * Management Cheat Sheet names ("Absolute Timeout", 4 to 8 hours): one working day.
 */
export const SESSION_ABSOLUTE_HOURS = 8
/** A session's last use is written at most this often, so reads do not each write the store. */
const TOUCH_EVERY_MS = 60_000

const MINUTE = 60_000
/**
 * Failed sign-ins allowed per name, and per client address, within 15 minutes. Per name: 5, so
 * a password is guessed at no more than 480 tries a day (NIST SP 800-63B-4 §3.2.2 allows up to
 * 100 consecutive failures; fewer is stricter). Per address: 20, room for an office behind one
 * address whose admins mistype, while one address cannot try many names.
 */
export const SIGN_IN_LIMITS = {
  name: { limit: 5, ms: 15 * MINUTE, label: '15 minutes' } satisfies LimitWindow,
  source: { limit: 20, ms: 15 * MINUTE, label: '15 minutes' } satisfies LimitWindow
}

/** What a wrong name, password or code answers, alike, so the answer does not say which was wrong. */
const WRONG = 'could not sign in: wrong name, password or code'

export interface SignIn {
  name: string
  password: string
  /** The TOTP code, for an account that has TOTP on. */
  code?: string
  /** The client's address, for the limit and the audit log. */
  source: string
}

/** A signed-in admin as a request carries them. */
export interface AdminSession {
  sessionId: number
  admin: { id: number; name: string; role: AdminRole; totpEnabled: boolean }
}

export type SessionCheck = { state: 'valid'; session: AdminSession } | { state: 'expired' | 'none' }

const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex')
const nameKey = (typed: string): string => createHash('sha256').update(typed.trim().toLowerCase(), 'utf8').digest('hex')
const ms = (stamp: string): number => parseDate(stamp).getTime()

interface SessionRow extends AdminRow {
  session_id: number
  session_created_at: string
  last_seen_at: string
}

export class AdminSessions {
  constructor(
    private readonly ctx: CoreContext,
    private readonly accounts: AdminAccounts,
    private readonly audit: AuditLog
  ) {}

  /**
   * Checks a sign-in and opens a session: the token to hand the client (shown this once) and
   * the admin. Refused with 429 while the name or the address has too many recent failures
   * (before any password is hashed), 401 for anything wrong.
   */
  async signIn(s: SignIn): Promise<{ token: string; admin: AdminView }> {
    const key = nameKey(s.name)
    await this.checkLimits(key, s.source, s)
    const name = safeName(s.name)
    const row = name === null ? undefined : await this.accounts.row(name)
    // The same hash work whether or not the name has an account (password-hash.ts).
    const passwordOk = await verifyPassword(s.password, row?.password_hash ?? NO_ACCOUNT_HASH)
    if (!row || !passwordOk) throw await this.fail(key, s, row, 401, WRONG)
    if (row.disabled_at !== null)
      throw await this.fail(key, s, row, 403, 'could not sign in: this admin account is disabled')
    if (row.totp_enabled === 1) {
      const code = s.code?.trim() ?? ''
      // The password was right: asking for the code is not a failure.
      if (code === '')
        throw await this.deny(s, row, 401, 'could not sign in: enter the 6-digit code from your authenticator app')
      const secret = await this.accounts.totpKey(row.id)
      const step = secret === null ? null : matchTotp(secret, code, this.ctx.clock())
      if (step === null) throw await this.fail(key, s, row, 401, WRONG)
      if (!(await this.accounts.claimTotpStep(row.id, step)))
        throw await this.fail(key, s, row, 401, 'could not sign in: that code was used already; wait for the next one')
    }
    // A hash from an older, cheaper cost is made again now that the password is known.
    const rehash = needsRehash(row.password_hash) ? await hashPassword(s.password) : null
    const token = randomBytes(32).toString('base64url')
    const db = this.ctx.store
    const now = isoTimestamp(this.ctx.clock())
    await db.tx(async () => {
      // Read again: the account may have been disabled or changed while the hash was computed.
      const fresh = await this.accounts.row(row.name)
      if (!fresh || fresh.disabled_at !== null) throw unauthorized('could not sign in: this admin account is disabled')
      await db.run(
        'INSERT INTO admin_sessions (token_hash, admin_id, source, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
        tokenHash(token),
        row.id,
        s.source,
        now,
        now
      )
      await db.run('UPDATE admins SET last_sign_in_at = ? WHERE id = ?', now, row.id)
      if (rehash) await db.run('UPDATE admins SET password_hash = ? WHERE id = ?', rehash, row.id)
      // A good sign-in clears the name's failures, not the address's.
      await db.run('DELETE FROM admin_sign_in_failures WHERE name_key = ?', key)
      await this.audit.record(signInEntry(s, fresh), 200)
    })
    return { token, admin: await this.accounts.byId(row.id) }
  }

  /** The session a token opens now, ending it here when it has been idle or open too long. */
  async check(token: string): Promise<SessionCheck> {
    const row = (await this.ctx.store.get(
      `SELECT a.*, s.id AS session_id, s.created_at AS session_created_at, s.last_seen_at
           FROM admin_sessions s JOIN admins a ON a.id = s.admin_id WHERE s.token_hash = ?`,
      tokenHash(token)
    )) as SessionRow | undefined
    if (!row) return { state: 'none' }
    const now = this.ctx.clock().getTime()
    const idle = now - ms(row.last_seen_at) > SESSION_IDLE_MINUTES * MINUTE
    const old = now - ms(row.session_created_at) > SESSION_ABSOLUTE_HOURS * 60 * MINUTE
    if (idle || old || row.disabled_at !== null) {
      await this.quietly('DELETE FROM admin_sessions WHERE id = ?', row.session_id)
      return { state: row.disabled_at !== null ? 'none' : 'expired' }
    }
    if (now - ms(row.last_seen_at) >= TOUCH_EVERY_MS)
      await this.quietly(
        'UPDATE admin_sessions SET last_seen_at = ? WHERE id = ?',
        isoTimestamp(this.ctx.clock()),
        row.session_id
      )
    const a = adminView(row)
    return {
      state: 'valid',
      session: {
        sessionId: row.session_id,
        admin: { id: a.id, name: a.name, role: a.role, totpEnabled: a.totpEnabled }
      }
    }
  }

  /** Ends the session of `token` (sign-out); its token opens nothing afterwards. */
  async end(token: string, source: string): Promise<void> {
    const check = await this.check(token)
    if (check.state !== 'valid') return
    const { sessionId, admin } = check.session
    const db = this.ctx.store
    await db.tx(async () => {
      await db.run('DELETE FROM admin_sessions WHERE id = ?', sessionId)
      await this.audit.record(
        {
          actor: { name: admin.name, adminId: admin.id, role: admin.role, source },
          action: 'signOut',
          targets: {}
        },
        200
      )
    })
  }

  /** The failures a limit counts, oldest first; refuses with 429 when either limit is reached. */
  private async checkLimits(key: string, source: string, s: SignIn): Promise<void> {
    const now = this.ctx.clock()
    const since = isoTimestamp(new Date(now.getTime() - SIGN_IN_LIMITS.name.ms))
    const times = async (column: 'name_key' | 'source', value: string) =>
      (
        (await this.ctx.store.column(
          `SELECT failed_at FROM admin_sign_in_failures WHERE ${column} = ? AND failed_at > ?`,
          value,
          since
        )) as string[]
      ).map((t) => ({ at: ms(t) }))
    const hit =
      limitHit(await times('name_key', key), [SIGN_IN_LIMITS.name], now) ??
      limitHit(await times('source', source), [SIGN_IN_LIMITS.source], now)
    if (!hit) return
    const err = rateLimited('could not sign in: too many failed sign-ins', hit, now)
    const name = safeName(s.name)
    throw await this.deny(s, name === null ? undefined : await this.accounts.row(name), 429, err)
  }

  /** A failed sign-in: counted for the limits, kept in the audit log; answers the error to throw. */
  private async fail(
    key: string,
    s: SignIn,
    row: AdminRow | undefined,
    status: number,
    message: string
  ): Promise<Error> {
    const db = this.ctx.store
    const now = this.ctx.clock()
    await db.tx(async () => {
      await db.run(
        'INSERT INTO admin_sign_in_failures (name_key, source, failed_at) VALUES (?, ?, ?)',
        key,
        s.source,
        isoTimestamp(now)
      )
      // Rows older than the window count for nothing any more.
      await db.run(
        'DELETE FROM admin_sign_in_failures WHERE failed_at <= ?',
        isoTimestamp(new Date(now.getTime() - SIGN_IN_LIMITS.name.ms))
      )
      await this.audit.record(signInEntry(s, row), status)
    })
    return status === 403 ? forbidden(message) : unauthorized(message)
  }

  /**
   * A refused sign-in that is not a failure (a code asked for, a limit reached): audited;
   * answers the error to throw.
   */
  private async deny(s: SignIn, row: AdminRow | undefined, status: number, err: string | Error): Promise<Error> {
    await this.audit.record(signInEntry(s, row), status)
    return typeof err === 'string' ? unauthorized(err) : err
  }

  /**
   * Writes that keep a session fresh or tidy are skipped while another process holds the store:
   * one try, no wait for the lock (a request must not wait for its own bookkeeping).
   */
  private async quietly(sql: string, ...args: SqlArg[]): Promise<void> {
    try {
      await this.ctx.store.tx(async (t) => void (await t.run(sql, ...args)), { budgetMs: 0 })
    } catch (err) {
      if (!storageFault(err)) throw err
    }
  }
}

/** The typed name as an account name, or null when it cannot be one (then no account matches). */
function safeName(typed: string): string | null {
  try {
    return adminName(typed)
  } catch {
    return null
  }
}

/**
 * A sign-in's audit entry. The name typed is kept only when it is an account's: a password typed
 * into the name field by mistake must not land in the log.
 */
function signInEntry(s: SignIn, row: AdminRow | undefined): ActionStart {
  return {
    actor: row
      ? { name: row.name, adminId: row.id, role: row.role, source: s.source }
      : { name: '(unknown name)', adminId: null, role: null, source: s.source },
    action: 'signIn',
    targets: {}
  }
}
