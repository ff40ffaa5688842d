/** Deploy targets and runs of the order being looked at. */
import type {
  CreatedDeployTargetView,
  DeployRunView,
  DeployTargetInput,
  DeployTargetView
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface DeploySlice {
  deployOrderId: number | null
  deployTargets: DeployTargetView[]
  deployRuns: DeployRunView[]
  deployError: string | null
  /** Orders with a "Deploy now" on its way (the answer comes once every run has its outcome). */
  deploying: number[]
  loadDeploys(orderId: number): Promise<void>
  /** Adds a target; the created target (with its one-time secret) on success, the API's message on failure. */
  addDeployTarget(orderId: number, input: DeployTargetInput): Promise<CreatedDeployTargetView | string>
  removeDeployTarget(orderId: number, targetId: number): Promise<void>
  deployNow(orderId: number): Promise<void>
}

const RECENT_RUNS = 20

export const deploySlice: Slice<DeploySlice> = (set, get) => ({
  deployOrderId: null,
  deployTargets: [],
  deployRuns: [],
  deployError: null,
  deploying: [],
  async loadDeploys(orderId) {
    if (get().deployOrderId !== orderId)
      set({ deployOrderId: orderId, deployTargets: [], deployRuns: [], deployError: null })
    try {
      const r = rid(get)
      const [targets, runs] = await Promise.all([
        bridge.listDeployTargets(r, orderId),
        bridge.listDeployRuns(r, orderId, { limit: RECENT_RUNS, offset: 0 })
      ])
      // A reload after a refused "Deploy now" keeps its reason on screen.
      if (get().deployOrderId === orderId) set({ deployTargets: targets, deployRuns: runs.items })
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    }
  },
  async addDeployTarget(orderId, input) {
    try {
      const created = await bridge.addDeployTarget(rid(get), orderId, input)
      get().toast('ok', `Deploy target added (${created.target.kind})`)
      void get().loadDeploys(orderId)
      return created
    } catch (err) {
      return errorMessage(err)
    }
  },
  async removeDeployTarget(orderId, targetId) {
    try {
      await bridge.removeDeployTarget(rid(get), orderId, targetId)
      get().toast('ok', 'Deploy target removed')
      await get().loadDeploys(orderId)
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    }
  },
  async deployNow(orderId) {
    set({ deploying: [...get().deploying, orderId], deployError: null })
    try {
      const runs = await bridge.deployNow(rid(get), orderId)
      const failed = runs.filter((r) => r.status === 'failed').length
      get().toast(
        failed ? 'error' : 'ok',
        failed ? `${failed} of ${runs.length} deploys failed` : `Deployed to ${runs.length} target(s)`
      )
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    } finally {
      set({ deploying: get().deploying.filter((id) => id !== orderId) })
      // Only the page still showing this order reloads; another order's page keeps its own runs.
      if (get().deployOrderId === orderId) await get().loadDeploys(orderId)
    }
  }
})
