/**
 * The one bridge the UI uses. In Electron the preload exposes `window.certdesk` (IPC); in
 * browser mode the same typed client runs over the session-authenticated RPC. Store actions
 * call this; components never do.
 */
import type { AppApi } from '../src-preload/contract'
import { BRIDGE_GLOBAL } from '../src-preload/channels'
import { createRpcClient, signOut } from '../src-preload/rpc-client'

const exposed = (window as unknown as Record<string, AppApi | undefined>)[BRIDGE_GLOBAL]

const signedOutListeners = new Set<(message: string) => void>()

/** Browser mode: told when the server no longer knows this tab's session (signed out, or idle too long). */
export function onSignedOut(listener: (message: string) => void): void {
  signedOutListeners.add(listener)
}

export const bridge: AppApi =
  exposed ?? createRpcClient({ onUnauthorized: (message) => signedOutListeners.forEach((l) => l(message)) })

/** Ends the browser-mode session on the server; null in the Electron window, which has no session. */
export const endBrowserSession: (() => Promise<void>) | null = exposed ? null : () => signOut()
