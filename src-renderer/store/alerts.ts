/** The Alerts screen: rules, channels (with a test message), the alerts raised and the last deliveries. */
import type {
  AlertChannelInput,
  AlertChannelView,
  AlertDeliveryView,
  AlertRuleView,
  AlertView
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import type { Slice } from './slice'

/** How many deliveries and alerts the screen lists. */
export const ALERTS_SHOWN = 25

export interface AlertsSlice {
  alertRules: AlertRuleView[]
  alertChannels: AlertChannelView[]
  alertDeliveries: AlertDeliveryView[]
  raisedAlerts: AlertView[]
  /** A new webhook channel's signing secret, shown once until dismissed. */
  alertSecret: { channel: string; secret: string } | null
  loadAlerts(): Promise<void>
  setAlertRule(rule: string, change: { enabled?: boolean; thresholdHours?: number }): Promise<void>
  addAlertChannel(input: AlertChannelInput): Promise<boolean>
  removeAlertChannel(id: number): Promise<void>
  testAlertChannel(id: number): Promise<void>
  dismissAlertSecret(): void
}

export const alertsSlice: Slice<AlertsSlice> = (set, get) => {
  const attempt = async (fn: () => Promise<void>): Promise<boolean> => {
    try {
      await fn()
      return true
    } catch (err) {
      get().toast('error', errorMessage(err))
      return false
    }
  }
  return {
    alertRules: [],
    alertChannels: [],
    alertDeliveries: [],
    raisedAlerts: [],
    alertSecret: null,
    async loadAlerts() {
      await attempt(async () => {
        const [rules, channels, deliveries, alerts] = await Promise.all([
          bridge.alertRules(),
          bridge.alertChannels(),
          bridge.alertDeliveries({ limit: ALERTS_SHOWN }),
          bridge.listAlerts({ limit: ALERTS_SHOWN })
        ])
        set({
          alertRules: rules,
          alertChannels: channels,
          alertDeliveries: deliveries.items,
          raisedAlerts: alerts.items
        })
      })
    },
    async setAlertRule(rule, change) {
      if (
        await attempt(async () => {
          await bridge.updateAlertRule(rule, change)
        })
      ) {
        get().toast('ok', 'Rule saved')
        await get().loadAlerts()
      }
    },
    async addAlertChannel(input) {
      const ok = await attempt(async () => {
        const created = await bridge.addAlertChannel(input)
        if (created.signingSecret)
          set({ alertSecret: { channel: created.channel.name, secret: created.signingSecret } })
        get().toast('ok', `Channel ${created.channel.name} added`)
      })
      if (ok) await get().loadAlerts()
      return ok
    },
    async removeAlertChannel(id) {
      if (
        await attempt(async () => {
          await bridge.removeAlertChannel(id)
        })
      )
        await get().loadAlerts()
    },
    async testAlertChannel(id) {
      await attempt(async () => {
        const d = await bridge.testAlertChannel(id)
        if (d.status === 'sent') get().toast('ok', `Test message sent to ${d.channelName}`)
        else get().toast('error', `Test message to ${d.channelName} not delivered: ${d.lastError ?? d.status}`)
      })
      await get().loadAlerts()
    },
    dismissAlertSecret() {
      set({ alertSecret: null })
    }
  }
}
