/**
 * The one bridge the UI uses. In Electron the preload exposes `window.certdesk` (IPC); in
 * browser mode the same typed client runs over the session-authenticated RPC. Store actions
 * call this; components never do.
 */
import { BRIDGE_GLOBAL, type AppApi } from '../src-preload/contract'
import { createRpcClient } from '../src-preload/rpc-client'

const exposed = (window as unknown as Record<string, AppApi | undefined>)[BRIDGE_GLOBAL]

export const bridge: AppApi = exposed ?? createRpcClient()
