/**
 * Email addresses CertDesk takes from resellers (`contact_email`). They are printed into
 * ready-to-paste ACME client commands and into notices, so CertDesk accepts the plain form
 * every mail system and command-line client handles, and refuses anything else with a reason:
 *
 * - at most 254 characters in all and 64 before the `@` (RFC 5321 §4.5.3.1.1 and §4.5.3.1.3);
 * - the local part a dot-atom (RFC 5322 §3.4.1) of letters, digits, `_`, `%`, `+` and `-`:
 *   quoted local parts and the rarer atext characters (`'`, `$`, backquote, `|`, `&`, `{`…)
 *   are legal in RFC 5322 but mean something to a shell and are not used in practice;
 * - not starting with `-`, which ACME clients (certbot's `-m`) would read as an option;
 * - the domain a host name as orders take them (RFC 1035 §2.3.1, IDNs in their xn-- form),
 *   lower-cased; no address literals, no non-ASCII (SMTPUTF8, RFC 6531, is not supported).
 */
import { isDomainName } from './domains'
import { invalid } from '../errors'

const LOCAL_RE = /^[A-Za-z0-9_%+-]+(\.[A-Za-z0-9_%+-]+)*$/
const MAX_ADDRESS = 254
const MAX_LOCAL = 64

/** Why `address` is not an address CertDesk accepts, or null when it is. */
export function emailAddressProblem(address: string): string | null {
  if (address.length === 0) return 'it is empty'
  if (address.length > MAX_ADDRESS) return `it is longer than ${MAX_ADDRESS} characters`
  // Anything outside printable ASCII (controls, line breaks, Unicode look-alikes) is refused first.
  if (!/^[\x21-\x7e]+$/.test(address)) return 'it may hold only printable ASCII characters, without spaces'
  const at = address.lastIndexOf('@')
  if (at < 0) return 'it has no @'
  const local = address.slice(0, at)
  const domain = address.slice(at + 1)
  if (local.includes('@')) return 'it has more than one @'
  if (local.length === 0) return 'it has nothing before the @'
  if (local.length > MAX_LOCAL) return `the part before the @ is longer than ${MAX_LOCAL} characters`
  if (local.startsWith('-')) return 'the part before the @ must not start with -'
  if (!LOCAL_RE.test(local))
    return 'the part before the @ may hold only letters, digits, dots between them, and _ % + -'
  if (!isDomainName(domain.toLowerCase())) return `${JSON.stringify(domain)} after the @ is not a domain name`
  return null
}

/** Trims an address a person typed, checks it, and lower-cases its domain; 400 with the reason otherwise. */
export function normalizeEmailAddress(input: string, field: string): string {
  const address = input.trim()
  const problem = emailAddressProblem(address)
  // The value is echoed only while short enough to read; JSON shows any control character as an escape.
  const shown = input.length <= MAX_ADDRESS ? ` ${JSON.stringify(input)}` : ''
  if (problem) throw invalid(`${field}${shown} is not an email address: ${problem}`)
  const at = address.lastIndexOf('@')
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`
}
