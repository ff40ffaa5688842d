/**
 * The one bridge the UI uses. In Electron the preload exposes `window.certdesk` (IPC); in
 * browser mode the same typed client runs over the session-authenticated RPC. Store actions
 * call this; components never do.
 */
import type { AppApi } from '../src-preload/contract'
import { BRIDGE_GLOBAL, signInNeedOf, type SignInNeed } from '../src-preload/channels'
import { createRpcClient, signInWithPassword, signOut } from '../src-preload/rpc-client'

const exposed = (window as unknown as Record<string, AppApi | undefined>)[BRIDGE_GLOBAL]

const signedOutListeners = new Set<(message: string, need: SignInNeed) => void>()

/**
 * Told when a call finds no session: browser mode's tab signed out or idle too long, or (in the
 * window or browser mode alike) the team server the app works on ended its session there.
 */
export function onSignedOut(listener: (message: string, need: SignInNeed) => void): void {
  signedOutListeners.add(listener)
}

const tell = (message: string, need: SignInNeed): void => signedOutListeners.forEach((l) => l(message, need))

/** The window's IPC bridge, telling the listeners when a call failed for want of a sign-in. */
function watched(api: AppApi): AppApi {
  return Object.fromEntries(
    Object.entries(api).map(([name, fn]) => [
      name,
      async (...args: unknown[]) => {
        try {
          return await (fn as (...a: unknown[]) => Promise<unknown>)(...args)
        } catch (err) {
          const need = signInNeedOf(err)
          if (need) tell((err as Error).message, need)
          throw err
        }
      }
    ])
  ) as unknown as AppApi
}

export const bridge: AppApi = exposed ? watched(exposed) : createRpcClient({ onUnauthorized: tell })

/** Ends the browser-mode session on the server; null in the Electron window, which has no session. */
export const endBrowserSession: (() => Promise<void>) | null = exposed ? null : () => signOut()

/** Browser mode on a team server: signs in with an admin account; null in the Electron window. */
export const signInToServer: ((c: { name: string; password: string; code?: string }) => Promise<void>) | null = exposed
  ? null
  : (c) => signInWithPassword(c)
