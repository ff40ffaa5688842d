/**
 * Admin accounts: a sign-in name, a role, a password kept as its scrypt hash, and optionally a
 * TOTP secret, kept through `ctx.secrets` like every other secret, never in the store's own
 * columns: in the desktop keychain, or on a server (`--secrets file:…|systemd`) sealed in the
 * store under the key source's sealing key like the other per-record secrets, so every node reads
 * it and a read-only systemd credential takes an enrolment (server-secrets/store.ts). A change of role, a disabled account or a new password ends the admin's sessions in
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

/** The secret entries of an admin's TOTP key: in use, and waiting for its first code (never root keys). */
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
    if (await this.row(name)) throw conflict(`could not add the admin: ${name} exists already`)
    const hash = await hashPassword(input.password)
    const db = this.ctx.store
    const id = await db.tx(async () => {
      // Checked again inside the transaction: another process may have added the name meanwhile.
      if (await this.row(name)) throw conflict(`could not add the admin: ${name} exists already`)
      const info = await db.insert(
        'INSERT INTO admins (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)',
        name,
        input.role,
        hash,
        isoTimestamp(this.ctx.clock())
      )
      return info
    })
    return await this.byId(id)
  }

  async list(): Promise<AdminView[]> {
    return ((await this.ctx.store.all('SELECT * FROM admins ORDER BY name')) as AdminRow[]).map(adminView)
  }

  /** Whether any admin account exists: a server that signs admins in needs a first owner. */
  async any(): Promise<boolean> {
    return (await this.ctx.store.get('SELECT 1 FROM admins LIMIT 1')) !== undefined
  }

  async get(name: string): Promise<AdminView> {
    return adminView(await this.need(adminName(name)))
  }

  async byId(id: number): Promise<AdminView> {
    const r = (await this.ctx.store.get('SELECT * FROM admins WHERE id = ?', id)) as AdminRow | undefined
    if (!r) throw notFound(`admin ${id} not found`)
    return adminView(r)
  }

  /** The row of a name as kept, or undefined: for sign-in, which must not say which names exist. */
  async row(name: string): Promise<AdminRow | undefined> {
    return (await this.ctx.store.get('SELECT * FROM admins WHERE name = ?', name)) as AdminRow | undefined
  }

  async setRole(name: string, role: AdminRole): Promise<AdminView> {
    if (!(ADMIN_ROLES as readonly string[]).includes(role))
      throw invalid(`could not change the role: role must be one of ${ADMIN_ROLES.join(', ')}`)
    return await this.change(name, async (r) => {
      if (r.role === 'owner' && role !== 'owner') await this.keepAnOwner(r, 'change the role')
      await this.ctx.store.run('UPDATE admins SET role = ? WHERE id = ?', role, r.id)
    })
  }

  async setEnabled(name: string, enabled: boolean): Promise<AdminView> {
    return await this.change(name, async (r) => {
      if (!enabled && r.role === 'owner') await this.keepAnOwner(r, 'disable the admin')
      await this.ctx.store.run(
        'UPDATE admins SET disabled_at = ? WHERE id = ?',
        enabled ? null : (r.disabled_at ?? isoTimestamp(this.ctx.clock())),
        r.id
      )
    })
  }

  /** A new password set by an owner or the machine's shell (a forgotten one); ends every session. */
  async setPassword(name: string, password: string): Promise<AdminView> {
    const r = await this.need(adminName(name))
    checkNewPassword(password, r.name)
    const hash = await hashPassword(password)
    return await this.change(r.name, async (row) => {
      await this.ctx.store.run('UPDATE admins SET password_hash = ? WHERE id = ?', hash, row.id)
    })
  }

  /**
   * The admin's own new password, proven by the current one. Their other sessions end; the one
   * they changed it from stays (`keepSession`, a session id).
   */
  async changePassword(adminId: number, current: string, next: string, keepSession: number | null): Promise<void> {
    const r = await this.needId(adminId)
    if (!(await verifyPassword(current, r.password_hash)))
      throw unauthorized('could not change the password: the current password is wrong')
    checkNewPassword(next, r.name)
    const hash = await hashPassword(next)
    const db = this.ctx.store
    await db.tx(async () => {
      await db.run('UPDATE admins SET password_hash = ? WHERE id = ?', hash, r.id)
      await db.run('DELETE FROM admin_sessions WHERE admin_id = ? AND id IS NOT ?', r.id, keepSession)
    })
  }

  /**
   * A new TOTP secret for the admin, kept with the secrets as pending until `confirmTotp` sees a
   * code from it, so an enrolment abandoned halfway never locks the admin out.
   */
  async beginTotp(adminId: number): Promise<{ secret: string; uri: string }> {
    const r = await this.needId(adminId)
    const secret = newTotpSecret()
    await this.ctx.secrets.set(pendingTotpName(r.id), base32Encode(secret))
    return { secret: base32Encode(secret), uri: otpauthUri(TOTP_ISSUER, r.name, secret) }
  }

  /** Turns TOTP on with the pending secret once `code` is one of its codes. */
  async confirmTotp(adminId: number, code: string): Promise<AdminView> {
    const r = await this.needId(adminId)
    const pending = await this.ctx.secrets.get(pendingTotpName(r.id))
    const key = pending === null ? null : base32Decode(pending)
    if (!key) throw conflict('could not turn on two-step sign-in: start the set-up first')
    const step = matchTotp(key, code, this.ctx.clock())
    if (step === null)
      throw invalid(
        'could not turn on two-step sign-in: that is not the current code of the new key; check the time of the device'
      )
    await this.ctx.secrets.set(totpSecretName(r.id), pending!)
    await this.ctx.store.run('UPDATE admins SET totp_enabled = 1, totp_last_step = ? WHERE id = ?', step, r.id)
    await this.ctx.secrets.delete(pendingTotpName(r.id))
    return await this.byId(r.id)
  }

  /** The admin's own TOTP off, proven by their password. */
  async disableTotp(adminId: number, password: string): Promise<AdminView> {
    const r = await this.needId(adminId)
    if (!(await verifyPassword(password, r.password_hash)))
      throw unauthorized('could not turn off two-step sign-in: the password is wrong')
    return await this.resetTotp(r.name)
  }

  /** TOTP off for an admin who lost their device (an owner at the machine's shell). */
  async resetTotp(name: string): Promise<AdminView> {
    const r = await this.need(adminName(name))
    await this.ctx.store.run('UPDATE admins SET totp_enabled = 0, totp_last_step = NULL WHERE id = ?', r.id)
    await this.ctx.secrets.delete(totpSecretName(r.id))
    return await this.byId(r.id)
  }

  /** The TOTP key of an admin who has TOTP on, from the keychain. */
  async totpKey(adminId: number): Promise<Buffer | null> {
    const stored = await this.ctx.secrets.get(totpSecretName(adminId))
    return stored === null ? null : base32Decode(stored)
  }

  /**
   * Takes `step` as the admin's last used TOTP step, unless that step or a later one was used
   * already: one conditional update, so of two sign-ins racing with one code only one wins, on
   * any engine (RFC 6238 §5.2: a code is accepted once).
   */
  async claimTotpStep(adminId: number, step: number): Promise<boolean> {
    const info = await this.ctx.store.run(
      'UPDATE admins SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)',
      step,
      adminId,
      step
    )
    return info.changes === 1
  }

  /** Makes a change to one admin and ends their sessions, in one transaction. */
  private async change(name: string, apply: (r: AdminRow) => Promise<void>): Promise<AdminView> {
    const db = this.ctx.store
    const id = await db.tx(async () => {
      const r = await this.need(adminName(name))
      await apply(r)
      await db.run('DELETE FROM admin_sessions WHERE admin_id = ?', r.id)
      return r.id
    })
    return await this.byId(id)
  }

  /** Refuses a change that would leave no enabled owner: nobody could manage the admins then. */
  private async keepAnOwner(r: AdminRow, what: string): Promise<void> {
    const others = (await this.ctx.store.value(
      `SELECT COUNT(*) FROM admins WHERE role = 'owner' AND disabled_at IS NULL AND id != ?`,
      r.id
    )) as number
    if (others === 0) throw conflict(`could not ${what}: ${r.name} is the last enabled owner`)
  }

  private async need(name: string): Promise<AdminRow> {
    const r = await this.row(name)
    if (!r) throw notFound(`admin ${name} not found`)
    return r
  }

  private async needId(id: number): Promise<AdminRow> {
    const r = (await this.ctx.store.get('SELECT * FROM admins WHERE id = ?', id)) as AdminRow | undefined
    if (!r) throw notFound(`admin ${id} not found`)
    return r
  }
}
