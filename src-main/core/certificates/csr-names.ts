/**
 * The names a CSR asks for, each either taken or refused by name, never left out: a dNSName is
 * ASCII (RFC 5280 §4.2.1.6), an internationalised name goes in as its A-label (RFC 5890), and a
 * publicly trusted certificate names fully-qualified domains only (BR §7.1.2.7.12). Every path
 * that reads a CSR applies these: POST /csr/decode, /ssl/configure, /ssl/reissue and the app.
 */
import { domainToASCII } from 'node:url'
import type { DecodedCsr } from './csr'
import { isDomainName } from '../dcv/domains'
import { invalid } from '../errors'

/** At most this much of a name goes into a message: enough to recognise it, bounded for a hostile one. */
const SHOWN_NAME_CHARS = 100

/**
 * A name from a CSR as a message shows it: quoted, control characters escaped (a CSR is the
 * sender's bytes, and messages reach terminals and logs), and bounded in length.
 */
export function shownName(name: string): string {
  const chars = [...name]
  const cut = chars.length > SHOWN_NAME_CHARS ? [...chars.slice(0, SHOWN_NAME_CHARS), '…'] : chars
  const escaped = cut.map((c) =>
    c === '"' || c === '\\'
      ? `\\${c}`
      : c === '\n'
        ? '\\n'
        : c === '\r'
          ? '\\r'
          : c === '\t'
            ? '\\t'
            : isControl(c)
              ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
              : c
  )
  return `"${escaped.join('')}"`
}

/** C0 and C1 control characters and DEL (Unicode general category Cc). */
const isControl = (c: string): boolean => {
  const code = c.charCodeAt(0)
  return code < 0x20 || (code >= 0x7f && code <= 0x9f)
}

/**
 * Why `name` (lower-case, as a CSR carries it) cannot go into a certificate, or null. A dNSName
 * is an IA5String of letters, digits, hyphens and dots (RFC 5280 §4.2.1.6, RFC 1035 §2.3.1), of
 * at least two labels for a publicly trusted certificate (BR §7.1.2.7.12: no internal names);
 * an internationalised name goes in as its A-label (RFC 5280 §7.2, RFC 5890 §2.3.2.1), and an
 * A-label must be valid Punycode (RFC 5891 §5.4). A leading `*.` is a wildcard.
 */
export function nameProblem(name: string): string | null {
  if (/[^\x21-\x7e]/.test(name)) {
    const aLabel = [...name].some((c) => c === ' ' || isControl(c)) ? '' : domainToASCII(name)
    return aLabel && isDomainName(aLabel, true)
      ? `is not written in ASCII; a certificate carries an internationalised name as its A-label, ${aLabel} (RFC 5890 §2.3.2.1, RFC 5280 §7.2): make the CSR with that name`
      : 'holds characters a domain name cannot hold (letters, digits, hyphens and dots only, RFC 1035 §2.3.1)'
  }
  if (!isDomainName(name, true)) {
    const host = name.replace(/^\*\./, '')
    return host !== '' && !host.includes('.') && /^[a-z0-9-]+$/.test(host)
      ? 'is not a fully-qualified domain name; a publicly trusted certificate names registered domains only (BR §7.1.2.7.12)'
      : 'is not a valid domain name (labels of 1 to 63 letters, digits and hyphens, separated by dots, RFC 1035 §2.3.1; a wildcard only as a whole leftmost "*." label)'
  }
  if (/(^|\.)xn--/.test(name) && domainToASCII(name.replace(/^\*\./, '')) === '') {
    return 'holds an A-label (xn--) that is not valid Punycode (RFC 5891 §5.4)'
  }
  return null
}

/**
 * Refuses a CSR whose subjectAltName holds a DNS name CertDesk can never issue, naming it:
 * every path that reads a CSR (POST /csr/decode, configure, reissue, a CSR kept in the app)
 * says which name instead of leaving it out of what it shows or issues. `what` starts the
 * message ("could not accept CSR").
 */
export function assertCsrNames(csr: DecodedCsr, what = 'could not accept CSR'): void {
  for (const n of csr.dnsNames) {
    const problem = nameProblem(n)
    if (problem) throw invalid(`${what}: its name ${shownName(n)} ${problem}`)
  }
}

/**
 * The names a TLS CSR asks for: the common name when it is a host name, then every DNS SAN, once
 * each. Nothing is left out: a name CertDesk cannot issue, and a subjectAltName entry of another
 * kind (an IP address, an email address), is refused by name (400), because a certificate that
 * silently lacks a name the customer asked and paid for is worse than a clear refusal.
 */
export function requestedNames(csr: DecodedCsr): string[] {
  assertCsrNames(csr)
  if (csr.sanOthers.length > 0) {
    throw invalid(
      `could not accept CSR: its subjectAltName asks for ${shownName(csr.sanOthers[0]).slice(1, -1)}; CertDesk issues TLS certificates for DNS names only: make the CSR without it`
    )
  }
  const names: string[] = []
  const cn = csr.commonName?.trim().toLowerCase() ?? ''
  // A common name with a space is a label for people ("Example Hosting"), not a host name: the
  // certificate's subject takes the order domain instead (subjectFor). Any other one is a name.
  if (cn !== '' && !/\s/.test(cn)) {
    const problem = nameProblem(cn.replace(/\.$/, ''))
    if (problem) throw invalid(`could not accept CSR: its common name ${shownName(cn)} ${problem}`)
    names.push(cn.replace(/\.$/, ''))
  }
  for (const n of csr.dnsNames) if (!names.includes(n)) names.push(n)
  return names
}
