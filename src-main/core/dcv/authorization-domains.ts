/**
 * Authorization Domain Names (Baseline Requirements §1.6.1): the names at which control of an
 * FQDN may be shown. For a wildcard the `*.` is removed first; then labels may be pruned from
 * the left "until encountering a Base Domain Name", the registrable domain, which is itself an
 * Authorization Domain Name. A public suffix never is: `shop.co.uk` may be validated at
 * `shop.co.uk`, never at `co.uk` or `uk`.
 *
 * The registrable domain comes from the Public Suffix List through `tldts`, with the PSL's
 * ICANN section only: BR §3.2.2.6 asks a CA that uses the PSL to consult "the ICANN DOMAINS
 * section only, not the PRIVATE DOMAINS section" (docs/decisions.md, "Parent domains of an
 * approver address").
 */
import { getDomain } from 'tldts'
import { APPROVER_LOCAL_PARTS } from '../certificates/cab-policy'
import { baseDomain } from './domains'

const PSL_OPTIONS = { allowPrivateDomains: false, detectIp: true, validateHostname: true } as const

/**
 * The Authorization Domain Names of `name`, the FQDN first and the registrable domain last;
 * empty when the name has no registrable domain (a public suffix itself, an IP address).
 */
export function authorizationDomains(name: string): string[] {
  const fqdn = baseDomain(name.trim().toLowerCase())
  const registrable = getDomain(fqdn, PSL_OPTIONS)
  if (!registrable || (fqdn !== registrable && !fqdn.endsWith(`.${registrable}`))) return []
  const labels = fqdn.split('.')
  const stop = registrable.split('.').length
  const out: string[] = []
  for (let i = 0; labels.length - i >= stop; i++) out.push(labels.slice(i).join('.'))
  return out
}

/**
 * Every constructed approver address of `name` (BR §3.2.2.4.4): each allowed mailbox at each
 * Authorization Domain Name, the name itself first and its registrable domain last.
 */
export const approverChoices = (name: string): string[] =>
  authorizationDomains(name).flatMap((domain) => APPROVER_LOCAL_PARTS.map((local) => `${local}@${domain}`))
