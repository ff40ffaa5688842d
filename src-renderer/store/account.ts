/**
 * Who the UI acts as and on which book: the session the server answers (actor, role, book, the
 * methods the role may call), signing in on a team server's page, connecting the desktop app to
 * a team server and leaving it, and the signed-in admin's own password and TOTP.
 */
import type { SessionView, TeamSignIn, TotpEnrolment } from '../../src-preload/contract'
import { bridge, signInToServer } from '../bridge'
import { errorMessage } from '../lib/format'
import { go } from '../routes'
import type { Slice, Store } from './slice'

export interface AccountSlice {
  account: SessionView | null
  /** The methods the session may call; the UI shows only their actions (the server refuses the rest). */
  allowed: ReadonlySet<string>
  loadAccount(): Promise<void>
  /** A team server's own page: signs in with an admin account, then loads everything. */
  signInWithPassword(c: { name: string; password: string; code?: string }): Promise<string | null>
  /** The desktop app: works on a team server's book from now on. The server's reason on failure. */
  connectTeam(input: TeamSignIn): Promise<string | null>
  /** The desktop app: back to this machine's own book. */
  leaveTeam(): Promise<void>
  changePassword(current: string, next: string): Promise<string | null>
  totpEnrolment: TotpEnrolment | null
  beginTotp(): Promise<void>
  confirmTotp(code: string): Promise<string | null>
  disableTotp(password: string): Promise<string | null>
}

/** The book changed: every screen's data is the other book's now, so everything loads again. */
async function reload(get: () => Store): Promise<void> {
  await get().loadSession()
  // The same reseller id on another book is another reseller: its screens' data is dropped too.
  const id = get().resellerId
  if (id !== null) get().selectReseller(id)
  go({ name: 'dashboard' })
}

export const accountSlice: Slice<AccountSlice> = (set, get) => ({
  account: null,
  allowed: new Set<string>(),
  async loadAccount() {
    const account = await bridge.session()
    set({ account, allowed: new Set(account.allowed) })
  },
  async signInWithPassword(c) {
    if (!signInToServer) return 'signing in with an account is for a team server’s page'
    try {
      await signInToServer(c)
      set({ signedOut: null })
      await reload(get)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  async connectTeam(input) {
    try {
      await bridge.connectTeam(input)
      set({ signedOut: null })
      await reload(get)
      get().toast('ok', `Working on the team book of ${new URL(input.url).host}`)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  async leaveTeam() {
    try {
      await bridge.disconnectTeam()
      set({ signedOut: null })
      await reload(get)
      get().toast('ok', 'Back on this machine’s own book')
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async changePassword(current, next) {
    try {
      await bridge.changePassword({ current, next })
      get().toast('ok', 'Password changed; your other sessions were signed out')
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  totpEnrolment: null,
  async beginTotp() {
    try {
      set({ totpEnrolment: await bridge.beginTotp() })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async confirmTotp(code) {
    try {
      const account = await bridge.confirmTotp(code)
      set({ account, totpEnrolment: null })
      get().toast('ok', 'Two-step sign-in is on')
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  async disableTotp(password) {
    try {
      set({ account: await bridge.disableTotp(password) })
      get().toast('ok', 'Two-step sign-in is off')
      return null
    } catch (err) {
      return errorMessage(err)
    }
  }
})
