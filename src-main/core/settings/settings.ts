/**
 * Key-value settings kept in SQLite. Never a secret: those go to the keychain.
 *
 * The settings a person may change (desktop Settings, `certdesk admin settings set`) are listed
 * in SETTING_RULES with one rule each, and `update` refuses a value its rule refuses, so a typo
 * never becomes a port or an address that checks and mail then use. Adding a setting is one
 * entry there. An empty value means "the default" and is always accepted.
 */
import { isIP } from 'node:net'
import {
  ALERT_SETTINGS,
  DCV_SETTINGS,
  DELEGATED_DNS_SETTINGS,
  INSTALLATION_LIMITS,
  INSTALLATION_SETTINGS,
  INVOICE_SETTINGS,
  LOCAL_CA_SETTINGS
} from './setting-keys'
import { invalid } from '../errors'
import { PUBLIC_URL_SETTING, publicUrlProblem } from '../public-url'
import type { Store } from '../store'

/** Says what is wrong with a value, or null when it is fine. */
export type SettingRule = (value: string) => string | null

/** A TCP port: a whole number from 1 to 65535, written plainly. */
export const portRule: SettingRule = (v) =>
  /^[1-9]\d{0,4}$/.test(v) && Number(v) <= 65535 ? null : `must be a port number from 1 to 65535, not ${quote(v)}`

/**
 * A DNS server as `address:port`. Node's resolver takes IP addresses only (an IPv6 one in
 * brackets), never a name: the server that resolves names cannot itself need resolving.
 */
export const resolverRule: SettingRule = (v) => {
  const m = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+)):(\d+)$/i.exec(v)
  const ip = m?.[1] ?? m?.[2]
  if (!m || !ip || isIP(ip) !== (m[1] ? 6 : 4)) {
    return `must be an IP address and port, such as 127.0.0.1:53 or [::1]:53, not ${quote(v)}`
  }
  return portRule(m[3]) && `must end in a port number from 1 to 65535, not ${quote(m[3])}`
}

/** An SMTP relay URL, without credentials: settings live in SQLite, which never holds a secret. */
export const smtpUrlRule: SettingRule = (v) => {
  let u: URL
  try {
    u = new URL(v)
  } catch {
    // Not echoed: a mistyped URL may still hold a password.
    return 'must be a URL such as smtp://127.0.0.1:25'
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') return 'must start with smtp:// or smtps://'
  if (!u.hostname) return 'must name the relay host, such as smtp://127.0.0.1:25'
  if (u.username || u.password) return 'must not carry a user or password: settings are not a secret store'
  if (u.pathname !== '' && u.pathname !== '/') return 'must be only smtp://host:port, without a path'
  if (u.search || u.hash) return 'must be only smtp://host:port, without a query'
  return null
}

/**
 * The CRL address certificates carry (RFC 5280 §4.2.1.13). BR §7.1.2.11.2 allows only an HTTP
 * URL there (not HTTPS: a client checking a TLS certificate's revocation must not need TLS for
 * it); the value goes into every certificate as an IA5String, so printable ASCII only.
 */
export const crlUrlRule: SettingRule = (v) => {
  if (v.length > 1024 || !/^[\x21-\x7e]+$/.test(v))
    return 'must be an http:// address of printable ASCII, at most 1024 characters'
  let u: URL
  try {
    u = new URL(v)
  } catch {
    return `must be an http:// address such as http://crl.example.net/local-ca.crl, not ${quote(v)}`
  }
  if (u.protocol !== 'http:')
    return 'must start with http:// (the Baseline Requirements allow only HTTP for a CRL address)'
  if (!u.hostname) return 'must name a host'
  if (u.username || u.password) return 'must not carry a user or password'
  if (u.hash) return 'must not carry a #fragment'
  return null
}

/**
 * A mailbox (RFC 5322 §3.4): `local@domain`, optionally as `Display Name <local@domain>`. The
 * local part is a dot-atom and the domain DNS labels, which leaves out line breaks and the
 * other characters a header could be split or extended with.
 */
export const mailboxRule: SettingRule = (v) => {
  const bad = `must be an email address such as certdesk@example.com or "CertDesk <certdesk@example.com>", not ${quote(v)}`
  if (v.length > 320 || /\p{Cc}/u.test(v)) return bad
  const m = /^(?:([^<>"@,;]*?)\s*<([^<>\s]+)>|([^<>\s]+))$/.exec(v)
  const address = m?.[2] ?? m?.[3]
  if (!address) return bad
  const at = address.lastIndexOf('@')
  const local = address.slice(0, at)
  const domain = address.slice(at + 1)
  const atom = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/
  const label = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
  const ok =
    at > 0 &&
    local.length <= 64 &&
    local.split('.').every((a) => atom.test(a)) &&
    domain.length <= 253 &&
    domain.split('.').every((l) => label.test(l))
  return ok ? null : bad
}

/** An on/off switch, written `true` or `false`. */
export const flagRule: SettingRule = (v) =>
  v === 'true' || v === 'false' ? null : `must be true or false, not ${quote(v)}`

/**
 * A whole number from `min` to `max` (or 0 for "off" where `offAtZero`), written plainly: no
 * sign, fraction, exponent, leading zero or space, so what is saved is what the checks read.
 */
export const wholeNumberRule =
  (limits: { min: number; max: number; offAtZero: boolean }): SettingRule =>
  (v) => {
    const range = `${limits.offAtZero ? '0 (off) or ' : ''}from ${limits.min} to ${limits.max}`
    if (!/^(?:0|[1-9]\d{0,6})$/.test(v)) return `must be a whole number ${range}, not ${quote(v)}`
    const n = Number(v)
    return (limits.offAtZero && n === 0) || (n >= limits.min && n <= limits.max)
      ? null
      : `must be ${range}, not ${quote(v)}`
  }

/**
 * Text printed on a document: at most `lines` lines of at most `max` characters in all, no
 * control character but the line break (a tab or an escape would print as nothing or as noise).
 */
export const printedTextRule =
  (max: number, lines: number): SettingRule =>
  (v) => {
    if (v.length > max) return `must be at most ${max} characters, not ${v.length}`
    if (/[\p{Cc}\u2028\u2029]/u.test(v.replace(/\r?\n/g, ''))) return 'must be plain text, without control characters'
    const n = v.split(/\r?\n/).length
    return n > lines ? `must be at most ${lines} line${lines === 1 ? '' : 's'}, not ${n}` : null
  }

/**
 * A DNS zone: letters, digits and hyphens in dot-separated labels of at most 63 characters
 * (RFC 1035 §2.3.1), at least two labels, 253 characters in all.
 */
export const zoneRule: SettingRule = (v) =>
  v.length <= 253 && /^(?=.*\.)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.?$/i.test(v)
    ? null
    : `must be a DNS zone such as acme.example.com, not ${quote(v)}`

/** The settings a person may change, each with its rule. */
export const SETTING_RULES: Record<string, SettingRule> = {
  [DCV_SETTINGS.resolver]: resolverRule,
  [DCV_SETTINGS.httpPort]: portRule,
  [DCV_SETTINGS.httpsPort]: portRule,
  [DCV_SETTINGS.smtpUrl]: smtpUrlRule,
  [DCV_SETTINGS.smtpFrom]: mailboxRule,
  [DCV_SETTINGS.allowPrivateAddresses]: flagRule,
  // Delegated DNS validation (delegated-dns.ts)
  [DELEGATED_DNS_SETTINGS.zone]: zoneRule,
  [DELEGATED_DNS_SETTINGS.listen]: resolverRule,
  [DELEGATED_DNS_SETTINGS.persistIssuer]: zoneRule,
  // Alerts (alerts/)
  [ALERT_SETTINGS.allowPrivateAddresses]: flagRule,
  // Installation checks (installations/)
  [INSTALLATION_SETTINGS.intervalHours]: wholeNumberRule(INSTALLATION_LIMITS.intervalHours),
  [INSTALLATION_SETTINGS.concurrency]: wholeNumberRule(INSTALLATION_LIMITS.concurrency),
  [INSTALLATION_SETTINGS.timeoutSeconds]: wholeNumberRule(INSTALLATION_LIMITS.timeoutSeconds),
  // The seller block of invoices
  [INVOICE_SETTINGS.sellerName]: printedTextRule(200, 1),
  [INVOICE_SETTINGS.sellerAddress]: printedTextRule(600, 8),
  // The local CA's CRL address (local-ca-crl.ts)
  [LOCAL_CA_SETTINGS.crlUrl]: crlUrlRule,
  // The address customers reach CertDesk by (public-url.ts)
  [PUBLIC_URL_SETTING]: publicUrlProblem
}

export const EDITABLE_SETTINGS = Object.keys(SETTING_RULES)

/** Quoted and cut short, so a message shows what was typed without repeating a whole paste. */
function quote(v: string): string {
  const shown = v.length > 40 ? `${v.slice(0, 40)}…` : v
  return JSON.stringify(shown)
}

/**
 * What is wrong with each value, by key; empty when all may be saved. The messages read
 * "could not save setting <key>: <reason>" so they stand on their own in a CLI or a UI.
 */
export function settingProblems(changes: Record<string, string>): Record<string, string> {
  const problems: Record<string, string> = {}
  for (const [key, value] of Object.entries(changes)) {
    const rule = Object.hasOwn(SETTING_RULES, key) ? SETTING_RULES[key] : null
    const reason =
      rule === null
        ? `it is not a setting; known: ${EDITABLE_SETTINGS.join(', ')}`
        : typeof value !== 'string'
          ? 'the value must be text'
          : value === ''
            ? null
            : rule(value)
    if (reason) problems[key] = `could not save setting ${key}: ${reason}`
  }
  return problems
}

/** Told of a change a person saved, inside its transaction, with each key's value before it. */
export type SettingsWatcher = (changes: Record<string, string>, before: Record<string, string | null>) => Promise<void>

export class Settings {
  private readonly watchers: SettingsWatcher[] = []

  constructor(private readonly db: Store) {}

  /** Calls `watcher` for every change saved through `update`, in the same transaction. */
  onUpdate(watcher: SettingsWatcher): void {
    this.watchers.push(watcher)
  }

  async get(key: string): Promise<string | null> {
    const row = (await this.db.get('SELECT value FROM settings WHERE key = ?', key)) as { value: string } | undefined
    return row?.value ?? null
  }

  /** Stores a value the core itself computed; values a person typed go through `update`. */
  async set(key: string, value: string): Promise<void> {
    await this.db.run(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      key,
      value
    )
  }

  /** A yes/no setting: only the stored text `true` means yes; unset or anything else means no. */
  async flag(key: string): Promise<boolean> {
    return (await this.get(key)) === 'true'
  }

  /**
   * Saves settings a person typed, all or none: one refused value refuses the whole change
   * (400, every problem in the message) and nothing is written.
   */
  async update(changes: Record<string, string>): Promise<void> {
    const problems = Object.values(settingProblems(changes))
    if (problems.length > 0) throw invalid(problems.join('; '))
    await this.db.tx(async () => {
      const before: Record<string, string | null> = {}
      for (const k of Object.keys(changes)) before[k] = await this.get(k)
      for (const [key, value] of Object.entries(changes)) await this.set(key, value)
      for (const watcher of this.watchers) await watcher(changes, before)
    })
  }

  async getOrCreate(key: string, make: () => string): Promise<string> {
    await this.db.run('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)', key, make())
    return (await this.get(key)) as string
  }
}
