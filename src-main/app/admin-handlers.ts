/**
 * The bridge handlers of who the UI acts as: the session and its book, the caller's own
 * password and TOTP, the admins, the audit log, and the desktop app's connection to a team
 * server. Part of the one handler table (handlers.ts); the gate has checked the role already.
 */
import { accessOf, type AppMethod } from '../../src-shared/app-api'
import type { SessionView } from '../../src-shared/admin-records'
import { roleAtLeast } from '../../src-shared/constants'
import { appMethodNames } from '../../src-preload/channels'
import { auditQuery } from '../core/admins'
import { conflict } from '../core/errors'
import type { Service } from '../core/service'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/paging'
import { currentCaller, type Caller } from './caller'
import type { AppHandlers } from './bridge-answer'
import type { AppEnvironment } from './environment'

type AdminMethods =
  | 'session'
  | 'connectTeam'
  | 'disconnectTeam'
  | 'changePassword'
  | 'beginTotp'
  | 'confirmTotp'
  | 'disableTotp'
  | 'listAdmins'
  | 'addAdmin'
  | 'setAdminRole'
  | 'setAdminEnabled'
  | 'auditLog'

/** The methods `role` may call, from the contract table. */
export const allowedFor = (role: Caller['role']): AppMethod[] =>
  appMethodNames.filter((m) => roleAtLeast(role, accessOf(m).role))

/** The caller's own admin account; the desktop user has none. */
function ownAccount(what: string): number {
  const c = currentCaller()
  if (c.adminId === null)
    throw conflict(
      `could not ${what}: the desktop user signs in without an admin account; only admins of a team server have one`
    )
  return c.adminId
}

export function adminAdapters(service: Service, env: AppEnvironment): Pick<AppHandlers, AdminMethods> {
  const admins = service.admins

  const localSession = async (): Promise<SessionView> => {
    const c = currentCaller()
    return {
      actor: c.actor,
      role: c.role,
      account: c.adminId !== null,
      totpEnabled: c.adminId === null ? false : (await admins.accounts.byId(c.adminId)).totpEnabled,
      // A process that signs admins in with accounts is a team server; the desktop works on its own.
      book: env.accounts
        ? { kind: 'team', server: env.bookName?.() ?? new URL(env.listenerUrl()).host }
        : { kind: 'local' },
      teamClient: false,
      allowed: allowedFor(c.role)
    }
  }
  const team = () => {
    if (!env.team)
      throw conflict(
        'could not connect to a team server: this CertDesk signs its own admins in; connect from the desktop app instead'
      )
    return env.team
  }

  return {
    // While the app is a team server's client, the gate sends `session` there (team-client.ts).
    session: async () => await localSession(),
    connectTeam: async (input) => team().connect(input),
    disconnectTeam: async () => {
      await team().disconnect()
      return await localSession()
    },

    changePassword: async ({ current, next }) => {
      await admins.accounts.changePassword(ownAccount('change the password'), current, next, currentCaller().sessionId)
      return { changed: true as const }
    },
    beginTotp: async () => await admins.accounts.beginTotp(ownAccount('set up two-step sign-in')),
    confirmTotp: async (code) => {
      await admins.accounts.confirmTotp(ownAccount('turn on two-step sign-in'), code)
      return { ...(await localSession()), totpEnabled: true }
    },
    disableTotp: async (password) => {
      await admins.accounts.disableTotp(ownAccount('turn off two-step sign-in'), password)
      return { ...(await localSession()), totpEnabled: false }
    },

    listAdmins: async () => await admins.accounts.list(),
    addAdmin: (input) => admins.accounts.create(input),
    setAdminRole: async (name, role) => await admins.accounts.setRole(name, role),
    setAdminEnabled: async (name, enabled) => await admins.accounts.setEnabled(name, enabled),
    auditLog: async (filter, p) =>
      await admins.audit.list(auditQuery(filter), {
        limit: Math.min(p.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
        offset: p.offset ?? 0
      })
  }
}
