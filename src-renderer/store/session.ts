/** Who the desktop user acts for, the settings, navigation and messages. */
import type { ResellerView, SettingsProblems, SettingsView, SignInNeed } from '../../src-preload/contract'
import { bridge, endBrowserSession } from '../bridge'
import { errorMessage } from '../lib/format'
import { go, type Query, type Screen } from '../routes'
import { freshOrderState } from './order'
import type { Slice } from './slice'

export type { Screen } from '../routes'

export interface Toast {
  id: number
  kind: 'ok' | 'error'
  text: string
}

// ---- session: who the desktop user acts for, the settings, navigation, messages
export interface SessionSlice {
  resellers: ResellerView[]
  resellerId: number | null
  settings: SettingsView | null
  toasts: Toast[]
  loadSession(): Promise<void>
  selectReseller(id: number): void
  refreshResellers(): Promise<void>
  /** Adds a reseller account and acts for it; the API's message on failure, null on success. */
  addReseller(input: Parameters<typeof bridge.createReseller>[0]): Promise<string | null>
  /** Changes a reseller account; the core's message on failure, null on success. */
  updateReseller(id: number, input: Parameters<typeof bridge.updateReseller>[1]): Promise<string | null>
  /** The reseller groups, once read. */
  groups: { id: number; name: string }[]
  loadGroups(): Promise<void>
  /** Moves to a screen's address (routes.ts), with what it should show; the router shows it and Back returns. */
  go(screen: Screen, q?: Query): void
  toast(kind: Toast['kind'], text: string): void
  /** Saves all fields or none; answers the core's reason per refused field (empty once saved). */
  saveSettings(input: Parameters<typeof bridge.updateSettings>[0]): Promise<SettingsProblems>
  /**
   * Why the UI must sign in before it goes on, and which sign-in (the server's message); null
   * while signed in.
   */
  signedOut: { need: SignInNeed; message: string } | null
  /** Browser mode: whether there is a session to sign out of (the Electron window has none). */
  canSignOut: boolean
  /** Ends the browser session on the server and shows the sign-in it needs next. */
  signOut(): Promise<void>
}

let toastId = 0

export const sessionSlice: Slice<SessionSlice> = (set, get) => ({
  resellers: [],
  resellerId: null,
  settings: null,
  toasts: [],
  async loadSession() {
    try {
      const [resellers, settings] = await Promise.all([bridge.listResellers(), bridge.settings(), get().loadAccount()])
      const saved = Number(localStorage.getItem('certdesk.reseller'))
      const chosen = resellers.find((r) => r.id === saved) ?? resellers[0]
      set({ resellers, settings, resellerId: chosen?.id ?? null })
    } catch (err) {
      // A sign-in is asked for by its own screen; other failures are said.
      if (!get().signedOut) get().toast('error', errorMessage(err))
    }
  },
  selectReseller(id) {
    localStorage.setItem('certdesk.reseller', String(id))
    set({
      resellerId: id,
      dashboard: null,
      ...freshOrderState(null),
      quote: null,
      apiKeys: [],
      shownKey: null
    })
    for (const name of ['orders', 'invoices', 'transactions'] as const)
      void get().setListFilter(name, get()[name].filter)
  },
  async refreshResellers() {
    set({ resellers: await bridge.listResellers() })
  },
  async updateReseller(id, input) {
    try {
      const r = await bridge.updateReseller(id, input)
      await get().refreshResellers()
      get().toast('ok', `Reseller ${r.name} saved`)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  groups: [],
  async loadGroups() {
    try {
      set({ groups: await bridge.listGroups() })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async addReseller(input) {
    try {
      const r = await bridge.createReseller(input)
      await get().refreshResellers()
      get().selectReseller(r.id)
      get().toast('ok', `Reseller ${r.name} added`)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  go(screen, q) {
    go(screen, q)
  },
  toast(kind, text) {
    const id = ++toastId
    set({ toasts: [...get().toasts, { id, kind, text }] })
    setTimeout(() => set({ toasts: get().toasts.filter((t) => t.id !== id) }), kind === 'error' ? 8000 : 2500)
  },
  async saveSettings(input) {
    try {
      set({ settings: await bridge.updateSettings(input) })
      get().toast('ok', 'Settings saved')
      return {}
    } catch (err) {
      // The save was refused as a whole; ask the core which fields, to say so next to each.
      const problems = await bridge.checkSettings(input).catch((): SettingsProblems => ({}))
      if (Object.keys(problems).length === 0) get().toast('error', errorMessage(err))
      return problems
    }
  },
  signedOut: null,
  canSignOut: endBrowserSession !== null,
  async signOut() {
    if (!endBrowserSession) return
    try {
      // What was exported is no business of whoever signs in next in this browser. Only a
      // session that may export has any to forget (asking otherwise is a refusal in the audit log).
      if (get().allowed.has('dismissFinishedExports')) await bridge.dismissFinishedExports().catch(() => undefined)
      await endBrowserSession()
      // An admin of a team server signs in again with the form; the desktop's tab with a new link.
      set({
        signedOut: get().account?.account
          ? { need: 'password', message: 'You signed out.' }
          : {
              need: 'link',
              message: 'You signed out. To continue, open the newest sign-in link CertDesk printed in its terminal.'
            }
      })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})
