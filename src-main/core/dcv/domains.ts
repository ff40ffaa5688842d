/**
 * Domain names as orders and CSRs carry them: lower-case ASCII (IDNs in their xn-- form),
 * at least two labels, LDH labels of 1-63 characters, 253 characters at most (RFC 1035 §2.3.4),
 * and a leading `*.` only where a wildcard is allowed.
 */
import { domainToASCII } from 'node:url'
import { invalid } from '../errors'

const LABEL_RE = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

export function isDomainName(name: string, allowWildcard = false): boolean {
  let n = name
  if (n.startsWith('*.')) {
    if (!allowWildcard) return false
    n = n.slice(2)
  }
  if (n.length === 0 || n.length > 253) return false
  const labels = n.split('.')
  if (labels.length < 2) return false
  if (!labels.every((l) => LABEL_RE.test(l))) return false
  // The top-level label is never all digits; this also refuses IPv4 addresses.
  return !/^\d+$/.test(labels[labels.length - 1])
}

export const isWildcard = (name: string): boolean => name.startsWith('*.')

/** The name without a leading `*.`: the zone that validation checks for a wildcard. */
export const baseDomain = (name: string): string => (isWildcard(name) ? name.slice(2) : name)

/**
 * A typed name as orders keep it: an internationalised name as its A-label (RFC 5890 §2.3.2.1,
 * through UTS #46 processing, which also folds case), so `Bücher.example` is ordered as
 * `xn--bcher-kva.example` and shown as typed. An xn-- label that is not valid Punycode
 * (RFC 5891 §5.4) and a name UTS #46 refuses come back empty, which no check accepts.
 */
function aLabelForm(name: string): string {
  const host = name.replace(/^\*\./, '')
  if (/^[a-z0-9.*-]*$/.test(host) && !/(^|\.)xn--/.test(host)) return name
  // Spaces and control characters are never part of a name; UTS #46 would drop some of them.
  const ascii = [...host].some((c) => c.trim() === '' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
    ? ''
    : domainToASCII(host)
  return ascii === '' ? '' : `${name.startsWith('*.') ? '*.' : ''}${ascii}`
}

/** Trims, lower-cases and checks a domain a person typed; `wildcard` says what the product wants. */
export function normalizeDomain(input: string, wildcard: 'required' | 'forbidden' | 'allowed'): string {
  const name = aLabelForm(input.trim().toLowerCase().replace(/\.$/, ''))
  if (!isDomainName(name, wildcard !== 'forbidden')) {
    throw invalid(
      `domain ${JSON.stringify(input)} is not a valid ${wildcard === 'required' ? 'wildcard ' : ''}domain name`
    )
  }
  if (wildcard === 'required' && !isWildcard(name)) {
    throw invalid(`domain must be a wildcard name such as *.${name} for this product`)
  }
  if (wildcard === 'forbidden' && isWildcard(name)) {
    throw invalid('a wildcard domain needs a wildcard product')
  }
  return name
}
