/**
 * The desktop bridge and the ACME server over a busy store, as a started `serve --ui` runs them,
 * while another process holds the store's write lock. A bridge call or ACME request that
 * writes waits for the lock on timers (the store engine never sleeps on the only thread) and
 * answers 503 (with Retry-After) after its budget; the reads sent while it waits are all
 * answered before it, and nothing is written.
 */
import { generateKeyPairSync } from 'node:crypto'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { DB_FILE } from '../../src-main/core/store/db'
import type { AppApi } from '../../src-preload/contract'
import { createRpcClient } from '../../src-preload/rpc-client'
import { rawAccount } from '../support/acme-jws'
import { startBrowserMode, type BrowserMode } from '../support/browser-mode'
import { holdWriteLock, sleep } from './support'

let browserMode: BrowserMode
let dataDir: string
let rpc: AppApi
let resellerId: number
let acmeServer: RunningAcmeServer

beforeAll(async () => {
  browserMode = await startBrowserMode('certdesk-busy-transports-')
  ;({ dataDir, resellerId } = browserMode)
  acmeServer = await startAcmeServer(browserMode.service, { port: 0 })
  rpc = createRpcClient({ baseUrl: browserMode.url, headers: { cookie: browserMode.cookie, origin: browserMode.url } })
})

afterAll(async () => {
  await acmeServer?.close()
  await browserMode?.close()
})

describe('a bridge call that writes while another process holds the lock', () => {
  it('waits without holding up the reads, then 503; after the lock it goes through', async () => {
    const before = await rpc.listOrders(resellerId, {}, { limit: 10, offset: 0 })
    const lock = await holdWriteLock(join(dataDir, DB_FILE), 10_000)

    let settled = false
    const order = rpc
      .createOrder(resellerId, { productId: 2, domain: 'busy-bridge.example.test' }, 'credit')
      .then(
        () => ({ ok: true, error: '', lockHeld: lock.held() }),
        (err: Error) => ({ ok: false, error: err.message, lockHeld: lock.held() })
      )
      .finally(() => (settled = true))
    await sleep(300)
    const reads = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const calls = [
          () => rpc.listOrders(resellerId, {}, { limit: 10, offset: 0 }),
          () => rpc.listResellers(),
          () => rpc.dashboard(resellerId),
          () => rpc.listProducts(resellerId, {})
        ]
        await calls[i % calls.length]()
        return { beforeOrder: !settled, lockHeld: lock.held() }
      })
    )
    expect(reads.filter((x) => !x.beforeOrder || !x.lockHeld)).toEqual([])

    const refused = await order
    expect(refused).toEqual({
      ok: false,
      error: 'could not save the change: another process holds the store locked; nothing was changed, try again in 5 s',
      lockHeld: true
    })
    await lock.released
    expect((await rpc.listOrders(resellerId, {}, { limit: 10, offset: 0 })).total).toBe(before.total)
    const placed = await rpc.createOrder(resellerId, { productId: 2, domain: 'busy-bridge.example.test' }, 'credit')
    expect(placed.order.domain).toBe('busy-bridge.example.test')
  }, 60_000)
})

/** One HTTPS request to the ACME server, trusting its root. */
function acmeCall(
  method: string,
  url: string,
  body?: string
): Promise<{ status: number; retryAfter?: string; type?: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: new Agent({ ca: acmeServer.rootPem }),
        headers: body === undefined ? {} : { 'content-type': 'application/jose+json' }
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            type: res.headers['content-type'],
            body: JSON.parse(text || '{}') as Record<string, unknown>
          })
        )
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

describe('an ACME request while another process holds the lock', () => {
  it('waits without holding up the directory and nonces, then answers a 503 problem with Retry-After', async () => {
    const directory = acmeServer.directoryUrl
    const links = (await acmeCall('GET', directory)).body as Record<string, string>
    // A subscription and its account, made before the lock: a new ACME order writes.
    const key = (await browserMode.service.resellers.createApiKey(resellerId)).key
    const headers = { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json' }
    const sale = (await (
      await fetch(`${browserMode.url}/orders`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ product_id: 12, domain: 'busy-acme.example.test' })
      })
    ).json()) as { order_id: number }
    const details = (await (await fetch(`${browserMode.url}/orders/${sale.order_id}/acme`, { headers })).json()) as {
      acme: { account: { eab_kid: string; eab_hmac_key: string } }
    }
    const eab = details.acme.account
    const account = await rawAccount(
      directory,
      acmeServer.rootPem,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      {
        kid: eab.eab_kid,
        hmacKey: eab.eab_hmac_key
      }
    )
    const newOrder = { identifiers: [{ type: 'dns', value: 'busy-acme.example.test' }] }

    const lock = await holdWriteLock(join(dataDir, DB_FILE), 10_000)
    let settled = false
    const ordered = account.post(links.newOrder, newOrder).finally(() => (settled = true))
    await sleep(300)
    const reads = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const a = await acmeCall(i % 2 ? 'HEAD' : 'GET', i % 2 ? links.newNonce : directory)
        return { status: a.status, beforeOrder: !settled, lockHeld: lock.held() }
      })
    )
    expect(reads.filter((x) => x.status >= 300 || !x.beforeOrder || !x.lockHeld)).toEqual([])
    const refused = await ordered
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(refused.body).toMatchObject({
      type: 'urn:ietf:params:acme:error:serverInternal',
      detail: 'could not save the change: another process holds the store locked; nothing was changed, try again in 5 s'
    })
    expect(lock.held()).toBe(true)
    await lock.released
    // With the lock gone the same request goes through.
    expect((await account.post(links.newOrder, newOrder)).status).toBe(201)
  }, 60_000)
})
