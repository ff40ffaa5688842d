/**
 * Every bridge call's arguments are checked against the contract's schemas before the core sees
 * them, alike over the browser-mode RPC and over the IPC handler table: a value of the wrong type
 * gets a 400 in the envelope, naming the method and the argument, and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bridgeGate } from '../../src-main/app/bridge-gate'
import { createHandlers } from '../../src-main/app/handlers'
import { serveOverIpc } from '../../src-main/app/ipc'
import type { Service } from '../../src-main/core/service'
import { API_VERSION, type Listening } from '../../src-main/http/server'
import { CHANNEL_PREFIX, RPC_PREFIX } from '../../src-preload/channels'
import { startBrowserMode, type BrowserMode } from '../support/browser-mode'

let browserMode: BrowserMode
let service: Service
let listening: Listening
let cookie: string
let resellerId: number
let orderId: number
const channels = new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>()

beforeAll(async () => {
  browserMode = await startBrowserMode('certdesk-bridge-args-')
  ;({ service, listening, cookie, resellerId } = browserMode)
  const url = listening.url
  orderId = service.orders.create(service.resellers.get(resellerId), { productId: 2, domain: 'args.example.test' })
    .order.id
  serveOverIpc(
    {
      handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => Promise<unknown>) =>
        channels.set(channel, fn)
    } as never,
    bridgeGate(
      service,
      createHandlers(service, { transport: 'electron', listenerUrl: () => url, apiVersion: API_VERSION })
    ),
    () => true,
    () => undefined
  )
})

afterAll(async () => {
  await browserMode?.close()
})

async function overRpc(method: string, args: unknown[]): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${listening.url}${RPC_PREFIX}${method}`, {
    method: 'POST',
    headers: { cookie, origin: listening.url, 'content-type': 'application/json' },
    body: JSON.stringify({ args })
  })
  return { status: res.status, body: await res.json() }
}

const overIpc = (method: string, args: unknown[]): Promise<unknown> =>
  channels.get(CHANNEL_PREFIX + method)!({ senderFrame: { url: 'file:///app/index.html' } }, ...args)

/** The same refusal on both transports: 400 over RPC, the same envelope over IPC. */
async function refusedAlike(method: string, args: unknown[], error: RegExp): Promise<void> {
  const rpc = await overRpc(method, args)
  expect(rpc.status, method).toBe(400)
  expect(rpc.body).toEqual({ success: false, error: expect.stringMatching(error) })
  expect(await overIpc(method, args)).toEqual(rpc.body)
}

describe('arguments of the wrong type', () => {
  it('a product filter with a type that is not a product type', async () => {
    await refusedAlike(
      'listProducts',
      [resellerId, { type: 7 }],
      /^could not call listProducts: filter\.type must be ssl, wildcard, multi-domain or code-signing$/
    )
    // A right one still answers.
    expect(await overRpc('listProducts', [resellerId, { type: 'ssl' }])).toMatchObject({ status: 200 })
  })

  it('a validation method that is not one, and the order stays as it was', async () => {
    const before = service.orders.get(resellerId, orderId)
    await refusedAlike(
      'changeDcv',
      [resellerId, orderId, 'ftp'],
      /^could not call changeDcv: method must be email, http, https or dns$/
    )
    expect(service.orders.get(resellerId, orderId)).toEqual(before)
  })

  it('ids, amounts, order fields and deploy targets', async () => {
    const balance = service.ledger.balance(resellerId)
    await refusedAlike(
      'getOrder',
      ['1 OR 1', orderId],
      /could not call getOrder: reseller id must be a positive whole number/
    )
    await refusedAlike('getOrder', [resellerId], /could not call getOrder: order id must be a positive whole number/)
    await refusedAlike(
      'quoteOrder',
      [resellerId, { domain: 'x.example.test' }],
      /product id must be a positive whole number/
    )
    await refusedAlike(
      'topUp',
      [resellerId, 10.5, 'half a cent'],
      /could not call topUp: amount must be a whole number of cents/
    )
    await refusedAlike('createOrder', [resellerId, { productId: 2 }, 'cash'], /payment must be credit or invoice/)
    await refusedAlike(
      'addDeployTarget',
      [resellerId, orderId, { kind: 'ftp', url: 'ftp://x.test/' }],
      /could not call addDeployTarget: target must be a folder, command or webhook target/
    )
    await refusedAlike('listOrders', [resellerId, {}, { limit: 0 }], /page\.limit must be 1 or more/)
    await refusedAlike('settings', [1], /could not call settings: it takes at most 0 arguments, not 1/)
    expect(service.ledger.balance(resellerId)).toBe(balance)
    expect(service.deploys.targets(orderId)).toEqual([])
  })
})
