/**
 * Account public keys kept imported between requests, so that a request signed with a known
 * account key (RFC 8555 §6.2, `kid`) is checked without importing the JWK again. An entry is
 * used only while the account's stored key is the one it was made from: each request reads the
 * account from the store first, and an entry whose thumbprint (RFC 7638) differs is made anew,
 * so a key rolled over (§7.3.5) by this process or another one is never used again. The server
 * also drops the entry at the rollover itself. At most `max` accounts are kept, least recently
 * used first out.
 */
import type { KeyObject } from 'node:crypto'
import type { JWK } from 'jose'
import { publicKeyOf } from './jws'

interface Entry {
  thumbprint: string
  key: KeyObject
}

/** Accounts whose keys are kept; a few hundred bytes each. */
export const MAX_ACCOUNT_KEYS = 1000

export class AccountKeys {
  private readonly entries = new Map<number, Entry>()

  constructor(private readonly max = MAX_ACCOUNT_KEYS) {}

  /** The imported key of the account as stored now, or null when jose must import it. */
  keyOf(account: { id: number; thumbprint: string; jwk: unknown }): KeyObject | null {
    const hit = this.entries.get(account.id)
    if (hit && hit.thumbprint === account.thumbprint) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(account.id)
      this.entries.set(account.id, hit)
      return hit.key
    }
    this.entries.delete(account.id)
    const key = publicKeyOf(account.jwk as JWK)
    if (!key) return null
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as number)
    this.entries.set(account.id, { thumbprint: account.thumbprint, key })
    return key
  }

  /** Forgets the account's key (after §7.3.5 key rollover). */
  drop(accountId: number): void {
    this.entries.delete(accountId)
  }

  get size(): number {
    return this.entries.size
  }
}
