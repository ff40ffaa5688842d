/**
 * The secrets export format under attack: a wrong passphrase, a changed byte anywhere (salt,
 * KDF parameters, ciphertext), a file asking for absurd scrypt work, a file of another data dir,
 * and a short passphrase are all refused, and nothing reaches the keychain.
 */
import { describe, expect, it } from 'vitest'
import { exportSecrets, importSecrets, type SecretsFile } from '../../src-main/core/secrets-export'
import type { SecretStore } from '../../src-main/core/secrets'

class MemoryStore implements SecretStore {
  readonly items = new Map<string, string>()
  get = (n: string) => this.items.get(n) ?? null
  set = (n: string, v: string) => void this.items.set(n, v)
  delete = (n: string) => void this.items.delete(n)
  list = () => [...this.items].map(([name, value]) => ({ name, value }))
}

const PASS = 'correct horse battery staple'
const source = new MemoryStore()
source.set('apikey:1', 'cdk_secretvalue_1')
source.set('key-vault-wrapping-key', 'c2VjcmV0IHdyYXBwaW5nIGtleQ==')
const { file } = exportSecrets(source, PASS, 'install-A')
const text = JSON.stringify(file)

const refused = (f: string, pass = PASS, install = 'install-A') => {
  const target = new MemoryStore()
  expect(() => importSecrets(target, f, pass, install)).toThrow(/^could not import the secrets file: /)
  expect(target.items.size).toBe(0)
}
const changed = (patch: Partial<SecretsFile>) => JSON.stringify({ ...file, ...patch })
const flip = (b64: string) => {
  const b = Buffer.from(b64, 'base64')
  b[0] ^= 1
  return b.toString('base64')
}

describe('secrets export', () => {
  it('round-trips every secret and shows none of them in the file', () => {
    const target = new MemoryStore()
    expect(importSecrets(target, text, PASS, 'install-A')).toEqual({ count: 2 })
    expect(target.list()).toEqual(source.list())
    for (const { value } of source.list()) expect(text).not.toContain(value)
    expect(file).toMatchObject({ format: 'certdesk-secrets', version: 1, kdf: 'scrypt', cipher: 'aes-256-gcm' })
  })

  it('refuses a wrong passphrase and any changed byte', () => {
    refused(text, 'correct horse battery stapler')
    refused(changed({ data: flip(file.data) }))
    refused(changed({ salt: flip(file.salt) }))
    refused(changed({ iv: flip(file.iv) }))
    refused(changed({ tag: flip(file.tag) }))
    // A weaker KDF setting is authenticated too, so it cannot be swapped in.
    refused(changed({ N: file.N / 2 }))
  })

  it('refuses absurd scrypt work, other formats, garbage, and another data dir', () => {
    refused(changed({ N: 2 ** 30 }))
    refused(changed({ r: 10_000 }))
    refused(changed({ N: 3 }))
    refused(changed({ cipher: 'aes-128-cbc' as 'aes-256-gcm' }))
    refused(changed({ version: 2 }))
    refused('not json')
    refused('null')
    refused(text, PASS, 'install-B')
  })

  it('refuses a passphrase shorter than 12 characters', () => {
    expect(() => exportSecrets(source, 'short', 'install-A')).toThrow(/at least 12 characters/)
  })
})
