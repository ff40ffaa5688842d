/**
 * Domain names as orders and CSRs carry them: lower-case ASCII (IDNs in their xn-- form),
 * at least two labels, LDH labels of 1-63 characters, 253 characters at most (RFC 1035 §2.3.4),
 * and a leading `*.` only where a wildcard is allowed.
 */
import { invalid } from './errors'

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

/** Trims, lower-cases and checks a domain a person typed; `wildcard` says what the product wants. */
export function normalizeDomain(input: string, wildcard: 'required' | 'forbidden' | 'allowed'): string {
  const name = input.trim().toLowerCase().replace(/\.$/, '')
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
