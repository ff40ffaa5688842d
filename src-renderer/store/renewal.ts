/** Renewal automation of the order being looked at: window, delegation CNAMEs, dns-persist-01 records, and whether it renews with nobody. */
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
  /**
   * Switches how the order renews at the external CA (dns renews with nobody once its record
   * is set); the order's validation is read again, as a waiting order changes its method.
   */
  switchRenewal(orderId: number, method: 'dns' | 'http'): Promise<void>
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
  },
  async switchRenewal(orderId, method) {
    try {
      const renewal = await bridge.setRenewalMethod(rid(get), orderId, method)
      if (get().orderId === orderId) set({ renewalOrderId: orderId, renewal, renewalError: null })
      get().toast('ok', method === 'dns' ? 'Renewals now validate over DNS' : 'Renewals now validate over HTTP')
      void get().loadSsl(orderId)
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})
