/** The dashboard's figures for the acting reseller. */
import type { DashboardView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface DashboardSlice {
  dashboard: DashboardView | null
  loadDashboard(): Promise<void>
}

export const dashboardSlice: Slice<DashboardSlice> = (set, get) => ({
  dashboard: null,
  async loadDashboard() {
    try {
      set({ dashboard: await bridge.dashboard(rid(get)) })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})
