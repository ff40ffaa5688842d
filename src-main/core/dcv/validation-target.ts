/**
 * Where a validation request may go. Before the http/https DCV check (BR §3.2.2.4.18) or an
 * ACME http-01 check (RFC 8555 §8.3) connects to a domain, the name is resolved once here, every
 * address it resolves to is checked against the special-purpose registries (special-addresses.ts),
 * and the caller connects to one of the checked addresses, never to the name: no second lookup
 * can answer differently between the check and the connection (DNS rebinding). Public CAs refuse
 * these targets too; a lab that runs its test sites on loopback turns the refusal off with the
 * `dcv.allow_private_addresses` setting.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { dnsResolver } from './dns-resolver'
import { isDomainName } from './domains'
import { specialPurpose } from '../special-addresses'

/** A target validation refuses to connect to; the message says why and how a lab allows it. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TargetRefused'
  }
}

export interface TargetLookup {
  /** `host:port` of the DNS server to ask (dns-resolver.ts); null for the system lookup. */
  resolver: string | null
  /** The lab setting: loopback, private and other special-purpose addresses are allowed. */
  allowPrivateAddresses: boolean
}

// Named as the Settings screen names it (lab use), which is where an admin turns it on; the key
// behind it (setting-keys.ts) is the command line's business.
const LAB_HINT =
  'domain validation never connects to loopback, private or other special-purpose addresses, as public CAs do not (for a lab, turn on lab use in Settings, under Domain validation)'

/**
 * Refuses what is not a domain name before anything is sent: IP literals, and names the system
 * resolver reads as numeric IPv4 addresses (inet_aton takes `2130706433`, `0x7f.1` and `0177.0.0.1`
 * for 127.0.0.1; the WHATWG URL host parser does the same for a name whose last label is a number).
 */
function checkName(name: string, allowPrivate: boolean): string {
  const n = name.toLowerCase().replace(/\.$/, '')
  if (isIP(n) || isIP(n.replace(/^\[(.*)\]$/, '$1'))) {
    throw new TargetRefused(`${name} is an IP address, not a domain name; validation checks domain names only`)
  }
  const last = n.split('.').pop() ?? ''
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last)) {
    throw new TargetRefused(
      `${name} reads as a numeric IPv4 address, not a domain name; validation checks domain names only`
    )
  }
  // RFC 6761 §6.3: localhost and every name under it mean this machine, whatever DNS says.
  if (!allowPrivate && (n === 'localhost' || n.endsWith('.localhost'))) {
    throw new TargetRefused(`${name} is a localhost name, which always means this machine (RFC 6761 §6.3); ${LAB_HINT}`)
  }
  if (!isDomainName(n) && n !== 'localhost') throw new TargetRefused(`${JSON.stringify(name)} is not a domain name`)
  return n
}

async function addressesOf(name: string, how: TargetLookup): Promise<string[]> {
  if (!how.resolver) {
    const all = await lookup(name, { all: true })
    return [...all.filter((a) => a.family === 4), ...all.filter((a) => a.family === 6)].map((a) => a.address)
  }
  const r = dnsResolver(how.resolver)
  // Both families: an AAAA record pointing inward is refused even when an A record looks fine.
  const [v4, v6] = await Promise.allSettled([r.resolve4(name), r.resolve6(name)])
  const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])]
  if (found.length > 0) return found
  if (v4.status === 'rejected') throw v4.reason
  if (v6.status === 'rejected') throw v6.reason
  throw Object.assign(new Error('no A or AAAA record'), { code: 'ENODATA' })
}

/**
 * Resolves `name` and returns the addresses a validation request may connect to, IPv4 first.
 * Throws TargetRefused when the name is not a domain name or any address it resolves to is
 * special-purpose (unless the lab setting allows it); DNS failures are thrown as they come.
 */
export async function resolveTarget(name: string, how: TargetLookup): Promise<string[]> {
  const n = checkName(name, how.allowPrivateAddresses)
  const addresses = await addressesOf(n, how)
  if (!how.allowPrivateAddresses) {
    for (const address of addresses) {
      const what = specialPurpose(address)
      if (what) throw new TargetRefused(`${name} resolves to ${address}, ${what}; ${LAB_HINT}`)
    }
  }
  return addresses
}
