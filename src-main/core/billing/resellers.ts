/**
 * Resellers and their API keys. A key is random, shown once, kept as SHA-256 in SQLite and in
 * plain only in the OS keychain (so the desktop user can copy it again); lookups go by hash.
 */
import { createHash, hash as cryptoHash, randomBytes } from 'node:crypto'
import type { CoreContext } from '../context'
import { conflict, invalid, notFound, unauthorized } from '../errors'
import { isoTimestamp } from '../time'
import type { ApiKeyInfo, NewReseller, Reseller } from '../../../src-shared/records'

export type { ApiKeyInfo, NewReseller, Reseller } from '../../../src-shared/records'

/**
 * The group a new reseller joins when none is given: group 1, "Standard", from the default
 * catalogue (resources/), so a new account can see prices and order at once; a reseller without
 * a group gets 403 on the catalogue and on ordering (reseller API v3.0 "Errors").
 */
export const DEFAULT_GROUP_ID = 1

/** The group of a new reseller: the one asked for, none when `null` was asked for, else the default. */
export const groupForNewReseller = (groupId: number | null | undefined): number | null =>
  groupId === undefined ? DEFAULT_GROUP_ID : groupId

interface ResellerRow {
  id: number
  name: string
  email: string
  company: string
  group_id: number | null
  discount_rate: number
  status: 'active' | 'suspended'
  api_access: number
  credit_balance_cents: number
  created_at: string
}

const toReseller = (r: ResellerRow): Reseller => ({
  id: r.id,
  name: r.name,
  email: r.email,
  company: r.company,
  groupId: r.group_id,
  discountRate: r.discount_rate,
  status: r.status,
  apiAccess: r.api_access === 1,
  creditBalance: r.credit_balance_cents,
  createdAt: r.created_at
})

const KEY_PREFIX = 'cdk_'
// One-shot `crypto.hash` (Node 20.12+) where there is one: no Hash object per request.
const sha256Hex: (text: string) => string =
  typeof cryptoHash === 'function'
    ? (text) => cryptoHash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text, 'utf8').digest('hex')
export const hashApiKey = (key: string): string => sha256Hex(key)
const keychainName = (keyId: number): string => `api-key:${keyId}`
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export class Resellers {
  constructor(private readonly ctx: CoreContext) {}

  async create(input: NewReseller): Promise<Reseller> {
    const { name, email, rate } = this.checked(input)
    const groupId = groupForNewReseller(input.groupId)
    if (groupId !== null) await this.requireGroup(groupId)
    const info = await this.ctx.store.insert(
      `INSERT INTO resellers (name, email, company, group_id, discount_rate, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      name,
      email,
      input.company?.trim() ?? '',
      groupId,
      rate,
      isoTimestamp(this.ctx.clock())
    )
    return await this.get(info)
  }

  /**
   * Changes a reseller's name, email, company, group and discount, all or none: a refused value
   * changes nothing. A new discount or group applies to orders placed from then on; orders
   * already placed keep the price they were charged.
   */
  async update(id: number, input: NewReseller): Promise<Reseller> {
    const { name, email, rate } = this.checked(input)
    return await this.ctx.store.tx(async () => {
      const before = await this.get(id)
      const groupId = input.groupId === undefined ? before.groupId : input.groupId
      if (groupId !== null) await this.requireGroup(groupId)
      await this.ctx.store.run(
        'UPDATE resellers SET name = ?, email = ?, company = ?, group_id = ?, discount_rate = ? WHERE id = ?',
        name,
        email,
        input.company?.trim() ?? before.company,
        groupId,
        rate,
        id
      )
      return await this.get(id)
    })
  }

  private checked(input: NewReseller): { name: string; email: string; rate: number } {
    const name = input.name.trim()
    const email = input.email.trim()
    if (!name) throw invalid('name must not be empty')
    if (name.length > 200) throw invalid('name must be at most 200 characters')
    if (!EMAIL_RE.test(email) || email.length > 320)
      throw invalid(`email ${JSON.stringify(email.slice(0, 80))} is not an email address`)
    const rate = input.discountRate ?? 0
    if (!Number.isFinite(rate) || rate < 0 || rate > 100) throw invalid('discount must be a percentage from 0 to 100')
    return { name, email, rate }
  }

  async get(id: number): Promise<Reseller> {
    const row = (await this.ctx.store.get('SELECT * FROM resellers WHERE id = ?', id)) as ResellerRow | undefined
    if (!row) throw notFound(`reseller ${id} not found`)
    return toReseller(row)
  }

  async list(): Promise<Reseller[]> {
    return ((await this.ctx.store.all('SELECT * FROM resellers ORDER BY id')) as ResellerRow[]).map(toReseller)
  }

  async setApiAccess(id: number, enabled: boolean): Promise<Reseller> {
    await this.get(id)
    await this.ctx.store.run('UPDATE resellers SET api_access = ? WHERE id = ?', enabled ? 1 : 0, id)
    return await this.get(id)
  }

  async setGroup(id: number, groupId: number | null): Promise<Reseller> {
    await this.get(id)
    if (groupId !== null) await this.requireGroup(groupId)
    await this.ctx.store.run('UPDATE resellers SET group_id = ? WHERE id = ?', groupId, id)
    return await this.get(id)
  }

  async setStatus(id: number, status: 'active' | 'suspended'): Promise<Reseller> {
    await this.get(id)
    await this.ctx.store.run('UPDATE resellers SET status = ? WHERE id = ?', status, id)
    return await this.get(id)
  }

  /** Creates a key and returns it in plain this once; the keychain keeps the only other copy. */
  async createApiKey(resellerId: number, label = ''): Promise<{ key: string; info: ApiKeyInfo }> {
    await this.get(resellerId)
    const key = KEY_PREFIX + randomBytes(32).toString('base64url')
    const db = this.ctx.store
    const id = await db.insert(
      'INSERT INTO api_keys (reseller_id, key_hash, prefix, label, created_at) VALUES (?, ?, ?, ?, ?)',
      resellerId,
      hashApiKey(key),
      key.slice(0, KEY_PREFIX.length + 6),
      label,
      isoTimestamp(this.ctx.clock())
    )
    // After the row is committed (a transaction may run twice, a keychain write must not). If
    // the keychain refuses, the row goes again: no key is left without its secret, and nobody
    // has seen the key yet.
    try {
      await this.ctx.secrets.set(keychainName(id), key)
    } catch (err) {
      await db.run('DELETE FROM api_keys WHERE id = ?', id)
      throw err
    }
    return { key, info: await this.apiKey(id) }
  }

  async apiKey(id: number): Promise<ApiKeyInfo> {
    const row = (await this.ctx.store.get(
      `SELECT id, reseller_id AS resellerId, prefix, label, created_at AS createdAt, revoked_at AS revokedAt,
                last_used_at AS lastUsedAt FROM api_keys WHERE id = ?`,
      id
    )) as ApiKeyInfo | undefined
    if (!row) throw notFound(`API key ${id} not found`)
    return row
  }

  async apiKeys(resellerId: number): Promise<ApiKeyInfo[]> {
    return (await this.ctx.store.all(
      `SELECT id, reseller_id AS resellerId, prefix, label, created_at AS createdAt, revoked_at AS revokedAt,
                last_used_at AS lastUsedAt FROM api_keys WHERE reseller_id = ? ORDER BY id DESC`,
      resellerId
    )) as ApiKeyInfo[]
  }

  /** The plain key again, from the keychain, for the desktop user's "copy" button. */
  async revealApiKey(id: number): Promise<string> {
    const info = await this.apiKey(id)
    if (info.revokedAt) throw conflict(`API key ${id} is revoked`)
    const key = await this.ctx.secrets.get(keychainName(id))
    if (!key) throw notFound(`API key ${id} is not in the OS keychain any more`)
    return key
  }

  async revokeApiKey(id: number): Promise<ApiKeyInfo> {
    const info = await this.apiKey(id)
    if (!info.revokedAt) {
      await this.ctx.store.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', isoTimestamp(this.ctx.clock()), id)
      await this.ctx.secrets.delete(keychainName(id))
    }
    return await this.apiKey(id)
  }

  /**
   * The reseller a presented key belongs to. Spec, Authentication 4: an unknown or revoked key,
   * or API access disabled, is 401; a suspended account likewise.
   */
  async authenticate(presentedKey: string): Promise<Reseller> {
    const row = (await this.ctx.store.get(
      `SELECT r.*, k.id AS key_id FROM api_keys k JOIN resellers r ON r.id = k.reseller_id
         WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
      hashApiKey(presentedKey)
    )) as (ResellerRow & { key_id: number }) | undefined
    if (!row) throw unauthorized('invalid API key')
    if (row.api_access !== 1) throw unauthorized('API access is disabled for this reseller account')
    if (row.status !== 'active') throw unauthorized('this reseller account is suspended')
    return toReseller(row)
  }

  private async requireGroup(groupId: number): Promise<void> {
    const g = await this.ctx.store.get('SELECT 1 FROM reseller_groups WHERE id = ?', groupId)
    if (!g) throw invalid(`reseller group ${groupId} does not exist`)
  }
}
