import type { Db } from './db'
import type { SecretStore } from './secrets'
import type { Clock } from './time'

/** What every core module works with: the store, the clock and the keychain. */
export interface CoreContext {
  db: Db
  clock: Clock
  secrets: SecretStore
}
