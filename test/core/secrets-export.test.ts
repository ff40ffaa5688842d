/**
 * The secrets export format under attack: a wrong passphrase, a changed byte anywhere (salt,
 * KDF parameters, ciphertext), a file asking for absurd scrypt work, a file of another data dir,
 * and a short passphrase are all refused, and nothing reaches the keychain.
 */
import { describe, expect, it } from 'vitest'
import { exportSecrets, importSecrets, type SecretsFile } from '../../src-main/core/backup/secrets-export'
import type { SecretStore } from '../../src-main/core/secrets'

class MemoryStore implements SecretStore {
  readonly items = new Map<string, string>()
  get = async (n: string) => this.items.get(n) ?? null
  set = async (n: string, v: string) => void this.items.set(n, v)
  delete = async (n: string) => void this.items.delete(n)
  list = async () => [...this.items].map(([name, value]) => ({ name, value }))
}

const PASS = 'correct horse battery staple'
const source = new MemoryStore()
await source.set('apikey:1', 'cdk_secretvalue_1')
await source.set('key-vault-wrapping-key', 'c2VjcmV0IHdyYXBwaW5nIGtleQ==')
const { file } = await exportSecrets(source, PASS, 'install-A')
const text = JSON.stringify(file)

const refused = async (f: string, pass = PASS, install = 'install-A') => {
  const target = new MemoryStore()
  await expect(importSecrets(target, f, pass, install)).rejects.toThrow(/^could not import the secrets file: /)
  expect(target.items.size).toBe(0)
}
const changed = (patch: Partial<SecretsFile>) => JSON.stringify({ ...file, ...patch })
const flip = (b64: string) => {
  const b = Buffer.from(b64, 'base64')
  b[0] ^= 1
  return b.toString('base64')
}

describe('secrets export', () => {
  it('round-trips every secret and shows none of them in the file', async () => {
    const target = new MemoryStore()
    expect(await importSecrets(target, text, PASS, 'install-A')).toEqual({ count: 2 })
    expect(await target.list()).toEqual(await source.list())
    for (const { value } of await source.list()) expect(text).not.toContain(value)
    expect(file).toMatchObject({ format: 'certdesk-secrets', version: 1, kdf: 'scrypt', cipher: 'aes-256-gcm' })
  })

  it('refuses a wrong passphrase and any changed byte', async () => {
    await refused(text, 'correct horse battery stapler')
    await refused(changed({ data: flip(file.data) }))
    await refused(changed({ salt: flip(file.salt) }))
    await refused(changed({ iv: flip(file.iv) }))
    await refused(changed({ tag: flip(file.tag) }))
    // A weaker KDF setting is authenticated too, so it cannot be swapped in.
    await refused(changed({ N: file.N / 2 }))
  })

  it('refuses absurd scrypt work, other formats, garbage, and another data dir', async () => {
    await refused(changed({ N: 2 ** 30 }))
    await refused(changed({ r: 10_000 }))
    await refused(changed({ N: 3 }))
    await refused(changed({ cipher: 'aes-128-cbc' as 'aes-256-gcm' }))
    await refused(changed({ version: 2 }))
    await refused('not json')
    await refused('null')
    await refused(text, PASS, 'install-B')
  })

  it('refuses a passphrase shorter than 12 characters', async () => {
    await expect(exportSecrets(source, 'short', 'install-A')).rejects.toThrow(/at least 12 characters/)
  })
})
