import type { SecretStore } from './secrets'
import type { Clock } from './time'
import type { ScopeVersions, Store } from './store'

/**
 * What every core module works with: the store, the clock and the keychain. The store itself
 * stays inside src-main/core; a transport reads only the clock and the store version, which
 * it may await, so another store (a database server) can stand behind the same context.
 */
export interface CoreContext {
  /** The store port (core/store): SQLite or PostgreSQL, every call a promise. */
  store: Store
  clock: Clock
  secrets: SecretStore
  /** A token that changes whenever the store does (core/store). */
  storeVersion: () => Promise<string>
  /** Tokens for the parts of the store one reseller's answers are computed from (core/store). */
  scopeVersions: (resellerId: number) => Promise<ScopeVersions>
  /**
   * Writes this process has made so far (core/store): a counter kept in memory, no query,
   * so a caller may check it on every request. While it is unchanged, nothing this process did
   * moved a version.
   */
  localWrites: () => number
  /**
   * Whether other processes write to the store all the time (the nodes of a team server on one
   * PostgreSQL), not only now and then (the admin CLI beside a desk): then a version read before
   * the current turn of the event loop vouches for nothing in it, however recent.
   */
  sharedStore: boolean
}
