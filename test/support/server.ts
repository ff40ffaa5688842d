/**
 * A real CertDesk listener on loopback over a real SQLite file in a fresh data dir, with the
 * real keychain (the private session of global-setup). Helpers make resellers with credit and
 * API keys the way the admin CLI would.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { usdToCents } from '../../src-main/core/billing/money'
import { type Service } from '../../src-main/core/service'
import { openService } from './engine'
import { buildServer, listen, type App, type ServerOptions } from '../../src-main/http/server'
import type { Clock } from '../../src-main/core/time'

export interface ApiResponse<T = Record<string, unknown>> {
  status: number
  headers: Headers
  body: T
}

export interface TestReseller {
  id: number
  key: string
}

export interface TestServer {
  url: string
  dataDir: string
  service: Service
  /** The listener itself, for what only it can tell (the read cache's counters). */
  app: App
  /** A reseller in `groupId` (default 1) with `credit` USD and an API key. */
  reseller(opts?: { credit?: number; groupId?: number | null; discount?: number; name?: string }): Promise<TestReseller>
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> }
  ): Promise<ApiResponse<T>>
  close(): Promise<void>
}

let counter = 0

/**
 * `dataDir`: open a store another test server already uses (a second process's view of it),
 * left in place on close; a fresh one otherwise.
 */
export async function startServer(
  opts: { clock?: Clock; server?: ServerOptions; dataDir?: string } = {}
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'certdesk-test-'))
  const service = await openService({ dataDir, clock: opts.clock })
  const listening = await listen(await buildServer(service, opts.server))
  return {
    url: listening.url,
    dataDir,
    service,
    app: listening.app,
    async reseller({ credit = 0, groupId = 1, discount = 0, name } = {}) {
      counter += 1
      const r = await service.resellers.create({
        name: name ?? `Reseller ${counter}`,
        email: `reseller${counter}@example.test`,
        company: `Company ${counter}`,
        groupId,
        discountRate: discount
      })
      if (credit > 0) await service.ledger.topUp(r.id, usdToCents(credit))
      return { id: r.id, key: (await service.resellers.createApiKey(r.id)).key }
    },
    async request(method, path, { key, body, headers = {} } = {}) {
      const h: Record<string, string> = { accept: 'application/json', ...headers }
      if (key) h['x-api-key'] = key
      let payload: string | undefined
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body)
        h['content-type'] ??= 'application/json'
      }
      const res = await fetch(listening.url + path, { method, headers: h, body: payload })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = text ? JSON.parse(text) : null
      } catch {
        // leave as text: a test will notice a body that is not JSON
      }
      return { status: res.status, headers: res.headers, body: parsed as never }
    },
    async close() {
      await listening.close()
      await service.close()
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
