/** ACME subscriptions of the acting reseller. */
import type { AcmeCommandsView, AcmeSubscriptionView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface AcmeSlice {
  acmeSubscriptions: AcmeSubscriptionView[]
  acmeError: string | null
  /** HMAC keys revealed on request with the commands that hold them, by order id; forgotten on reload. */
  acmeKeys: Record<number, { eabHmacKey: string; commands: AcmeCommandsView }>
  loadAcme(): Promise<void>
  revealAcmeKey(orderId: number): Promise<void>
}

export const acmeSlice: Slice<AcmeSlice> = (set, get) => ({
  acmeSubscriptions: [],
  acmeError: null,
  acmeKeys: {},
  async loadAcme() {
    try {
      set({ acmeSubscriptions: await bridge.listAcmeSubscriptions(rid(get)), acmeError: null, acmeKeys: {} })
    } catch (err) {
      set({ acmeSubscriptions: [], acmeError: errorMessage(err) })
    }
  },
  async revealAcmeKey(orderId) {
    try {
      const revealed = await bridge.acmeHmacKey(rid(get), orderId)
      set({ acmeKeys: { ...get().acmeKeys, [orderId]: revealed } })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})
