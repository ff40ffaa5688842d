export interface KeyringSession {
  env: { DBUS_SESSION_BUS_ADDRESS: string; XDG_RUNTIME_DIR: string; XDG_DATA_HOME: string }
  stop(): void
}
export interface KeyringOptions {
  keyringDir?: string
  passwordFile?: string
}
export class KeyringError extends Error {}
export function startKeyringSession(opts?: { home?: string; password?: string }): Promise<KeyringSession>
export function dataDirFromArgs(args: string[], env?: NodeJS.ProcessEnv): string
export function keyringOptionsFromArgs(args: string[]): KeyringOptions
export function keyringLocation(
  dataDir: string,
  env?: NodeJS.ProcessEnv,
  options?: KeyringOptions
): { dataDir: string; dir: string; passwordFile: string | null; generatedPasswordFile: string }
export function ensureKeyring(dataDir: string, env?: NodeJS.ProcessEnv, options?: KeyringOptions): Promise<boolean>
