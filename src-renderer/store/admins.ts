/** The team's admins and the audit log, for owners. */
import type { AdminRole, AdminView, AuditEntry, AuditFilter, NewAdmin } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { latestOnly, type Slice } from './slice'

/** Entries per page of the audit screen. */
export const AUDIT_PAGE = 50

/** Only the latest load of the audit log is shown. */
const auditLoad = latestOnly()

export interface AuditLogState {
  filter: AuditFilter
  offset: number
  items: AuditEntry[]
  total: number
  error: string | null
}

export interface AdminsSlice {
  admins: AdminView[]
  loadAdmins(): Promise<void>
  /** Adds an admin; the core's reason on failure, null once added. */
  addAdmin(input: NewAdmin): Promise<string | null>
  setAdminRole(name: string, role: AdminRole): Promise<void>
  setAdminEnabled(name: string, enabled: boolean): Promise<void>
  auditLog: AuditLogState
  /** A page of the log; without arguments, the same filter and page again. */
  loadAudit(filter?: AuditFilter, offset?: number): Promise<void>
}

export const adminsSlice: Slice<AdminsSlice> = (set, get) => {
  const replace = (a: AdminView): void => set({ admins: get().admins.map((x) => (x.id === a.id ? a : x)) })
  return {
    admins: [],
    async loadAdmins() {
      try {
        set({ admins: await bridge.listAdmins() })
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async addAdmin(input) {
      try {
        const a = await bridge.addAdmin(input)
        set({ admins: [...get().admins, a].sort((x, y) => x.name.localeCompare(y.name)) })
        get().toast('ok', `Admin ${a.name} added as ${a.role}`)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async setAdminRole(name, role) {
      try {
        replace(await bridge.setAdminRole(name, role))
        get().toast('ok', `${name} is ${role === 'viewer' ? 'a' : 'an'} ${role} now; their sessions were ended`)
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async setAdminEnabled(name, enabled) {
      try {
        replace(await bridge.setAdminEnabled(name, enabled))
        get().toast('ok', enabled ? `${name} may sign in again` : `${name} is disabled and signed out`)
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    auditLog: { filter: {}, offset: 0, items: [], total: 0, error: null },
    async loadAudit(filter = get().auditLog.filter, offset = get().auditLog.offset) {
      const latest = auditLoad()
      try {
        const page = await bridge.auditLog(filter, { limit: AUDIT_PAGE, offset })
        if (latest()) set({ auditLog: { filter, offset, items: page.items, total: page.total, error: null } })
      } catch (err) {
        if (latest()) set({ auditLog: { ...get().auditLog, filter, error: errorMessage(err) } })
      }
    }
  }
}
