/** The acting reseller's API keys; a new key is shown once. */
import type { ApiKeyView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface KeysSlice {
  apiKeys: ApiKeyView[]
  shownKey: { id: number; key: string } | null
  loadKeys(): Promise<void>
  createKey(label: string): Promise<void>
  copyKey(id: number): Promise<void>
  revokeKey(id: number): Promise<void>
  hideKey(): void
}

export const keysSlice: Slice<KeysSlice> = (set, get) => ({
  apiKeys: [],
  shownKey: null,
  async loadKeys() {
    try {
      set({ apiKeys: await bridge.listApiKeys(rid(get)) })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async createKey(label) {
    try {
      const { key, info } = await bridge.createApiKey(rid(get), label)
      set({ shownKey: { id: info.id, key }, apiKeys: [info, ...get().apiKeys] })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async copyKey(id) {
    try {
      const { key } = await bridge.revealApiKey(rid(get), id)
      await navigator.clipboard.writeText(key)
      get().toast('ok', 'API key copied to the clipboard')
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async revokeKey(id) {
    try {
      const info = await bridge.revokeApiKey(rid(get), id)
      set({
        apiKeys: get().apiKeys.map((k) => (k.id === id ? info : k)),
        shownKey: get().shownKey?.id === id ? null : get().shownKey
      })
      get().toast('ok', `API key ${info.prefix}… revoked`)
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  hideKey() {
    set({ shownKey: null })
  }
})
