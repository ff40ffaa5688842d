/**
 * Who calls a bridge method: the local desktop user (the owner of this machine's book) or an
 * admin signed in with an account, and from where. The gate (bridge-gate.ts) checks the role
 * and writes the audit entry from it; the few handlers that act on the caller's own account read
 * it with `currentCaller()`, so no handler's arguments carry an identity a client could forge.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { AdminRole } from '../../src-shared/admin-records'

export interface Caller {
  /** An admin's name, or `desktop` for the local desktop user. */
  actor: string
  role: AdminRole
  /** The admin account, null for the desktop user. */
  adminId: number | null
  /** The session the call came with (admin accounts only), so a password change can keep it. */
  sessionId: number | null
  totpEnabled: boolean
  /** The client's address, or `desktop window` for IPC. */
  source: string
}

/**
 * The local desktop user: whoever runs CertDesk on this machine owns its book (they can read
 * the data dir and the keychain anyway), so the window and the one-time link of browser mode act
 * as the owner, without an account, and are audited as `desktop`.
 */
export const desktopCaller = (source: string): Caller => ({
  actor: 'desktop',
  role: 'owner',
  adminId: null,
  sessionId: null,
  totpEnabled: false,
  source
})

const calling = new AsyncLocalStorage<Caller>()

/** Runs a handler as `caller`. */
export const runAs = <T>(caller: Caller, fn: () => T): T => calling.run(caller, fn)

/** The caller of the handler running now; the desktop user for a handler called directly (tests, main). */
export const currentCaller = (): Caller => calling.getStore() ?? desktopCaller('desktop window')
