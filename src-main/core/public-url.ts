/**
 * The public base URL: the one address customers and their tools reach CertDesk by, such as
 * `https://certs.reseller.example`. Every address CertDesk shows or sends (the ACME directory,
 * the set-up commands, the root certificate link, the auto-install set-up page) is built from it
 * when it is set, on every transport and in every process reading the store, so a team of nodes
 * shows one name. Unset, the addresses are the loopback listeners' as before.
 */

/** Where the base URL is kept (SQLite `settings`): `serve --public-url` saves it there. */
export const PUBLIC_URL_SETTING = 'public.base_url'

/**
 * What the running public listener presents, written by `serve` when it starts and whenever its
 * certificate changes (never typed by a person), so the set-up commands every process shows
 * tell clients what to trust: `certdesk-root` (a certificate of the CertDesk CA; clients are
 * given the root and its SHA-256) or `system` (given files whose chain does not end in the
 * CertDesk root, such as a public CA's).
 */
export const PUBLIC_LISTENER_SETTINGS = {
  clientTrust: 'public.client_trust',
  rootSha256: 'public.root_sha256'
} as const

/** A public base URL, checked and written one way: `https://host[:port]`, no trailing slash. */
export interface PublicUrl {
  /** `https://certs.reseller.example` or `https://certs.reseller.example:8443`. */
  base: string
  /** The host name alone, lower-case: what the Host check and the listener certificate name. */
  host: string
}

/** A DNS name of at least two labels (RFC 1035 §2.3.1 label syntax, 253 characters in all). */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/

/** The base URL of `value`, or what is wrong with it. */
export function parsePublicUrl(value: string): PublicUrl | { problem: string } {
  let u: URL
  try {
    u = new URL(value.trim())
  } catch {
    return { problem: 'must be a URL such as https://certs.reseller.example' }
  }
  // RFC 8555 §6.1: an ACME server is reached over HTTPS only, and the directory is built from this.
  if (u.protocol !== 'https:')
    return { problem: 'must start with https:// (ACME clients reach a CA over HTTPS only, RFC 8555 §6.1)' }
  if (u.username || u.password) return { problem: 'must not carry a user or password' }
  if (u.pathname !== '/' || u.search || u.hash)
    return {
      problem: 'must be only https://host or https://host:port, without a path or query (CertDesk serves from the root)'
    }
  const host = u.hostname.toLowerCase().replace(/\.$/, '')
  // The Host check compares names and the local CA signs DNS names only, so an address is refused.
  if (!DNS_NAME.test(host) || /^[0-9.]+$/.test(host))
    return {
      problem: `must name the host by a DNS name such as certs.reseller.example, not ${JSON.stringify(u.hostname)}`
    }
  return { base: `https://${host}${u.port ? `:${u.port}` : ''}`, host }
}

/** The settings rule: null when `value` may be saved, else why not. */
export function publicUrlProblem(value: string): string | null {
  const parsed = parsePublicUrl(value)
  return 'problem' in parsed ? parsed.problem : null
}

/** The base URL kept in the settings, or null when none is set (or a hand-edited one is unusable). */
export async function publicUrlOf(settings: { get(key: string): Promise<string | null> }): Promise<PublicUrl | null> {
  const value = await settings.get(PUBLIC_URL_SETTING)
  if (!value) return null
  const parsed = parsePublicUrl(value)
  return 'problem' in parsed ? null : parsed
}
