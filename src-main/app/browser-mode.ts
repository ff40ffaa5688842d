/**
 * Wiring for `certdesk serve --ui`: the bridge handlers over RPC and the built UI, added to the
 * reseller API's listener through buildServer's `extend` and `ownAuth` options.
 */
import { join } from 'node:path'
import type { Service } from '../core/service'
import { API_VERSION, type ServerOptions } from '../http/server'
import { BrowserSessions, installBrowserUi, isBrowserUiRequest, LOGIN_PATH } from './browser-ui'
import { createHandlers } from './handlers'

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
  } = {}
): {
  server: Pick<ServerOptions, 'extend' | 'ownAuth'>
  sessions: BrowserSessions
  loginUrl: (base: string) => string
} {
  const loginUrl = (base: string, token: string | null): string => `${base}${LOGIN_PATH}?token=${token ?? ''}`
  const sessions = new BrowserSessions({
    clock: opts.clock ?? service.ctx.clock,
    idleMinutes: opts.idleMinutes,
    onNewToken: (token) => opts.onNewLink?.(loginUrl(listenerUrl(), token))
  })
  const handlers = createHandlers(service, { transport: 'browser', listenerUrl, apiVersion: API_VERSION })
  return {
    sessions,
    server: {
      ownAuth: isBrowserUiRequest,
      extend: (_app, router) => installBrowserUi(router, { handlers, sessions, uiDir })
    },
    loginUrl: (base) => loginUrl(base, sessions.token)
  }
}
