/**
 * Renderer state, zustand's slices pattern: one slice per domain, each in its own file, combined
 * here with the curried `create<T>()(…)`. Actions call the bridge; components select one field
 * per hook and never call the bridge themselves.
 */
import { create } from 'zustand'
import type { AppMethod, ResellerView } from '../../src-preload/contract'
import { onSignedOut } from '../bridge'
import { accountSlice } from './account'
import { acmeSlice } from './acme'
import { adminsSlice } from './admins'
import { alertsSlice } from './alerts'
import { keysSlice } from './api-keys'
import { backupSlice } from './backup'
import { billingSlice } from './billing'
import { catalogueSlice } from './catalogue'
import { dashboardSlice } from './dashboard'
import { deploySlice } from './deploys'
import { listsSlice } from './lists'
import { installationsSlice } from './installations'
import { draftSlice } from './new-order'
import { orderSlice } from './order'
import { renewalSlice } from './renewal'
import { screensSlice } from './screens'
import { sessionSlice } from './session'
import type { Store } from './slice'

export type { ListName, ListState } from './lists'
export { PAGE_SIZE } from './lists'
export type { Draft } from './new-order'
export type { EventLogFilter } from './screens'
export { EVENTS_PAGE } from './screens'
export { AUDIT_PAGE } from './admins'
export type { Screen, Toast } from './session'
export type { Store } from './slice'

export const useStore = create<Store>()((...a) => ({
  ...sessionSlice(...a),
  ...dashboardSlice(...a),
  ...catalogueSlice(...a),
  ...listsSlice(...a),
  ...billingSlice(...a),
  ...orderSlice(...a),
  ...draftSlice(...a),
  ...keysSlice(...a),
  ...deploySlice(...a),
  ...acmeSlice(...a),
  ...installationsSlice(...a),
  ...backupSlice(...a),
  ...renewalSlice(...a),
  ...screensSlice(...a),
  ...alertsSlice(...a),
  ...accountSlice(...a),
  ...adminsSlice(...a)
}))

// Any call the server refuses for want of a session switches the whole UI to the sign-in it needs.
// The first refusal says why the session ended; calls refused after it only find none.
onSignedOut((message, need) => useStore.setState((s) => (s.signedOut ? {} : { signedOut: { need, message } })))

/** Whether the session may call `method`: an action is shown only then (the server refuses the rest). */
export const useCan = (method: AppMethod): boolean => useStore((s) => s.allowed.has(method))

export const useReseller = (): ResellerView | null =>
  useStore((s) => s.resellers.find((r) => r.id === s.resellerId) ?? null)
