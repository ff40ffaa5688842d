/** Renewal automation of the order being looked at: window, delegation CNAMEs, dns-persist-01 records. */
import type { AppApi } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export type OrderRenewal = Awaited<ReturnType<AppApi['orderRenewal']>>

export interface RenewalSlice {
  renewalOrderId: number | null
  renewal: OrderRenewal | null
  renewalError: string | null
  /** Reads the view again: its DNS looks are read-only, so this is also "check now". */
  loadRenewal(orderId: number): Promise<void>
}

export const renewalSlice: Slice<RenewalSlice> = (set, get) => ({
  renewalOrderId: null,
  renewal: null,
  renewalError: null,
  async loadRenewal(orderId) {
    try {
      const renewal = await bridge.orderRenewal(rid(get), orderId)
      set({ renewalOrderId: orderId, renewal, renewalError: null })
    } catch (err) {
      set({ renewalOrderId: orderId, renewal: null, renewalError: errorMessage(err) })
    }
  }
})
