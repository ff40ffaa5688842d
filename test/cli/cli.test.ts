import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { certdesk, serve } from '../support/cli'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-cli-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])

describe('certdesk admin', () => {
  it('adds a reseller, credit and an API key, printing JSON', () => {
    const add = admin(
      'reseller',
      'add',
      '--name',
      'Fabrikam Hosting',
      '--email',
      'ops@fabrikam.test',
      '--company',
      'Fabrikam',
      '--group',
      '2',
      '--discount',
      '2.5'
    )
    expect(add.code).toBe(0)
    expect(add.json.reseller).toMatchObject({
      id: 1,
      name: 'Fabrikam Hosting',
      group_id: 2,
      discount_rate: 2.5,
      api_access: true,
      credit_balance: 0
    })
    const credit = admin(
      'credit',
      'add',
      '--reseller',
      '1',
      '--amount',
      '250.50',
      '--description',
      'Wire transfer 2026-11'
    )
    expect(credit.code).toBe(0)
    expect(credit.json).toMatchObject({
      success: true,
      new_balance: 250.5,
      transaction: { type: 'credit', amount: 250.5, description: 'Wire transfer 2026-11' }
    })
    const key = admin('apikey', 'create', '--reseller', '1')
    expect(key.code).toBe(0)
    expect(key.json.api_key).toMatch(/^cdk_[A-Za-z0-9_-]{43}$/)
    expect(admin('group', 'list').json.groups).toEqual([
      { id: 1, name: 'Standard', description: expect.any(String) },
      { id: 2, name: 'Gold', description: expect.any(String) },
      { id: 3, name: 'Starter', description: expect.any(String) }
    ])
    const products = admin('product', 'list').json.products as { fulfillment: string }[]
    expect(products.length).toBe(14)
    expect(products.filter((p) => p.fulfillment === 'acme_subscription').length).toBe(3)
  })

  it('refuses bad input with a clear message and a non-zero exit', () => {
    const noEmail = admin('reseller', 'add', '--name', 'X')
    expect(noEmail.code).toBe(2)
    expect(noEmail.stderr).toMatch(/--email is required/)
    const badAmount = admin('credit', 'add', '--reseller', '1', '--amount', '1.234')
    expect(badAmount.code).toBe(1)
    expect(badAmount.json).toEqual({ success: false, error: 'amount has more than two decimals' })
    const unknown = admin('credit', 'add', '--reseller', '99', '--amount', '5')
    expect(unknown.code).toBe(1)
    expect(unknown.json.error).toMatch(/reseller 99 not found/)
    expect(admin('frobnicate').code).toBe(2)
  })
})

describe('certdesk serve', () => {
  it('serves the API, sees admin changes made while it runs, and stops cleanly on SIGTERM and SIGINT', async () => {
    const key = admin('apikey', 'create', '--reseller', '1').json.api_key as string
    const server = await serve(dataDir)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const get = async (path: string) =>
      (await fetch(server.url + path, { headers: { 'x-api-key': key } })).json() as Promise<Record<string, unknown>>
    expect((await get('/balance')).balance).toBe(250.5)
    // An admin command on the same data dir while serve runs.
    expect(admin('credit', 'add', '--reseller', '1', '--amount', '100').code).toBe(0)
    expect((await get('/balance')).balance).toBe(350.5)
    const order = await fetch(server.url + '/orders', {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ product_id: 2, domain: 'cli.example.com' })
    })
    expect(order.status).toBe(200)
    expect(admin('reseller', 'api-access', '--reseller', '1', '--disable').code).toBe(0)
    expect((await fetch(server.url + '/balance', { headers: { 'x-api-key': key } })).status).toBe(401)
    expect(admin('reseller', 'api-access', '--reseller', '1', '--enable').code).toBe(0)
    const keyId = admin('apikey', 'list', '--reseller', '1').json.api_keys as { id: number }[]
    expect(admin('apikey', 'revoke', '--key-id', String(keyId[0].id)).code).toBe(0)
    expect((await fetch(server.url + '/balance', { headers: { 'x-api-key': key } })).status).toBe(401)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)

    const again = await serve(dataDir)
    again.child.kill('SIGINT')
    expect(await again.exited).toBe(0)
  })

  it('creates a demo reseller with credit on an empty data dir when asked', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'certdesk-demo-'))
    const server = await serve(fresh, ['--demo'])
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    const list = certdesk(['admin', '--data-dir', fresh, 'reseller', 'list'])
    expect(list.json.resellers).toEqual([
      expect.objectContaining({ id: 1, name: 'Demo Reseller', credit_balance: 1000, group_id: 1 })
    ])
    rmSync(fresh, { recursive: true, force: true })
  })
})
