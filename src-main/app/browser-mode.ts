/**
 * Wiring for `certdesk serve --ui`: the bridge over RPC behind its gate, and the built UI, added
 * to the reseller API's listener through buildServer's `extend` and `ownAuth` options. Browsers
 * sign in with the desktop's one-time link, or on a team server (`--accounts`) with an admin's
 * account.
 */
import { join } from 'node:path'
import type { Service } from '../core/service'
import { API_VERSION, type ServerOptions } from '../http/server'
import { accountAuth } from './browser-accounts'
import { BrowserSessions, installBrowserUi, isBrowserUiRequest, linkAuth, LOGIN_PATH } from './browser-ui'
import { bridgeGate } from './bridge-gate'
import { createHandlers } from './handlers'
import { TeamConnection } from './team-client'

export function browserUiOptions(
  service: Service,
  listenerUrl: () => string,
  uiDir = join(__dirname, '..', 'renderer'),
  opts: {
    /** Browser sessions age by this clock; the service's own by default. */
    clock?: () => Date
    idleMinutes?: number
    /** Told each sign-in link made after the first (a session ended); `serve` prints it. */
    onNewLink?: (url: string) => void
    /**
     * Admins sign in with their accounts (a team server) instead of the desktop's one-time
     * link; such a server is never a client of another.
     */
    accounts?: boolean
    /** The name a team's book is shown by; the listener's host when not given. */
    bookName?: () => string
  } = {}
): {
  server: Pick<ServerOptions, 'extend' | 'ownAuth'>
  sessions: BrowserSessions
  /** The one-time link of the desktop's browser mode (a team server's admins sign in at /ui/ instead). */
  loginUrl: (base: string) => string
} {
  const loginUrl = (base: string, token: string | null): string => `${base}${LOGIN_PATH}?token=${token ?? ''}`
  const sessions = new BrowserSessions({
    clock: opts.clock ?? service.ctx.clock,
    idleMinutes: opts.idleMinutes,
    onNewToken: (token) => opts.onNewLink?.(loginUrl(listenerUrl(), token))
  })
  const team = opts.accounts ? undefined : new TeamConnection()
  const handlers = createHandlers(service, {
    transport: 'browser',
    listenerUrl,
    apiVersion: API_VERSION,
    accounts: opts.accounts,
    bookName: opts.bookName,
    team
  })
  const gate = bridgeGate(service, handlers, team)
  const auth = opts.accounts ? accountAuth(service) : linkAuth(sessions)
  return {
    sessions,
    server: {
      ownAuth: isBrowserUiRequest,
      extend: (_app, router) => installBrowserUi(router, { gate, auth, uiDir })
    },
    loginUrl: (base) => loginUrl(base, sessions.token)
  }
}
