/**
 * Secrets (API keys, EAB HMAC keys, the key that wraps stored private keys) live in the OS
 * keychain, never in SQLite. `@napi-rs/keyring` reaches Secret Service on Linux, Keychain on
 * macOS and Credential Manager on Windows, and ships prebuilt N-API binaries (keytar was
 * archived in 2022 and compiles against libsecret at install time).
 */
import { Entry, findCredentials } from '@napi-rs/keyring'
import { ServiceError } from './errors'

export interface SecretStore {
  get(name: string): string | null
  set(name: string, value: string): void
  delete(name: string): void
  /** Every secret of this data dir, for the encrypted export (secrets-export.ts). */
  list?(): { name: string; value: string }[]
}

/**
 * What to do when the keychain does not answer. The store is read on every call (no cached
 * handle), so CertDesk works again as soon as the keychain is back, without a restart.
 */
export const KEYCHAIN_HINT =
  'start or unlock the OS keychain (on Linux: a Secret Service such as gnome-keyring in the desktop session, ' +
  'or run certdesk with --keyring-dir on a headless server) and try again'

/**
 * One keychain "service" per data dir (`CertDesk/<install id>`), so two CertDesk data dirs on
 * one machine (tests, a second business) never see each other's secrets.
 */
export class KeyringSecretStore implements SecretStore {
  constructor(private readonly service: string) {}

  get(name: string): string | null {
    return this.call('read', name, (e) => e.getPassword() ?? null)
  }

  set(name: string, value: string): void {
    this.call('store', name, (e) => e.setPassword(value))
  }

  delete(name: string): void {
    this.call('delete', name, (e) => {
      e.deletePassword()
    })
  }

  list(): { name: string; value: string }[] {
    return this.call('list', 'the secrets', () =>
      findCredentials(this.service).map((c) => ({ name: c.account, value: c.password }))
    )
  }

  private call<T>(verb: string, name: string, fn: (e: Entry) => T): T {
    try {
      return fn(new Entry(this.service, name))
    } catch (err) {
      // The keyring's own message can name the D-Bus address; it never holds the secret.
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err)
      throw new ServiceError('unavailable', `could not ${verb} secret in the OS keychain: ${reason}; ${KEYCHAIN_HINT}`)
    }
  }
}
