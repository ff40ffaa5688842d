/**
 * Admin accounts: a sign-in name, a role, a password kept as its scrypt hash, and optionally a
 * TOTP secret, which lives in the keychain (`SecretStore`) like every other secret, never in the
 * store. A change of role, a disabled account or a new password ends the admin's sessions in
 * the same transaction, so what an admin may do changes on their very next request.
 */
import type { CoreContext } from '../context'
import { conflict, invalid, notFound, unauthorized } from '../errors'
import { isoTimestamp } from '../time'
import type { AdminRole, AdminView, NewAdmin } from '../../../src-shared/admin-records'
import { ADMIN_ROLES } from '../../../src-shared/constants'
import { hashPassword, verifyPassword } from './password-hash'
import { matchTotp, newTotpSecret, otpauthUri, base32Decode, base32Encode } from './totp'

export type { AdminRole, AdminView, NewAdmin } from '../../../src-shared/admin-records'

/**
 * NIST SP 800-63B-4 §3.1.1.2: a password that is the only factor has at least 15 characters.
 * TOTP is optional here, so every password is held to that.
 */
export const MIN_PASSWORD_LENGTH = 15
const MAX_PASSWORD_LENGTH = 1024
const NAME_RE = /^[a-z0-9][a-z0-9._@-]{0,63}$/

/** What authenticator apps show above the code. */
export const TOTP_ISSUER = 'CertDesk'

export interface AdminRow {
  id: number
  name: string
  role: AdminRole
  password_hash: string
  totp_enabled: number
  totp_last_step: number | null
  disabled_at: string | null
  created_at: string
  last_sign_in_at: string | null
}

export const adminView = (r: AdminRow): AdminView => ({
  id: r.id,
  name: r.name,
  role: r.role,
  enabled: r.disabled_at === null,
  totpEnabled: r.totp_enabled === 1,
  createdAt: r.created_at,
  lastSignInAt: r.last_sign_in_at
})

/** The keychain entries of an admin's TOTP secret: in use, and waiting for its first code. */
export const totpSecretName = (adminId: number): string => `admin-totp:${adminId}`
const pendingTotpName = (adminId: number): string => `admin-totp-pending:${adminId}`

/** A sign-in name as kept: trimmed and lower-cased; refused unless it is a plain name. */
export function adminName(typed: string): string {
  const name = typed.trim().toLowerCase()
  if (!NAME_RE.test(name))
    throw invalid(
      'could not use the admin name: it must be 1-64 letters, digits, dots, dashes, underscores or @, starting with a letter or digit'
    )
  return name
}

function checkNewPassword(password: string, name: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    throw invalid(`could not set the password: it must have at least ${MIN_PASSWORD_LENGTH} characters`)
  if (password.length > MAX_PASSWORD_LENGTH)
    throw invalid(`could not set the password: it must have at most ${MAX_PASSWORD_LENGTH} characters`)
  // NIST SP 800-63B-4 §3.1.1.2 asks to refuse passwords that are easy to guess in context.
  if (password.toLowerCase().includes(name))
    throw invalid('could not set the password: it must not contain the admin name')
  if (new Set(password).size < 4) throw invalid('could not set the password: it repeats too few characters')
}

export class AdminAccounts {
  constructor(private readonly ctx: CoreContext) {}

  /** The first owner comes from the CLI (`certdesk admin admins add --role owner`). */
  async create(input: NewAdmin): Promise<AdminView> {
    const name = adminName(input.name)
    if (!(ADMIN_ROLES as readonly string[]).includes(input.role))
      throw invalid(`could not add the admin: role must be one of ${ADMIN_ROLES.join(', ')}`)
    checkNewPassword(input.password, name)
    if (this.row(name)) throw conflict(`could not add the admin: ${name} exists already`)
    const hash = await hashPassword(input.password)
    const db = this.ctx.db
    const id = db
      .transaction(() => {
        // Checked again inside the transaction: another process may have added the name meanwhile.
        if (this.row(name)) throw conflict(`could not add the admin: ${name} exists already`)
        const info = db
          .prepare('INSERT INTO admins (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)')
          .run(name, input.role, hash, isoTimestamp(this.ctx.clock()))
        return Number(info.lastInsertRowid)
      })
      .immediate()
    return this.byId(id)
  }

  list(): AdminView[] {
    return (this.ctx.db.prepare('SELECT * FROM admins ORDER BY name').all() as AdminRow[]).map(adminView)
  }

  /** Whether any admin account exists: a server that signs admins in needs a first owner. */
  any(): boolean {
    return this.ctx.db.prepare('SELECT 1 FROM admins LIMIT 1').get() !== undefined
  }

  get(name: string): AdminView {
    return adminView(this.need(adminName(name)))
  }

  byId(id: number): AdminView {
    const r = this.ctx.db.prepare('SELECT * FROM admins WHERE id = ?').get(id) as AdminRow | undefined
    if (!r) throw notFound(`admin ${id} not found`)
    return adminView(r)
  }

  /** The row of a name as kept, or undefined: for sign-in, which must not say which names exist. */
  row(name: string): AdminRow | undefined {
    return this.ctx.db.prepare('SELECT * FROM admins WHERE name = ?').get(name) as AdminRow | undefined
  }

  setRole(name: string, role: AdminRole): AdminView {
    if (!(ADMIN_ROLES as readonly string[]).includes(role))
      throw invalid(`could not change the role: role must be one of ${ADMIN_ROLES.join(', ')}`)
    return this.change(name, (r) => {
      if (r.role === 'owner' && role !== 'owner') this.keepAnOwner(r, 'change the role')
      this.ctx.db.prepare('UPDATE admins SET role = ? WHERE id = ?').run(role, r.id)
    })
  }

  setEnabled(name: string, enabled: boolean): AdminView {
    return this.change(name, (r) => {
      if (!enabled && r.role === 'owner') this.keepAnOwner(r, 'disable the admin')
      this.ctx.db
        .prepare('UPDATE admins SET disabled_at = ? WHERE id = ?')
        .run(enabled ? null : (r.disabled_at ?? isoTimestamp(this.ctx.clock())), r.id)
    })
  }

  /** A new password set by an owner or the machine's shell (a forgotten one); ends every session. */
  async setPassword(name: string, password: string): Promise<AdminView> {
    const r = this.need(adminName(name))
    checkNewPassword(password, r.name)
    const hash = await hashPassword(password)
    return this.change(r.name, (row) => {
      this.ctx.db.prepare('UPDATE admins SET password_hash = ? WHERE id = ?').run(hash, row.id)
    })
  }

  /**
   * The admin's own new password, proven by the current one. Their other sessions end; the one
   * they changed it from stays (`keepSession`, a session id).
   */
  async changePassword(adminId: number, current: string, next: string, keepSession: number | null): Promise<void> {
    const r = this.needId(adminId)
    if (!(await verifyPassword(current, r.password_hash)))
      throw unauthorized('could not change the password: the current password is wrong')
    checkNewPassword(next, r.name)
    const hash = await hashPassword(next)
    const db = this.ctx.db
    db.transaction(() => {
      db.prepare('UPDATE admins SET password_hash = ? WHERE id = ?').run(hash, r.id)
      db.prepare('DELETE FROM admin_sessions WHERE admin_id = ? AND id IS NOT ?').run(r.id, keepSession)
    }).immediate()
  }

  /**
   * A new TOTP secret for the admin, kept in the keychain as pending until `confirmTotp` sees a
   * code from it, so an enrolment abandoned halfway never locks the admin out.
   */
  beginTotp(adminId: number): { secret: string; uri: string } {
    const r = this.needId(adminId)
    const secret = newTotpSecret()
    this.ctx.secrets.set(pendingTotpName(r.id), base32Encode(secret))
    return { secret: base32Encode(secret), uri: otpauthUri(TOTP_ISSUER, r.name, secret) }
  }

  /** Turns TOTP on with the pending secret once `code` is one of its codes. */
  confirmTotp(adminId: number, code: string): AdminView {
    const r = this.needId(adminId)
    const pending = this.ctx.secrets.get(pendingTotpName(r.id))
    const key = pending === null ? null : base32Decode(pending)
    if (!key) throw conflict('could not turn on two-step sign-in: start the set-up first')
    const step = matchTotp(key, code, this.ctx.clock())
    if (step === null)
      throw invalid(
        'could not turn on two-step sign-in: that is not the current code of the new key; check the time of the device'
      )
    this.ctx.secrets.set(totpSecretName(r.id), pending!)
    this.ctx.db.prepare('UPDATE admins SET totp_enabled = 1, totp_last_step = ? WHERE id = ?').run(step, r.id)
    this.ctx.secrets.delete(pendingTotpName(r.id))
    return this.byId(r.id)
  }

  /** The admin's own TOTP off, proven by their password. */
  async disableTotp(adminId: number, password: string): Promise<AdminView> {
    const r = this.needId(adminId)
    if (!(await verifyPassword(password, r.password_hash)))
      throw unauthorized('could not turn off two-step sign-in: the password is wrong')
    return this.resetTotp(r.name)
  }

  /** TOTP off for an admin who lost their device (an owner at the machine's shell). */
  resetTotp(name: string): AdminView {
    const r = this.need(adminName(name))
    this.ctx.db.prepare('UPDATE admins SET totp_enabled = 0, totp_last_step = NULL WHERE id = ?').run(r.id)
    this.ctx.secrets.delete(totpSecretName(r.id))
    return this.byId(r.id)
  }

  /** The TOTP key of an admin who has TOTP on, from the keychain. */
  totpKey(adminId: number): Buffer | null {
    const stored = this.ctx.secrets.get(totpSecretName(adminId))
    return stored === null ? null : base32Decode(stored)
  }

  /**
   * Takes `step` as the admin's last used TOTP step, unless that step or a later one was used
   * already: one conditional update, so of two sign-ins racing with one code only one wins, on
   * any engine (RFC 6238 §5.2: a code is accepted once).
   */
  claimTotpStep(adminId: number, step: number): boolean {
    const info = this.ctx.db
      .prepare('UPDATE admins SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)')
      .run(step, adminId, step)
    return info.changes === 1
  }

  /** Makes a change to one admin and ends their sessions, in one transaction. */
  private change(name: string, apply: (r: AdminRow) => void): AdminView {
    const db = this.ctx.db
    const id = db
      .transaction(() => {
        const r = this.need(adminName(name))
        apply(r)
        db.prepare('DELETE FROM admin_sessions WHERE admin_id = ?').run(r.id)
        return r.id
      })
      .immediate()
    return this.byId(id)
  }

  /** Refuses a change that would leave no enabled owner: nobody could manage the admins then. */
  private keepAnOwner(r: AdminRow, what: string): void {
    const others = this.ctx.db
      .prepare(`SELECT COUNT(*) FROM admins WHERE role = 'owner' AND disabled_at IS NULL AND id != ?`)
      .pluck()
      .get(r.id) as number
    if (others === 0) throw conflict(`could not ${what}: ${r.name} is the last enabled owner`)
  }

  private need(name: string): AdminRow {
    const r = this.row(name)
    if (!r) throw notFound(`admin ${name} not found`)
    return r
  }

  private needId(id: number): AdminRow {
    const r = this.ctx.db.prepare('SELECT * FROM admins WHERE id = ?').get(id) as AdminRow | undefined
    if (!r) throw notFound(`admin ${id} not found`)
    return r
  }
}
