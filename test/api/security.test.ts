import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'

let s: TestServer

beforeAll(async () => {
  s = await startServer()
})
afterAll(() => s.close())

describe('API keys', () => {
  it('never stores a key in SQLite, keeps it in the keychain, and finds it by hash', async () => {
    const keys = [s.reseller({ credit: 100 }), s.reseller({ credit: 100 })].map((r) => r.key)
    for (const key of keys) {
      expect(
        (await s.request('POST', '/orders', { key, body: { product_id: 2, domain: 'secret.example.com' } })).status
      ).toBe(200)
    }
    s.service.ctx.db.pragma('wal_checkpoint(TRUNCATE)')
    for (const file of readdirSync(s.dataDir)) {
      const bytes = readFileSync(join(s.dataDir, file))
      for (const key of keys) {
        expect(bytes.includes(Buffer.from(key)), `${key} in ${file}`).toBe(false)
        // nor the random part alone
        expect(bytes.includes(Buffer.from(key.slice(10))), `${key} in ${file}`).toBe(false)
      }
    }
    // The keychain holds the plain key for the desktop user's "copy" button.
    const r = s.service.resellers.list().at(-1)!
    const info = s.service.resellers.apiKeys(r.id)[0]
    expect(s.service.resellers.revealApiKey(info.id)).toBe(keys[1])
    s.service.resellers.revokeApiKey(info.id)
    expect(() => s.service.resellers.revealApiKey(info.id)).toThrow(/revoked/)
  })

  it('never echoes a presented key in an error', async () => {
    const bogus = 'cdk_this-is-not-a-real-key-0123456789'
    const res = await s.request('GET', '/account', { key: bogus })
    expect(res.status).toBe(401)
    expect(JSON.stringify(res.body)).not.toContain(bogus)
  })
})
