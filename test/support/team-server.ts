/**
 * A team server as `certdesk serve --accounts` builds it: browser mode where admins sign in
 * with their own accounts, on a real listener over a fresh data dir with the demo reseller and
 * the real keychain. Admins are added the way the CLI adds them, and sign in over HTTP the way
 * the UI's page does (its Origin, then the session cookie).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserUiOptions } from '../../src-main/app/browser-mode'
import type { AdminRole } from '../../src-shared/admin-records'
import { ensureDemoReseller, openService, type Service } from '../../src-main/core/service'
import type { Clock } from '../../src-main/core/time'
import { buildServer, listen, type Listening } from '../../src-main/http/server'

const ROOT = join(__dirname, '..', '..')

/** Long enough for NIST SP 800-63B-4's 15 characters, and holding no admin's name. */
export const TEAM_PASSWORD = 'tangerine-kite-harbour-42'

export interface TeamServer {
  dataDir: string
  service: Service
  listening: Listening
  url: string
  resellerId: number
  addAdmin(name: string, role: AdminRole, password?: string): Promise<void>
  /** Signs in and answers the cookie header value, or the refusal. */
  signIn(
    name: string,
    password?: string,
    code?: string
  ): Promise<{ status: number; cookie: string | null; body: Record<string, unknown> }>
  /** One bridge call as the page makes it. */
  rpc(
    cookie: string | null,
    method: string,
    args: unknown[]
  ): Promise<{ status: number; body: Record<string, unknown> }>
  close(): Promise<void>
}

export async function startTeamServer(prefix: string, opts: { clock?: Clock } = {}): Promise<TeamServer> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const service = openService({ dataDir, clock: opts.clock })
  const resellerId = ensureDemoReseller(service)!.id
  let url = ''
  const ui = browserUiOptions(service, () => url, join(ROOT, 'out', 'renderer'), { accounts: true })
  const listening = await listen(await buildServer(service, ui.server))
  url = listening.url
  const post = async (path: string, body: unknown, cookie: string | null) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body)
    })
    return { res, body: (await res.json()) as Record<string, unknown> }
  }
  return {
    dataDir,
    service,
    listening,
    url,
    resellerId,
    addAdmin: async (name, role, password = TEAM_PASSWORD) => {
      await service.admins.accounts.create({ name, role, password })
    },
    signIn: async (name, password = TEAM_PASSWORD, code) => {
      const { res, body } = await post('/ui/sign-in', { name, password, ...(code ? { code } : {}) }, null)
      const set = res.headers.getSetCookie().find((c) => c.startsWith('certdesk_session='))
      return { status: res.status, cookie: set ? set.split(';')[0] : null, body }
    },
    rpc: async (cookie, method, args) => {
      const { res, body } = await post(`/rpc/${method}`, { args }, cookie)
      return { status: res.status, body }
    },
    close: async () => {
      await listening.close()
      service.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
