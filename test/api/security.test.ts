import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storedBytes } from '../support/engine'
import { startServer, type TestServer } from '../support/server'

let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => await s.close())

describe('API keys', () => {
  it('never stores a key in the store, keeps it in the keychain, and finds it by hash', async () => {
    const keys = [await s.reseller({ credit: 100 }), await s.reseller({ credit: 100 })].map((r) => r.key)
    for (const key of keys) {
      expect(
        (await s.request('POST', '/orders', { key, body: { product_id: 2, domain: 'secret.example.com' } })).status
      ).toBe(200)
    }
    for (const { where: file, bytes } of storedBytes(s.service)) {
      for (const key of keys) {
        expect(bytes.includes(Buffer.from(key)), `${key} in ${file}`).toBe(false)
        // nor the random part alone
        expect(bytes.includes(Buffer.from(key.slice(10))), `${key} in ${file}`).toBe(false)
      }
    }
    // The keychain holds the plain key for the desktop user's "copy" button.
    const r = (await s.service.resellers.list()).at(-1)!
    const info = (await s.service.resellers.apiKeys(r.id))[0]
    expect(await s.service.resellers.revealApiKey(info.id)).toBe(keys[1])
    await s.service.resellers.revokeApiKey(info.id)
    await expect(s.service.resellers.revealApiKey(info.id)).rejects.toThrow(/revoked/)
  })

  it('never echoes a presented key in an error', async () => {
    const bogus = 'cdk_this-is-not-a-real-key-0123456789'
    const res = await s.request('GET', '/account', { key: bogus })
    expect(res.status).toBe(401)
    expect(JSON.stringify(res.body)).not.toContain(bogus)
  })
})
