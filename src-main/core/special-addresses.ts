/**
 * Which IP addresses are not the public Internet: the entries of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890) that are not globally reachable, plus multicast,
 * limited broadcast and, for IPv6, everything outside global unicast (2000::/3, IANA IPv6
 * Address Space). A certificate authority never connects to these when it validates a domain:
 * a name that resolves there points the check at the CA's own machine or network, not at the
 * domain holder's site.
 */
import { isIPv4, isIPv6 } from 'node:net'

interface Block {
  /** First address of the block, as a 32-bit (IPv4) or 128-bit (IPv6) number. */
  base: bigint
  bits: number
  /** What the block is, with its source, as a person reads it. */
  what: string
}

function ipv4Number(address: string): bigint | null {
  if (!isIPv4(address)) return null
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n)
}

function ipv6Number(address: string): bigint | null {
  // A zone index (fe80::1%eth0) names an interface, not an address: it changes nothing here.
  const bare = address.replace(/%.*$/, '')
  if (!isIPv6(bare)) return null
  let text = bare
  // An embedded dotted quad (::ffff:127.0.0.1) is the last 32 bits, written as two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (quad) {
    const v4 = ipv4Number(quad[1]) as bigint
    text = `${text.slice(0, -quad[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = tail === null ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n)
}

const block = (cidr: string, what: string): Block => {
  const [addr, bits] = cidr.split('/')
  const base = isIPv4(addr) ? ipv4Number(addr) : ipv6Number(addr)
  return { base: base as bigint, bits: Number(bits), what }
}

const inBlock = (n: bigint, b: Block, width: number): boolean => {
  const shift = BigInt(width - b.bits)
  return n >> shift === b.base >> shift
}

/** IANA IPv4 Special-Purpose Address Registry entries that are not globally reachable, and more. */
const IPV4_BLOCKS: Block[] = [
  block('0.0.0.0/8', 'an unspecified or "this network" address (RFC 791 §3.2, RFC 1122 §3.2.1.3)'),
  block('10.0.0.0/8', 'a private-use address (RFC 1918)'),
  block('100.64.0.0/10', 'a shared (carrier-grade NAT) address (RFC 6598)'),
  block('127.0.0.0/8', 'a loopback address (RFC 1122 §3.2.1.3)'),
  block('169.254.0.0/16', 'a link-local address (RFC 3927)'),
  block('172.16.0.0/12', 'a private-use address (RFC 1918)'),
  block('192.0.0.0/24', 'an IETF protocol assignment address (RFC 6890 §2.1)'),
  block('192.0.2.0/24', 'a documentation address (RFC 5737)'),
  block('192.88.99.0/24', 'a deprecated 6to4 relay anycast address (RFC 7526)'),
  block('192.168.0.0/16', 'a private-use address (RFC 1918)'),
  block('198.18.0.0/15', 'a benchmarking address (RFC 2544)'),
  block('198.51.100.0/24', 'a documentation address (RFC 5737)'),
  block('203.0.113.0/24', 'a documentation address (RFC 5737)'),
  block('224.0.0.0/4', 'a multicast address (RFC 5771)'),
  block('255.255.255.255/32', 'the limited broadcast address (RFC 919 §7)'),
  block('240.0.0.0/4', 'a reserved address (RFC 1112 §4)')
]

/** IANA IPv6 Special-Purpose Address Registry entries that are not globally reachable, and more. */
const IPV6_BLOCKS: Block[] = [
  block('::/128', 'the unspecified address (RFC 4291 §2.5.2)'),
  block('::1/128', 'the loopback address (RFC 4291 §2.5.3)'),
  block('::/96', 'a deprecated IPv4-compatible address (RFC 4291 §2.5.5.1)'),
  block('64:ff9b::/96', 'an IPv4/IPv6 translation address (RFC 6052)'),
  block('64:ff9b:1::/48', 'a local-use IPv4/IPv6 translation address (RFC 8215)'),
  block('100::/64', 'a discard-only address (RFC 6666)'),
  block('2001::/23', 'an IETF protocol assignment address (RFC 2928)'),
  block('2001:db8::/32', 'a documentation address (RFC 3849)'),
  block('2002::/16', 'a 6to4 address (RFC 3056)'),
  block('3fff::/20', 'a documentation address (RFC 9637)'),
  block('5f00::/16', 'a segment routing address (RFC 9602)'),
  block('fc00::/7', 'a unique-local address (RFC 4193)'),
  block('fe80::/10', 'a link-local address (RFC 4291 §2.5.6)'),
  block('fec0::/10', 'a deprecated site-local address (RFC 3879)'),
  block('ff00::/8', 'a multicast address (RFC 4291 §2.7)')
]

const IPV4_MAPPED = block('::ffff:0:0/96', 'an IPv4-mapped address (RFC 4291 §2.5.5.2)')
const GLOBAL_UNICAST = block('2000::/3', 'global unicast')

/**
 * Why `address` is not a public Internet address ("a loopback address (RFC 1122 §3.2.1.3)"), or
 * null when it is one. Anything that is not an IP address at all counts as not public.
 */
export function specialPurpose(address: string): string | null {
  const v4 = ipv4Number(address)
  if (v4 !== null) return IPV4_BLOCKS.find((b) => inBlock(v4, b, 32))?.what ?? null
  const v6 = ipv6Number(address)
  if (v6 === null) return 'not an IP address'
  if (inBlock(v6, IPV4_MAPPED, 128)) {
    // Connecting to ::ffff:a.b.c.d reaches a.b.c.d over IPv4: say which one, and what it is.
    const inner = v6 & 0xffffffffn
    const dotted = [24n, 16n, 8n, 0n].map((s) => String((inner >> s) & 0xffn)).join('.')
    const what = specialPurpose(dotted)
    return `${IPV4_MAPPED.what} of ${dotted}${what ? `, ${what}` : ''}`
  }
  const found = IPV6_BLOCKS.find((b) => inBlock(v6, b, 128))
  if (found) return found.what
  return inBlock(v6, GLOBAL_UNICAST, 128) ? null : 'an address outside IPv6 global unicast 2000::/3 (RFC 4291 §2.4)'
}
