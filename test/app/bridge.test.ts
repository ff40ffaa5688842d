/**
 * The bridge contract: every AppApi method has a handler, a channel in the real preload bundle
 * (IPC) and a route behind the browser-mode RPC client, and both transports answer alike,
 * errors included. The RPC runs on a real listener over a real SQLite file and the real
 * keychain, built the way `serve --ui` builds it; the IPC side loads the built preload
 * (out/preload/index.cjs) and the real main-side wiring (src-main/app/ipc.ts), with only
 * Electron's message passing stood in, because the Electron binary is not on this machine.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bridgeGate } from '../../src-main/app/bridge-gate'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { serveOverIpc } from '../../src-main/app/ipc'
import type { AcmeSetup } from '../../src-main/core/acme-server/client-setup'
import type { Service } from '../../src-main/core/service'
import { API_VERSION, type Listening } from '../../src-main/http/server'
import {
  APP_METHODS,
  appMethodNames,
  CHANNEL_PREFIX,
  HMAC_KEY_PLACEHOLDER,
  RPC_PREFIX,
  type AppApi
} from '../../src-preload/contract'
import { createRpcClient } from '../../src-preload/rpc-client'
import { startBrowserMode, type BrowserMode } from '../support/browser-mode'
import { storedBytes } from '../support/engine'

const ROOT = join(__dirname, '..', '..')
let browserMode: BrowserMode
let service: Service
let listening: Listening
let loginUrl: string
let cookie: string
let rpc: AppApi
let ipc: AppApi
let exposedAs: string
let handlers: AppHandlers
const channels = new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>()
let trusted = true
let resellerId: number

/** Loads the built preload with a stand-in `electron` module and returns what it exposed. */
function loadPreload(): { name: string; api: AppApi } {
  const code = readFileSync(join(ROOT, 'out', 'preload', 'index.cjs'), 'utf8')
  let exposed: { name: string; api: AppApi } | null = null
  const electron = {
    contextBridge: { exposeInMainWorld: (name: string, api: AppApi) => (exposed = { name, api }) },
    ipcRenderer: {
      invoke: async (channel: string, ...args: unknown[]) => {
        const h = channels.get(channel)
        if (!h) throw new Error(`No handler registered for '${channel}'`)
        // IPC copies arguments with structured clone; so does this stand-in.
        return h({ senderFrame: { url: 'file:///app/index.html' } }, ...structuredClone(args))
      }
    }
  }
  const mod = { exports: {} }
  runInNewContext(code, {
    module: mod,
    exports: mod.exports,
    require: (id: string) => {
      if (id === 'electron') return electron
      throw new Error(`the preload must be one self-contained file; it required ${id}`)
    }
  })
  if (!exposed) throw new Error('the preload exposed nothing')
  return exposed
}

beforeAll(async () => {
  browserMode = await startBrowserMode('certdesk-bridge-')
  ;({ service, listening, loginUrl, cookie, resellerId } = browserMode)
  const url = listening.url
  // A browser sends the page's origin with every RPC call; browser mode takes calls only with it.
  rpc = createRpcClient({ baseUrl: url, headers: { cookie, origin: url } })

  handlers = createHandlers(service, { transport: 'electron', listenerUrl: () => url, apiVersion: API_VERSION })
  serveOverIpc(
    {
      handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => Promise<unknown>) =>
        channels.set(channel, fn)
    } as never,
    bridgeGate(service, handlers),
    () => trusted,
    () => undefined
  )
  const exposed = loadPreload()
  ipc = exposed.api
  exposedAs = exposed.name
})

afterAll(async () => {
  await browserMode?.close()
})

describe('the contract', () => {
  it('has a handler for every method and nothing else', () => {
    expect(Object.keys(handlers).sort()).toEqual(appMethodNames.slice().sort())
    for (const name of appMethodNames) expect(typeof handlers[name]).toBe('function')
    expect(appMethodNames).toEqual(Object.keys(APP_METHODS))
  })

  it('the preload exposes exactly one object, window.certdesk, with every method and nothing more', () => {
    expect(exposedAs).toBe('certdesk')
    expect(Object.keys(ipc).sort()).toEqual(appMethodNames.slice().sort())
    expect([...channels.keys()].sort()).toEqual(appMethodNames.map((n) => CHANNEL_PREFIX + n).sort())
  })

  it('the browser client has every method, and every method has an RPC route', async () => {
    expect(Object.keys(rpc).sort()).toEqual(appMethodNames.slice().sort())
    for (const name of appMethodNames) {
      const res = await fetch(`${listening.url}${RPC_PREFIX}${name}`, {
        method: 'POST',
        headers: { cookie, origin: listening.url, 'content-type': 'application/json' },
        body: JSON.stringify({ args: [] })
      })
      const body = (await res.json()) as { success: boolean; error?: string }
      // Without arguments most methods refuse; what matters is that the method was reached.
      expect(body.error ?? '', name).not.toMatch(/no such bridge method/)
      expect(res.status, name).not.toBe(500)
    }
  })
})

describe('both transports answer alike', () => {
  it('reads the same data', async () => {
    expect(await ipc.listResellers()).toEqual(await rpc.listResellers())
    const viaIpc = await ipc.listProducts(resellerId, { validation: 'dv' })
    expect(viaIpc.length).toBeGreaterThan(0)
    expect(await rpc.listProducts(resellerId, { validation: 'dv' })).toEqual(viaIpc)
    expect((await ipc.settings()).transport).toBe('electron')
    expect((await rpc.settings()).transport).toBe('browser')
  })

  it('places, lists and cancels an order with a refund on either transport', async () => {
    const quote = await rpc.quoteOrder(resellerId, { productId: 2, domain: 'bridge.example.test', period: 12 })
    const created = await ipc.createOrder(
      resellerId,
      { productId: 2, domain: 'bridge.example.test', period: 12 },
      'credit'
    )
    expect(created.order.total).toBe(quote.total)
    expect(created.newBalance).toBe(quote.balance - quote.total)
    const page = await rpc.listOrders(resellerId, { domain: 'bridge.example' }, { limit: 10, offset: 0 })
    expect(page.total).toBe(1)
    expect(page.items[0].orderNumber).toBe(created.order.orderNumber)
    const cancelled = await rpc.cancelOrder(resellerId, created.order.id)
    expect(cancelled.refunded).toBe(quote.total)
    expect(cancelled.newBalance).toBe(quote.balance)
  })

  it('turns a core error into an Error with the same message on both transports', async () => {
    const order = (await ipc.createOrder(resellerId, { productId: 2, domain: 'twice.example.test' }, 'credit')).order
    await ipc.cancelOrder(resellerId, order.id)
    const viaIpc = await ipc.cancelOrder(resellerId, order.id).catch((e: Error) => e)
    const viaRpc = await rpc.cancelOrder(resellerId, order.id).catch((e: Error) => e)
    // (The preload runs in its own realm here, so its Error is not this realm's Error.)
    expect(Object.prototype.toString.call(viaIpc)).toBe('[object Error]')
    expect((viaIpc as Error).message).toMatch(/only pending or processing orders can be cancelled/)
    expect((viaRpc as Error).message).toBe((viaIpc as Error).message)
    // A value of the wrong type is refused with a reason, not passed on to SQL.
    await expect(rpc.getOrder('1 OR 1' as never, 1)).rejects.toThrow('reseller id must be a positive whole number')
    await expect(rpc.quoteOrder(resellerId, { productId: 2, domain: 42 as never })).rejects.toThrow(
      'domain must be text'
    )
    await expect(
      ipc.createOrder(resellerId, { productId: 2, domain: 'x.example.test', period: '12' as never }, 'credit')
    ).rejects.toThrow('period must be a whole number')
  })

  it("refuses a bad setting with 400 and the core's reason on either transport, saving nothing", async () => {
    await rpc.updateSettings({ dcvHttpPort: '8080', smtpFrom: 'certs@example.test' })
    const res = await fetch(`${listening.url}${RPC_PREFIX}updateSettings`, {
      method: 'POST',
      headers: { cookie, origin: listening.url, 'content-type': 'application/json' },
      body: JSON.stringify({ args: [{ dcvHttpPort: '99999', smtpFrom: 'not an email', dcvHttpsPort: '8443' }] })
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      success: false,
      error: expect.stringMatching(
        /^could not save the HTTP validation port: .+; could not save the sender address: .+$/
      )
    })
    await expect(ipc.updateSettings({ dcvHttpPort: '99999' })).rejects.toThrow(
      'could not save the HTTP validation port: it must be a port number from 1 to 65535, not "99999"'
    )
    // Which field each reason belongs to, for the Settings screen.
    const problems = await ipc.checkSettings({ dcvHttpPort: '99999', smtpFrom: 'not an email', dcvHttpsPort: '8443' })
    expect(problems).toEqual({
      dcvHttpPort: expect.stringMatching(/^could not save the HTTP validation port: /),
      smtpFrom: expect.stringMatching(/^could not save the sender address: it must be an email address/)
    })
    expect(await rpc.checkSettings({ dcvHttpPort: '80' })).toEqual({})
    expect(await rpc.settings()).toMatchObject({
      dcvHttpPort: '8080',
      dcvHttpsPort: '',
      smtpFrom: 'certs@example.test'
    })
    await rpc.updateSettings({ dcvHttpPort: '', smtpFrom: '' })
  })

  it('IPC answers only the app window', async () => {
    trusted = false
    try {
      await expect(ipc.listResellers()).rejects.toThrow('not from the CertDesk window')
    } finally {
      trusted = true
    }
  })
})

describe('secrets over the bridge', () => {
  it('keeps a generated private key encrypted at rest and gives it back only over the bridge', async () => {
    const order = (await rpc.createOrder(resellerId, { productId: 2, domain: 'vault.example.test' }, 'credit')).order
    const { generateKeyPairSync } = await import('node:crypto')
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString()
    await rpc.storePrivateKey(resellerId, order.id, pem)
    expect((await ipc.getOrder(resellerId, order.id)).hasStoredKey).toBe(true)
    expect((await ipc.exportPrivateKey(resellerId, order.id)).pkcs8Pem).toBe(pem)
    const body = pem.split('\n')[1]
    for (const { where, bytes } of storedBytes(service)) expect(bytes.includes(Buffer.from(body)), where).toBe(false)
    // The reseller API has no way to it.
    const key = (await service.resellers.createApiKey(resellerId)).key
    const doc = (await (await fetch(`${listening.url}/openapi.json`, { headers: { 'x-api-key': key } })).json()) as {
      paths: Record<string, unknown>
    }
    expect(Object.keys(doc.paths).filter((p) => /key|rpc/i.test(p))).toEqual([])
    await expect(rpc.storePrivateKey(resellerId, order.id, 'not a key')).rejects.toThrow('PKCS#8')
  })

  it('an API key is shown once at creation, copied from the keychain, and revoked', async () => {
    const { key, info } = await rpc.createApiKey(resellerId, 'ci')
    expect(key).toMatch(/^cdk_/)
    expect(JSON.stringify(await rpc.listApiKeys(resellerId))).not.toContain(key)
    expect((await ipc.revealApiKey(resellerId, info.id)).key).toBe(key)
    expect((await rpc.revokeApiKey(resellerId, info.id)).revokedAt).not.toBeNull()
    await expect(ipc.revealApiKey(resellerId, info.id)).rejects.toThrow('revoked')
    // Another account's page cannot reach this key.
    const other = await service.resellers.create({ name: 'Other', email: 'other@example.test', groupId: 1 })
    await expect(rpc.revealApiKey(other.id, info.id)).rejects.toThrow('not found')
  })
})

describe('deploy targets and ACME subscriptions over the bridge', () => {
  it('adds, lists and removes deploy targets of the acting reseller only', async () => {
    const order = (await rpc.createOrder(resellerId, { productId: 2, domain: 'deploy.example.test' }, 'credit')).order
    const hook = await ipc.addDeployTarget(resellerId, order.id, {
      kind: 'webhook',
      url: 'https://hooks.example.test/x'
    })
    expect(hook.secret?.name).toBe('webhook_secret')
    expect(hook.secret?.value).toMatch(/^whsec_/)
    const folder = await rpc.addDeployTarget(resellerId, order.id, {
      kind: 'folder',
      path: '/srv/tls',
      layout: 'apache'
    })
    expect(folder.secret).toBeNull()
    const listed = await rpc.listDeployTargets(resellerId, order.id)
    expect(listed.map((t) => [t.kind, t.url ?? t.path, t.lastRun])).toEqual([
      ['webhook', 'https://hooks.example.test/x', null],
      ['folder', '/srv/tls', null]
    ])
    expect(JSON.stringify(listed)).not.toContain(hook.secret!.value)
    // The core's message, on either transport.
    await expect(rpc.addDeployTarget(resellerId, order.id, { kind: 'folder', path: 'rel' })).rejects.toThrow(
      'path must be an absolute folder path'
    )
    await expect(ipc.deployNow(resellerId, order.id)).rejects.toThrow('it has no certificate yet')
    // Another account's page cannot see or change them.
    const other = await service.resellers.create({ name: 'Other deploys', email: 'od@example.test', groupId: 1 })
    await expect(rpc.listDeployTargets(other.id, order.id)).rejects.toThrow('not found')
    await expect(rpc.addDeployTarget(other.id, order.id, { kind: 'webhook', url: 'https://x.test/' })).rejects.toThrow(
      'not found'
    )
    await expect(rpc.removeDeployTarget(other.id, order.id, folder.target.id)).rejects.toThrow('not found')
    const mine = (await rpc.createOrder(other.id, { productId: 2, domain: 'od.example.test' }, 'invoice')).order
    await expect(rpc.removeDeployTarget(other.id, mine.id, folder.target.id)).rejects.toThrow('not found')
    expect(await rpc.removeDeployTarget(resellerId, order.id, folder.target.id)).toEqual({ removed: true })
    expect((await ipc.listDeployTargets(resellerId, order.id)).map((t) => t.kind)).toEqual(['webhook'])
    expect((await ipc.listDeployRuns(resellerId, order.id, { limit: 10, offset: 0 })).total).toBe(0)
  })

  it('lists ACME subscriptions as GET /orders/{id}/acme shows them, the HMAC key only on request', async () => {
    const products = await rpc.listProducts(resellerId, { includeAcme: true })
    const acme = products.find((p) => p.acme && p.name === 'PositiveSSL ACME DV')!
    expect(acme).toBeDefined()
    expect((await rpc.listProducts(resellerId, {})).some((p) => p.acme)).toBe(false)
    const created = await rpc.createOrder(resellerId, { productId: acme.id, domain: 'sub.example.test' }, 'credit')
    expect(created.order.status).toBe('completed')
    const subs = await ipc.listAcmeSubscriptions(resellerId)
    const sub = subs.find((s) => s.orderId === created.order.id)!
    expect(sub.domains).toEqual(['sub.example.test', 'www.sub.example.test'])
    const { eabHmacKey } = await rpc.acmeHmacKey(resellerId, created.order.id)
    expect(JSON.stringify(subs)).not.toContain(eabHmacKey)
    expect(sub.commands.certbot).toContain(HMAC_KEY_PLACEHOLDER)

    const key = (await service.resellers.createApiKey(resellerId)).key
    const res = await fetch(`${listening.url}/orders/${created.order.id}/acme`, { headers: { 'x-api-key': key } })
    const http = ((await res.json()) as { acme: AcmeSetup }).acme
    expect(http.account.eab_hmac_key).toBe(eabHmacKey)
    expect([sub.eabKid, sub.serverUrl, sub.rootCaUrl]).toEqual([
      http.account.eab_kid,
      http.account.server_url,
      http.root_ca_url
    ])
    expect([sub.begin, sub.nextRenewal, sub.end]).toEqual([
      http.subscription.begin,
      http.subscription.next_renewal,
      http.subscription.end
    ])
    // Revealed, the panel shows the core's own command lines, the same as the reseller API's.
    const revealed = await rpc.acmeHmacKey(resellerId, created.order.id)
    expect(revealed.commands).toEqual({
      rootCa: http.commands.root_ca,
      certbot: http.commands.certbot,
      lego: http.commands.lego,
      acmeSh: http.commands.acme_sh
    })
    expect(sub.commands.rootCa).toBe(http.commands.root_ca)
    const other = await service.resellers.create({ name: 'Other acme', email: 'oa@example.test', groupId: 1 })
    expect(await rpc.listAcmeSubscriptions(other.id)).toEqual([])
    await expect(rpc.acmeHmacKey(other.id, created.order.id)).rejects.toThrow('not found')
  })
})

describe('browser-mode sessions', () => {
  it('the sign-in link works once and sets an HttpOnly SameSite=Strict cookie', async () => {
    const again = await fetch(loginUrl, { redirect: 'manual' })
    expect(again.status).toBe(401)
    expect(cookie).toMatch(/^certdesk_session=/)
    const noCookie = await fetch(`${listening.url}/rpc/listResellers`, {
      method: 'POST',
      headers: { origin: listening.url, 'content-type': 'application/json' },
      body: '{"args":[]}'
    })
    expect(noCookie.status).toBe(401)
    const get = await fetch(`${listening.url}/rpc/listResellers`, { headers: { cookie } })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })

  it('an API key does not open the UI routes, and a session does not open the reseller API', async () => {
    const key = (await service.resellers.createApiKey(resellerId)).key
    const withKey = await fetch(`${listening.url}/rpc/listResellers`, {
      method: 'POST',
      headers: { 'x-api-key': key, origin: listening.url, 'content-type': 'application/json' },
      body: '{"args":[]}'
    })
    expect(withKey.status).toBe(401)
    const api = await fetch(`${listening.url}/orders`, { headers: { cookie } })
    expect(api.status).toBe(401)
  })
})
