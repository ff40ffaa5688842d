/**
 * Secrets (API keys, EAB HMAC keys, the key that wraps stored private keys) live in the OS
 * keychain, never in SQLite. `@napi-rs/keyring` reaches Secret Service on Linux, Keychain on
 * macOS and Credential Manager on Windows, and ships prebuilt N-API binaries (keytar was
 * archived in 2022 and compiles against libsecret at install time).
 */
import { Entry, findCredentials, type EntryOptions } from '@napi-rs/keyring'
import { ServiceError } from './errors'

/**
 * Every entry is pinned to the Secret Service on Linux. Left to choose, @napi-rs/keyring tries
 * the Secret Service and, when none answers, silently falls back to the kernel's keyutils
 * keyring, which "is completely in-memory and will not persist across reboots"
 * (linux-keyutils-keyring-store): a secret stored while the keyring daemon is down would vanish
 * with the next reboot, and one read then finds nothing and may make a second key. Pinned, a
 * missing Secret Service is an error the caller turns into 503, and nothing is stored. The
 * option is ignored on macOS and Windows, whose stores are durable.
 */
const DURABLE_STORE: EntryOptions = { linux: { store: 'secret-service' } }

/** An entry name no secret uses: reading it tells whether the keychain answers, and stores nothing. */
const PROBE_NAME = 'keychain-probe'

export interface SecretStore {
  get(name: string): Promise<string | null>
  set(name: string, value: string): Promise<void>
  delete(name: string): Promise<void>
  /** Every secret of this data dir, for the encrypted export (secrets-export.ts). */
  list?(): Promise<{ name: string; value: string }[]>
  /**
   * Why new secrets cannot be kept durably right now (no Secret Service, a locked keychain), or
   * null when they can. Reads only; for the one line `serve` and the app say at start.
   */
  unavailableReason?(): string | null
  /**
   * The value this store derives for `name` instead of keeping one (a server's EAB keys,
   * server-secrets/store.ts), or null when it keeps whatever it is given.
   */
  derived?(name: string): Promise<string | null>
}

/**
 * Keeps a new secret under `name` and answers its value: the store's own when it derives names
 * of this kind (nothing is written then), else `make()`'s, stored.
 */
export async function keepNewSecret(store: SecretStore, name: string, make: () => string): Promise<string> {
  const derived = (await store.derived?.(name)) ?? null
  if (derived !== null) return derived
  const value = make()
  await store.set(name, value)
  return value
}

/**
 * What to do when the keychain does not answer. The store is read on every call (no cached
 * handle), so CertDesk works again as soon as the keychain is back, without a restart.
 */
export const KEYCHAIN_HINT =
  'start or unlock the OS keychain (on Linux: a Secret Service such as gnome-keyring in the desktop session, ' +
  'or run certdesk with --keyring-dir on a headless server) and try again'

/** The keychain service of the data dir with `installId` (see KeyringSecretStore). */
export const keychainServiceName = (installId: string): string => `CertDesk/${installId}`

/** The OS keychain's entries of the data dir with `installId`. */
export const keychainFor = (installId: string): SecretStore => new KeyringSecretStore(keychainServiceName(installId))

/**
 * One keychain "service" per data dir (`CertDesk/<install id>`), so two CertDesk data dirs on
 * one machine (tests, a second business) never see each other's secrets.
 */
export class KeyringSecretStore implements SecretStore {
  constructor(private readonly service: string) {}

  // The keyring's calls answer at once (a D-Bus round trip on Linux); the interface is a
  // promise for the stores that are not a local daemon (server-secrets/store.ts).
  async get(name: string): Promise<string | null> {
    return this.call('read', name, (e) => e.getPassword() ?? null)
  }

  async set(name: string, value: string): Promise<void> {
    this.call('store', name, (e) => e.setPassword(value))
  }

  async delete(name: string): Promise<void> {
    this.call('delete', name, (e) => {
      e.deletePassword()
    })
  }

  async list(): Promise<{ name: string; value: string }[]> {
    // findCredentials takes no store option: a pinned entry first, so a listing never comes
    // from anywhere but the Secret Service.
    return this.call('list', PROBE_NAME, () =>
      findCredentials(this.service).map((c) => ({ name: c.account, value: c.password }))
    )
  }

  unavailableReason(): string | null {
    try {
      new Entry(this.service, PROBE_NAME, DURABLE_STORE).getPassword()
      return null
    } catch (err) {
      return reasonOf(err)
    }
  }

  private call<T>(verb: string, name: string, fn: (e: Entry) => T): T {
    try {
      return fn(new Entry(this.service, name, DURABLE_STORE))
    } catch (err) {
      throw new ServiceError(
        'unavailable',
        `could not ${verb} secret in the OS keychain: ${reasonOf(err)}; ${KEYCHAIN_HINT}`
      )
    }
  }
}

/** The keyring's own message, first line: it can name the D-Bus address, never a secret. */
const reasonOf = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0] : String(err))
