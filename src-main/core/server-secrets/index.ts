import { keychainFor, type SecretStore } from '../secrets'
import type { Store } from '../store'
import { FileKeySource, SystemdKeySource, type KeySource, type SecretSourceSpec } from './source'
import { isRootKey, ServerSecretStore } from './store'
import { ServiceError } from '../errors'

export { parseSecretSource, SYSTEMD_CREDENTIAL, formatKeys, type SecretSourceSpec, type KeySource } from './source'
export { newRootKeys, ROOT_KEYS, ServerSecretStore } from './store'

/** The key source a spec names; null for the desktop keychain. */
export function keySourceOf(
  spec: SecretSourceSpec,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env
): KeySource | null {
  if (spec.kind === 'file') return new FileKeySource(spec.path, dataDir)
  if (spec.kind === 'systemd') return new SystemdKeySource(env.CREDENTIALS_DIRECTORY)
  return null
}

/** The SecretStore of a data dir: the OS keychain by default, a server key source when named. */
export function secretStoreFor(spec: SecretSourceSpec, db: Store, dataDir: string, installId: string): SecretStore {
  const source = keySourceOf(spec, dataDir)
  return source ? new ServerSecretStore(source, db) : keychainFor(installId)
}

/**
 * The root keys of a source alone, for reading a backup's key before a store exists (restore):
 * it answers the root keys and refuses everything else.
 */
export function rootKeyStore(source: KeySource): SecretStore {
  const refuse = (name: string): never => {
    throw new ServiceError(
      'unavailable',
      `could not reach ${name}: only the root keys of ${source.describe} are open here`
    )
  }
  return {
    get: async (name) => (isRootKey(name) ? (source.read().get(name) ?? null) : refuse(name)),
    set: async (name) => refuse(name),
    delete: async (name) => refuse(name)
  }
}
