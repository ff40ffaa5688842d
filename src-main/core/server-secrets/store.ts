/**
 * The SecretStore of a server (`--secrets file:…` or `systemd`). It keeps three kinds of secret
 * apart, so that every node of a team answers alike while its keys come from one file:
 *
 * - **Root keys** (ROOT_KEYS: the wrapping keys of the local CA and of kept private keys, the
 *   backup key, and the two keys below) live in the key source itself, never in the store. They
 *   are made once (`certdesk admin secrets init`), or by CertDesk when a writable file lacks one.
 * - **EAB HMAC keys** of ACME subscriptions are derived from the root key `server:eab-key` and the
 *   subscription's random key id (HMAC-SHA256, RFC 2104, as a PRF): any node computes the same key
 *   without anything written anywhere, and no EAB key is ever in the store, even encrypted. A key
 *   imported from a desktop keychain (`secrets import`) is kept sealed, below, and wins.
 * - **Per-record secrets** CertDesk keeps for its records (a webhook's signing secret, an alert
 *   channel's password, the copy of an API key the desktop may show again, an auto-install link's
 *   token, an admin's TOTP key) are sealed with AES-256-GCM under the root key `server:sealing-key` and kept in the
 *   store's `sealed_secrets` table, with the entry's name bound into the tag: the store alone
 *   opens none of them, and every node reads the same ones.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import { ServiceError } from '../errors'
import type { SecretStore } from '../secrets'
import type { KeySource } from './source'
import type { Store } from '../store'

/** Names whose values live in the key source (made once, read by every node). */
export const ROOT_KEYS = {
  caWrapping: 'local-ca-wrapping-key',
  vaultWrapping: 'key-vault:wrapping-key',
  backup: 'backup:hmac-key',
  sealing: 'server:sealing-key',
  eab: 'server:eab-key'
} as const

const ROOT_NAMES: ReadonlySet<string> = new Set(Object.values(ROOT_KEYS))
export const isRootKey = (name: string): boolean => ROOT_NAMES.has(name)

const EAB_PREFIX = 'acme-eab/'

/** A new random root key: 256 bits, base64 (AES-256 and HMAC-SHA256 keys alike). */
export const newRootKey = (): string => randomBytes(32).toString('base64')

/** AES-256-GCM with a fresh 96-bit nonce per entry (NIST SP 800-38D §8.2.2), the name as additional data. */
const aad = (name: string): Buffer => Buffer.from(`certdesk sealed secret v1\0${name}`)

/** A short, non-secret name of a key, so a mismatch names the key an entry was sealed with. */
const keyId = (key: Buffer): string =>
  createHmac('sha256', key).update('certdesk key id').digest().subarray(0, 8).toString('hex')

/**
 * The EAB HMAC key of `kid`: HMAC-SHA256 under the EAB root key, base64url, as random keys are
 * made. A value starting with '-' is read as an option by command-line parsers (certbot's
 * argparse), so the counter moves on until one does not, as pasteableToken does with random ones.
 */
export function deriveEabKey(root: Buffer, kid: string): string {
  for (let i = 0; ; i++) {
    const v = createHmac('sha256', root).update(`certdesk acme-eab v1\0${kid}\0${i}`).digest('base64url')
    if (!v.startsWith('-')) return v
  }
}

interface SealedRow {
  name: string
  key_id: string
  nonce: Buffer
  sealed: Buffer
}

export class ServerSecretStore implements SecretStore {
  constructor(
    private readonly source: KeySource,
    private readonly db: Store
  ) {}

  async get(name: string): Promise<string | null> {
    if (isRootKey(name)) return this.source.read().get(name) ?? null
    const sealed = await this.openSealed(name)
    if (sealed !== null || !name.startsWith(EAB_PREFIX)) return sealed
    return deriveEabKey(await this.root(ROOT_KEYS.eab, true), name.slice(EAB_PREFIX.length))
  }

  async set(name: string, value: string): Promise<void> {
    if (isRootKey(name)) {
      // The same value again (an import of this server's own export) changes nothing, also where nothing can be written.
      if (this.source.read().get(name) === value) return
      this.source.write(new Map([[name, value]]))
      return
    }
    if (name.startsWith(EAB_PREFIX) && (await this.derived(name)) === value) return
    const key = await this.root(ROOT_KEYS.sealing, true)
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, nonce)
    cipher.setAAD(aad(name))
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()])
    await this.db.run(
      `INSERT INTO sealed_secrets (name, key_id, nonce, sealed) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce, sealed = excluded.sealed`,
      name,
      keyId(key),
      nonce,
      sealed
    )
  }

  async delete(name: string): Promise<void> {
    if (isRootKey(name)) {
      if (this.source.read().has(name)) this.source.write(new Map([[name, null]]))
      return
    }
    // A derived EAB key has nothing to delete: without its subscription row it grants nothing.
    await this.db.run('DELETE FROM sealed_secrets WHERE name = ?', name)
  }

  /** The EAB key this store derives for an `acme-eab/<kid>` name, else null (the caller makes one). */
  async derived(name: string): Promise<string | null> {
    if (!name.startsWith(EAB_PREFIX)) return null
    return deriveEabKey(await this.root(ROOT_KEYS.eab, true), name.slice(EAB_PREFIX.length))
  }

  /**
   * Every secret, for `secrets export`: the root keys, the sealed entries, and the EAB key of
   * every subscription (derived ones too), so the export opens the book on a desktop keychain.
   */
  async list(): Promise<{ name: string; value: string }[]> {
    const out = new Map<string, string>()
    for (const [name, value] of this.source.read()) if (isRootKey(name)) out.set(name, value)
    const kids = (await this.db.column('SELECT eab_kid FROM acme_subscriptions ORDER BY id')) as string[]
    for (const kid of kids) {
      const v = await this.get(`${EAB_PREFIX}${kid}`)
      if (v !== null) out.set(`${EAB_PREFIX}${kid}`, v)
    }
    const names = (await this.db.column('SELECT name FROM sealed_secrets ORDER BY name')) as string[]
    for (const name of names) {
      const v = await this.openSealed(name)
      if (v !== null) out.set(name, v)
    }
    return [...out].map(([name, value]) => ({ name, value }))
  }

  unavailableReason(): string | null {
    try {
      this.source.read()
      return null
    } catch (err) {
      return (err as Error).message
    }
  }

  /**
   * A root key; made in the source when `create` and it is missing (a writable file makes it, a
   * systemd credential refuses with how to provision it).
   */
  private async root(name: string, create: boolean): Promise<Buffer> {
    const existing = this.source.read().get(name)
    if (existing) return Buffer.from(existing, 'base64')
    if (!create) throw new ServiceError('unavailable', `could not read ${name} from ${this.source.describe}`)
    // Read-or-make under the store's write lock, as the keychain's keys are: a CLI command and
    // `serve` making the same key at one moment end up with one key, not two.
    const kept = await this.db.tx(async (): Promise<string> => {
      const now = this.source.read().get(name)
      if (now) return now
      const made = newRootKey()
      this.source.write(new Map([[name, made]]))
      return made
    })
    return Buffer.from(kept, 'base64')
  }

  private async openSealed(name: string): Promise<string | null> {
    const row = (await this.db.get('SELECT name, key_id, nonce, sealed FROM sealed_secrets WHERE name = ?', name)) as
      SealedRow | undefined
    if (!row) return null
    const key = await this.root(ROOT_KEYS.sealing, false)
    if (keyId(key) !== row.key_id) {
      throw new ServiceError(
        'unavailable',
        `could not open the secret ${name}: it was sealed under key ${row.key_id}, and ${this.source.describe} holds key ${keyId(key)} (another server's secrets?)`
      )
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, row.nonce)
      decipher.setAAD(aad(name))
      decipher.setAuthTag(row.sealed.subarray(row.sealed.length - 16))
      return Buffer.concat([
        decipher.update(row.sealed.subarray(0, row.sealed.length - 16)),
        decipher.final()
      ]).toString('utf8')
    } catch {
      throw new ServiceError('unavailable', `could not open the secret ${name}: its sealed entry was changed`)
    }
  }
}

/** Every root key, new: the content of `certdesk admin secrets init --out FILE`. */
export const newRootKeys = (): Map<string, string> =>
  new Map(Object.values(ROOT_KEYS).map((name) => [name, newRootKey()]))
