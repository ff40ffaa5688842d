/**
 * Alert channels: where alerts go. The store keeps what is not secret (host, port, sender,
 * recipients, a webhook URL); the SMTP password, the whole Slack or Teams URL (its path is the
 * credential that lets anyone post) and the generic webhook's signing secret go to the OS
 * keychain. Every value is checked before anything is written.
 */
import { randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { ALERT_CHANNEL_KINDS } from '../../../src-shared/alert-records'
import type { CoreContext } from '../context'
import { invalid, notFound } from '../errors'
import { mailboxRule } from '../settings/settings'
import { isoTimestamp } from '../time'
import { refusedAddress, type SmtpSettings } from './transport'

export const CHANNEL_KINDS = ALERT_CHANNEL_KINDS
export type ChannelKind = (typeof CHANNEL_KINDS)[number]
export const SMTP_SECURITY = ['starttls', 'tls', 'none'] as const

/** Most recipients of one email channel; more belongs on a mailing list. */
export const MAX_RECIPIENTS = 20

export type ChannelInput =
  | {
      kind: 'smtp'
      name: string
      host: string
      port?: number
      security?: (typeof SMTP_SECURITY)[number]
      username?: string
      password?: string
      from: string
      to: string[]
      digest?: boolean
    }
  | { kind: 'slack' | 'teams' | 'webhook'; name: string; url: string }

/** What the store keeps of a channel (never a secret). */
export interface SmtpConfig {
  host: string
  port: number
  security: (typeof SMTP_SECURITY)[number]
  username: string | null
  from: string
  to: string[]
}
export interface UrlConfig {
  /** The generic webhook's URL; for Slack and Teams only the host (the path is the credential). */
  url: string | null
  host: string
}

export interface Channel {
  id: number
  kind: ChannelKind
  name: string
  enabled: boolean
  digest: boolean
  config: SmtpConfig | UrlConfig
  createdAt: string
}

interface ChannelRow {
  id: number
  kind: ChannelKind
  name: string
  config: string
  enabled: number
  digest: number
  created_at: string
}

/** Where a channel's messages go, in words: its credentials are in the keychain and never shown. */
export function channelTarget(c: Channel): string {
  if (c.kind === 'smtp') {
    const s = c.config as SmtpConfig
    return `${s.host}:${s.port} (${s.security}${s.username ? `, login ${s.username}` : ''}) to ${s.to.join(', ')}`
  }
  const u = c.config as UrlConfig
  return c.kind === 'webhook' ? String(u.url) : `${u.host} (the URL is in the keychain)`
}

export const secretName = (id: number, what: 'password' | 'url' | 'signing_secret'): string =>
  `alert_channel.${id}.${what}`

export function channelFromRow(r: ChannelRow): Channel {
  return {
    id: r.id,
    kind: r.kind,
    name: r.name,
    enabled: r.enabled === 1,
    digest: r.digest === 1,
    config: JSON.parse(r.config) as SmtpConfig | UrlConfig,
    createdAt: r.created_at
  }
}

const fail = (what: string): never => {
  throw invalid(`could not save the alert channel: ${what}`)
}
const shown = (v: unknown): string => JSON.stringify(String(v).slice(0, 60))
const hasControl = (s: string): boolean => /\p{Cc}/u.test(s)

function text(v: unknown, field: string, max: number): string {
  if (typeof v !== 'string' || v.trim() === '') return fail(`${field} is required`)
  if (v.length > max) return fail(`${field} is longer than ${max} characters`)
  if (hasControl(v)) return fail(`${field} must not hold line breaks or other control characters`)
  return v.trim()
}

/** A host name (RFC 1123 labels) or an IP address. */
function hostName(v: unknown): string {
  const h = text(v, 'host', 253)
  const bare = h.replace(/^\[|\]$/g, '')
  if (isIP(bare)) return bare
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(h))
    return fail(`host ${shown(h)} is not a host name or IP address`)
  return h
}

const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || (isIP(host) !== 0 && /loopback/.test(refusedAddress(host) ?? ''))

/** Checks an SMTP channel; answers what the store keeps and the password for the keychain. */
export function checkSmtp(input: Extract<ChannelInput, { kind: 'smtp' }>): {
  config: SmtpConfig
  password: string | null
} {
  const host = hostName(input.host)
  const security = input.security ?? 'starttls'
  if (!(SMTP_SECURITY as readonly string[]).includes(security))
    return fail(`security must be one of ${SMTP_SECURITY.join(', ')}, not ${shown(security)}`)
  const port = input.port ?? (security === 'tls' ? 465 : security === 'none' ? 25 : 587)
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return fail(`port must be from 1 to 65535, not ${shown(port)}`)
  const username = input.username === undefined || input.username === '' ? null : text(input.username, 'username', 256)
  const password = input.password === undefined || input.password === '' ? null : input.password
  if (password !== null && (password.length > 1024 || /[\r\n\0]/.test(password)))
    return fail('the password must be one line of at most 1024 characters')
  if (password !== null && username === null) return fail('a password needs a username')
  // Without TLS, AUTH PLAIN/LOGIN sends the password readable by anyone on the path (RFC 4954 §4).
  if (security === 'none' && username !== null && !isLoopbackHost(host))
    return fail(`security none would send the password in clear to ${host}; use starttls or tls`)
  const from = text(input.from, 'from', 320)
  const bad = mailboxRule(from)
  if (bad) return fail(`from ${bad}`)
  if (!Array.isArray(input.to) || input.to.length === 0) return fail('to needs at least one address')
  if (input.to.length > MAX_RECIPIENTS) return fail(`to holds at most ${MAX_RECIPIENTS} addresses`)
  const to = input.to.map((a) => {
    const address = text(a, 'to', 320)
    const problem = mailboxRule(address)
    return problem ? fail(`to ${problem}`) : address
  })
  return { config: { host, port, security, username, from, to }, password }
}

/**
 * Checks a webhook URL: http(s), no user or password in it, and a host that resolves only to
 * public addresses (unless `allowPrivate`). The check is repeated when sending (transport.ts).
 */
export async function checkUrl(kind: ChannelKind, v: unknown, allowPrivate: boolean): Promise<URL> {
  const raw = text(v, 'url', 2048)
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    // Not echoed: a Slack or Teams URL is a credential.
    return fail('url is not a URL')
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && (allowPrivate || kind === 'webhook')))
    return fail(kind === 'webhook' ? 'url must be http:// or https://' : `a ${kind} url must be https://`)
  if (u.username || u.password) return fail('url must not carry a user name or password')
  const host = u.hostname.replace(/^\[|\]$/g, '')
  if (!allowPrivate) {
    let addresses: string[]
    try {
      addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address)
    } catch {
      return fail(`url host ${shown(host)} does not resolve`)
    }
    const bad = addresses.map(refusedAddress).find(Boolean)
    if (bad) return fail(`url host ${shown(host)} is refused: ${bad}`)
  }
  return u
}

export class AlertChannels {
  constructor(private readonly ctx: CoreContext) {}

  async list(): Promise<Channel[]> {
    return ((await this.ctx.store.all('SELECT * FROM alert_channels ORDER BY id')) as ChannelRow[]).map(channelFromRow)
  }

  async get(id: number): Promise<Channel> {
    const row = (await this.ctx.store.get('SELECT * FROM alert_channels WHERE id = ?', id)) as ChannelRow | undefined
    if (!row) throw notFound(`could not find alert channel ${id}`)
    return channelFromRow(row)
  }

  /**
   * Saves a channel; the generic webhook's signing secret is made here and answered once (it
   * stays readable with `secret`). The keychain is written first: a keychain that refuses
   * leaves no channel without its credential.
   */
  async add(input: ChannelInput, allowPrivate: boolean): Promise<{ channel: Channel; signingSecret: string | null }> {
    if (!input || !(CHANNEL_KINDS as readonly string[]).includes((input as { kind: string }).kind))
      return fail(`kind must be one of ${CHANNEL_KINDS.join(', ')}`)
    const name = text(input.name, 'name', 80)
    let config: SmtpConfig | UrlConfig
    let secrets: ['password' | 'url' | 'signing_secret', string][] = []
    let digest = false
    let signingSecret: string | null = null
    if (input.kind === 'smtp') {
      const checked = checkSmtp(input)
      config = checked.config
      if (checked.password !== null) secrets = [['password', checked.password]]
      digest = input.digest === true
    } else {
      const u = await checkUrl(input.kind, input.url, allowPrivate)
      if (input.kind === 'webhook') {
        config = { url: u.toString(), host: u.host }
        signingSecret = randomBytes(32).toString('hex')
        secrets = [['signing_secret', signingSecret]]
      } else {
        config = { url: null, host: u.host }
        secrets = [['url', u.toString()]]
      }
    }
    const db = this.ctx.store
    // Disabled until its secrets are kept: no alert goes to a channel without them. The
    // keychain is written after the row is committed (a transaction may run twice, a keychain
    // write must not); if it refuses, the channel is not created either.
    const id = await db.insert(
      'INSERT INTO alert_channels (kind, name, config, enabled, digest, created_at) VALUES (?, ?, ?, 0, ?, ?)',
      input.kind,
      name,
      JSON.stringify(config),
      digest ? 1 : 0,
      isoTimestamp(this.ctx.clock())
    )
    try {
      for (const [what, value] of secrets) await this.ctx.secrets.set(secretName(id, what), value)
    } catch (err) {
      await db.run('DELETE FROM alert_channels WHERE id = ?', id)
      for (const [what] of secrets) {
        try {
          await this.ctx.secrets.delete(secretName(id, what))
        } catch {
          // The keychain failed already; a stray secret without its channel is used by nothing.
        }
      }
      throw err
    }
    await db.run('UPDATE alert_channels SET enabled = 1 WHERE id = ?', id)
    return { channel: await this.get(id), signingSecret }
  }

  async remove(id: number): Promise<void> {
    const channel = await this.get(id)
    await this.ctx.store.run('DELETE FROM alert_channels WHERE id = ?', channel.id)
    for (const what of ['password', 'url', 'signing_secret'] as const) {
      if ((await this.ctx.secrets.get(secretName(id, what))) !== null)
        await this.ctx.secrets.delete(secretName(id, what))
    }
  }

  async setEnabled(id: number, enabled: boolean): Promise<Channel> {
    await this.get(id)
    await this.ctx.store.run('UPDATE alert_channels SET enabled = ? WHERE id = ?', enabled ? 1 : 0, id)
    return await this.get(id)
  }

  /** The generic webhook's signing secret, for the admin to copy into the receiver. */
  async signingSecret(id: number): Promise<string> {
    const channel = await this.get(id)
    if (channel.kind !== 'webhook') throw invalid(`could not read the signing secret: channel ${id} is ${channel.kind}`)
    const secret = await this.ctx.secrets.get(secretName(id, 'signing_secret'))
    if (secret === null) throw notFound(`could not read the signing secret of channel ${id}: it is not in the keychain`)
    return secret
  }

  /** What sending needs, with the secrets read from the keychain at the moment of sending. */
  async smtpSettings(c: Channel): Promise<SmtpSettings> {
    const cfg = c.config as SmtpConfig
    return { ...cfg, password: cfg.username ? await this.ctx.secrets.get(secretName(c.id, 'password')) : null }
  }

  async url(c: Channel): Promise<string> {
    if (c.kind === 'webhook') return (c.config as UrlConfig).url as string
    const url = await this.ctx.secrets.get(secretName(c.id, 'url'))
    if (url === null) throw new Error(`the ${c.kind} URL of channel ${c.id} is not in the keychain`)
    return url
  }
}
