/**
 * The validation methods as the screens offer them. A wildcard name cannot be validated by a
 * file (BR §3.2.2.4.18), so it is never offered one; with a file chosen for the order, a
 * wildcard takes DNS unless another method is picked for it.
 */
import type { DcvMethod } from '../../src-preload/contract'

export const METHOD_LABELS: Record<DcvMethod, string> = {
  http: 'HTTP file',
  https: 'HTTPS file',
  dns: 'DNS CNAME',
  email: 'Email'
}

const ALL: DcvMethod[] = ['http', 'https', 'dns', 'email']

const isWildcard = (name: string): boolean => name.startsWith('*.')

/** The methods a name may be validated by. */
export const methodsFor = (name: string): DcvMethod[] =>
  isWildcard(name) ? ALL.filter((m) => m !== 'http' && m !== 'https') : ALL

/** The method a name takes when none was picked for it: the order's, or DNS for a wildcard when that is a file. */
export const defaultMethodOf = (name: string, orderMethod: DcvMethod): DcvMethod =>
  methodsFor(name).includes(orderMethod) ? orderMethod : 'dns'
