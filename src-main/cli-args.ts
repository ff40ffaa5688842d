/**
 * What every `certdesk` command shares: the option table, reading required values, the usage
 * error (exit 2) and printing JSON on stdout.
 */
import { parseArgs } from 'node:util'
import { ServiceError } from './core/errors'
import { parseSecretSource, type SecretSourceSpec } from './core/server-secrets'

/** A command line that cannot run as given: the CLI prints the message and the usage, exit 2. */
export class UsageError extends Error {}

const OPTIONS = {
  'data-dir': { type: 'string' },
  // A PostgreSQL URL: the book lives there instead of the data dir's SQLite file.
  database: { type: 'string' },
  // Read by bin/certdesk.cjs before the CLI runs (the headless keyring); accepted here so that
  // every command takes them.
  'keyring-dir': { type: 'string' },
  'keyring-password-file': { type: 'string' },
  port: { type: 'string' },
  'acme-port': { type: 'string' },
  // serve: how often a scheduler pass runs (across every node of a team server).
  'scheduler-interval': { type: 'string' },
  host: { type: 'string' },
  'log-level': { type: 'string' },
  // The public listener (docs/team-server.md)
  'public-url': { type: 'string' },
  'public-listen': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'public-api': { type: 'boolean' },
  'public-ui': { type: 'boolean' },
  'public-rate-limit': { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  company: { type: 'string' },
  group: { type: 'string' },
  discount: { type: 'string' },
  reseller: { type: 'string' },
  amount: { type: 'string' },
  description: { type: 'string' },
  label: { type: 'string' },
  'key-id': { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  demo: { type: 'boolean' },
  ui: { type: 'boolean' },
  order: { type: 'string' },
  folder: { type: 'string' },
  layout: { type: 'string' },
  pfx: { type: 'boolean' },
  command: { type: 'string' },
  timeout: { type: 'string' },
  cwd: { type: 'string' },
  webhook: { type: 'string' },
  // deploy targets: the key file a folder's server reads, the servers checked after a reload
  'key-file': { type: 'string' },
  verify: { type: 'string' },
  target: { type: 'string' },
  type: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  'as-of': { type: 'string' },
  out: { type: 'string' },
  directory: { type: 'string' },
  'eab-kid': { type: 'string' },
  'eab-hmac-file': { type: 'string' },
  'ca-bundle': { type: 'string' },
  // Installation checks, imports and the expiry report.
  address: { type: 'string' },
  starttls: { type: 'string' },
  file: { type: 'string', multiple: true },
  endpoint: { type: 'string', multiple: true },
  'password-file': { type: 'string' },
  'with-keys': { type: 'boolean' },
  'follow-links': { type: 'boolean' },
  imported: { type: 'string' },
  days: { type: 'string' },
  // backup and restore; `from` is also an alert email's sender
  from: { type: 'string' },
  'with-passphrase': { type: 'boolean' },
  // Where secrets come from (keychain, file:PATH, systemd) on every command; for `restore`, a
  // value without one of those forms names the secrets export instead.
  secrets: { type: 'string' },
  'accept-unauthenticated': { type: 'boolean' },
  // alerts
  rule: { type: 'string' },
  hours: { type: 'string' },
  channel: { type: 'string' },
  url: { type: 'string' },
  security: { type: 'string' },
  user: { type: 'string' },
  to: { type: 'string' },
  digest: { type: 'boolean' },
  open: { type: 'boolean' },
  // admins and the audit log
  role: { type: 'string' },
  actor: { type: 'string' },
  action: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  json: { type: 'boolean' },
  accounts: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' }
} as const

export const parse = (argv: string[]) =>
  parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })

export type Values = ReturnType<typeof parse>['values']

export function need(v: Values, name: keyof Values): string {
  const value = v[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

export function int(v: Values, name: keyof Values): number {
  const s = need(v, name)
  if (!/^\d+$/.test(s)) throw new UsageError(`--${name} must be a whole number`)
  return Number(s)
}

export const optionalInt = (v: Values, name: keyof Values): number | undefined =>
  v[name] === undefined ? undefined : int(v, name)

/** A TCP port option, 0-65535 (0: a free one); undefined when absent. */
export function port(v: Values, name: 'port' | 'acme-port'): number | undefined {
  const s = v[name]
  if (s === undefined) return undefined
  const n = Number(s)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--${name} must be 0-65535`)
  return n
}

/** Where CERTDESK_DATABASE names the store when `--database` does not. */
export const DATABASE_ENV = 'CERTDESK_DATABASE'

/**
 * The PostgreSQL URL the store is in (`--database`, else CERTDESK_DATABASE), or undefined for
 * the data dir's SQLite file. Whatever is given is checked when the store opens: a value that
 * is not a PostgreSQL URL is refused there with one line (exit 64).
 */
export function databaseOf(v: Values): string | undefined {
  const given = v.database ?? process.env[DATABASE_ENV]
  return given === undefined || given === '' ? undefined : given
}

export const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** `noun verb` of an admin command, for its switch and its usage error. */
export const commandKey = (words: string[]): string => `${words[0] ?? ''} ${words[1] ?? ''}`.trim()

/**
 * A secret typed by the user (a passphrase, a password): the first line of stdin when it is
 * piped, else a prompt on stderr that does not echo. Never an argument: argv is visible to every
 * user of the machine (ps, /proc/<pid>/cmdline) and kept in shell histories.
 */
export async function readSecretLine(prompt: string, missing: string): Promise<string> {
  const stdin = process.stdin
  if (!stdin.isTTY) {
    let text = ''
    for await (const chunk of stdin) text += String(chunk)
    const line = text.split(/\r?\n/)[0] ?? ''
    if (!line) throw new UsageError(missing)
    return line
  }
  process.stderr.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  stdin.setEncoding('utf8')
  return new Promise((resolve, reject) => {
    let typed = ''
    const done = (err?: Error): void => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off('data', onData)
      process.stderr.write('\n')
      if (err) reject(err)
      else resolve(typed)
    }
    const onData = (s: string): void => {
      for (const ch of s) {
        if (ch === '\r' || ch === '\n') return done()
        if (ch === '\u0003') return done(new UsageError('cancelled'))
        if (ch === '\u007f') typed = typed.slice(0, -1)
        else typed += ch
      }
    }
    stdin.on('data', onData)
  })
}

/** Whether `--secrets`' value names a key source rather than (for `restore`) a secrets export. */
export const isSecretSourceValue = (value: string): boolean =>
  value === 'keychain' || value === 'systemd' || value.startsWith('file:')

/**
 * Where this command's secrets come from: `--secrets`, else CERTDESK_SECRETS, else the OS
 * keychain. `restore` passes `exportFile`: its `--secrets` may name the secrets export instead.
 */
export function secretSource(v: Values, env: NodeJS.ProcessEnv = process.env, exportFile = false): SecretSourceSpec {
  const given =
    v.secrets !== undefined && !(exportFile && !isSecretSourceValue(v.secrets)) ? v.secrets : env.CERTDESK_SECRETS
  if (given === undefined || given === '') return { kind: 'keychain' }
  try {
    return parseSecretSource(given)
  } catch (err) {
    if (err instanceof ServiceError) throw new UsageError(err.message)
    throw err
  }
}
