/**
 * What servers present for each order (kept per order id, so one order's results never show on
 * another's page), certificates bought elsewhere, and the expiry report.
 */
import type {
  EndpointInput,
  ExpiringCertificate,
  ImportedCertificate,
  ImportOutcome,
  InstallationReport,
  PaymentMethod,
  ReplacementQuote,
  UploadedFile
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { download, errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface InstallationsSlice {
  /** By order id. */
  installations: Record<number, InstallationReport>
  /** Order ids with a check running. */
  checking: number[]
  imported: ImportedCertificate[]
  importOutcome: ImportOutcome | null
  importBusy: boolean
  replacement: ReplacementQuote | null
  expiring: ExpiringCertificate[]
  expiringDays: number
  loadInstallation(orderId: number): Promise<void>
  checkInstallation(orderId: number): Promise<void>
  addEndpoint(orderId: number, input: EndpointInput): Promise<boolean>
  removeEndpoint(orderId: number, endpointId: number): Promise<void>
  loadImported(): Promise<void>
  importUploads(files: UploadedFile[], password: string, withKeys: boolean): Promise<void>
  importFolder(folder: string, password: string, withKeys: boolean, followLinks: boolean): Promise<void>
  importEndpoints(specs: string[]): Promise<void>
  quoteReplacement(importedId: number): Promise<void>
  renewImported(importedId: number, payment: PaymentMethod): Promise<void>
  loadExpiring(days: number): Promise<void>
  downloadExpiringCsv(): Promise<void>
}

export const installationsSlice: Slice<InstallationsSlice> = (set, get) => {
  const fail = (err: unknown): void => get().toast('error', errorMessage(err))
  const runImport = async (work: () => Promise<ImportOutcome>): Promise<void> => {
    set({ importBusy: true, importOutcome: null })
    try {
      const outcome = await work()
      set({ importOutcome: outcome })
      get().toast(
        'ok',
        `Imported ${outcome.imported.length}, already known ${outcome.duplicates.length}, skipped ${outcome.skipped.length}`
      )
      await get().loadImported()
    } catch (err) {
      fail(err)
    } finally {
      set({ importBusy: false })
    }
  }
  return {
    installations: {},
    checking: [],
    imported: [],
    importOutcome: null,
    importBusy: false,
    replacement: null,
    expiring: [],
    expiringDays: 30,
    async loadInstallation(orderId) {
      try {
        const report = await bridge.installationReport(rid(get), orderId)
        set({ installations: { ...get().installations, [orderId]: report } })
      } catch (err) {
        fail(err)
      }
    },
    async checkInstallation(orderId) {
      set({ checking: [...get().checking, orderId] })
      try {
        const report = await bridge.checkInstallation(rid(get), orderId)
        set({ installations: { ...get().installations, [orderId]: report } })
        get().toast(report.verdict === 'ok' ? 'ok' : 'error', `${report.orderNumber}: ${report.label}`)
      } catch (err) {
        fail(err)
      } finally {
        set({ checking: get().checking.filter((id) => id !== orderId) })
      }
    },
    async addEndpoint(orderId, input) {
      try {
        await bridge.addInstallationEndpoint(rid(get), orderId, input)
        await get().loadInstallation(orderId)
        return true
      } catch (err) {
        fail(err)
        return false
      }
    },
    async removeEndpoint(orderId, endpointId) {
      try {
        await bridge.removeInstallationEndpoint(rid(get), orderId, endpointId)
        await get().loadInstallation(orderId)
      } catch (err) {
        fail(err)
      }
    },
    async loadImported() {
      try {
        set({ imported: await bridge.listImported(rid(get)) })
      } catch (err) {
        fail(err)
      }
    },
    importUploads: (files, password, withKeys) =>
      runImport(() => bridge.importUploads(rid(get), files, { password: password || undefined, withKeys })),
    importFolder: (folder, password, withKeys, followLinks) =>
      runImport(() =>
        bridge.importFolder(rid(get), folder, { password: password || undefined, withKeys, followLinks })
      ),
    importEndpoints: (specs) => runImport(() => bridge.importEndpoints(rid(get), specs)),
    async quoteReplacement(importedId) {
      try {
        set({ replacement: await bridge.replacementQuote(rid(get), importedId) })
      } catch (err) {
        set({ replacement: null })
        fail(err)
      }
    },
    async renewImported(importedId, payment) {
      try {
        const created = await bridge.renewImported(rid(get), importedId, payment)
        set({ replacement: null })
        get().toast('ok', `Order ${created.order.orderNumber} placed`)
        await get().loadImported()
        get().go({ name: 'order', id: created.order.id })
      } catch (err) {
        fail(err)
      }
    },
    async loadExpiring(days) {
      try {
        set({ expiring: await bridge.expiringReport(rid(get), days), expiringDays: days })
      } catch (err) {
        fail(err)
      }
    },
    async downloadExpiringCsv() {
      try {
        const { csv } = await bridge.expiringCsv(rid(get), get().expiringDays)
        download(`certdesk-expiring-${get().expiringDays}-days.csv`, csv, 'text/csv')
      } catch (err) {
        fail(err)
      }
    }
  }
}
