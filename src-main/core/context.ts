import type { Db } from './db'
import type { SecretStore } from './secrets'
import type { ScopeVersions } from './store-version'
import type { Clock } from './time'

/**
 * What every core module works with: the store, the clock and the keychain. The store itself
 * stays inside src-main/core; a transport reads only the clock and the store version, which
 * it may await, so another store (a database server) can stand behind the same context.
 */
export interface CoreContext {
  db: Db
  clock: Clock
  secrets: SecretStore
  /** A token that changes whenever the store does (store-version.ts). */
  storeVersion: () => Promise<string>
  /** Tokens for the parts of the store one reseller's answers are computed from (store-version.ts). */
  scopeVersions: (resellerId: number) => Promise<ScopeVersions>
  /**
   * Writes this process has made so far (store-version.ts): a counter kept in memory, no query,
   * so a caller may check it on every request. While it is unchanged, nothing this process did
   * moved a version.
   */
  localWrites: () => number
  /**
   * Resolves once this process may write without waiting on another process's lock, waiting on
   * timers meanwhile; rejects with a 503 after `budgetMs` (store-lock.ts). Transports and loops
   * await it before work that writes.
   */
  whenWritable: (budgetMs?: number) => Promise<void>
}
