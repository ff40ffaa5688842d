export interface KeyringSession {
  env: { DBUS_SESSION_BUS_ADDRESS: string; XDG_RUNTIME_DIR: string; XDG_DATA_HOME: string }
  stop(): void
}
export function startKeyringSession(opts?: { home?: string; password?: string }): Promise<KeyringSession>
export function dataDirFromArgs(args: string[], env?: NodeJS.ProcessEnv): string
export function ensureKeyring(dataDir: string, env?: NodeJS.ProcessEnv): Promise<boolean>
