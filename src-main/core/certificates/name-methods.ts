/**
 * The validation method of each name of an order. The reseller API v3.0 carries one
 * `dcv_method` per request; CertDesk takes it as the default of every name and lets single
 * names have their own (`dcv_per_name`, docs/api.md): a file for hosts, DNS for a wildcard
 * (the file method cannot validate one, BR §3.2.2.4.18), email while constructed-email
 * validation is still allowed (BR §3.2.2.4.4). BR §3.2.2.4 validates each FQDN on its own, so
 * nothing ties the methods of two names together.
 */
import type { DcvMethod } from '../dcv/dcv'
import { invalid } from '../errors'
import type { Order } from '../orders/orders'

/** One name's own method, and its approver when that method is email. */
export interface NameChoice {
  name: string
  method: DcvMethod
  approverEmail?: string
}

/** Names of one request at most; an order carries a few hundred names at the very most. */
const MAX_CHOICES = 1000

const shown = (name: unknown): string => JSON.stringify(String(name).slice(0, 253))

/**
 * The method of every name: the one `perName` gives it, else `fallback(name)`. A choice for a
 * name the order does not have, or a second choice for one name, is a 400: a typo must never
 * leave a name on a method the caller did not mean.
 */
export function methodsFor(
  order: Order,
  names: string[],
  fallback: (name: string) => DcvMethod,
  perName: readonly NameChoice[] = []
): Map<string, DcvMethod> {
  if (perName.length > MAX_CHOICES) throw invalid(`dcv_per_name names ${perName.length} names; at most ${MAX_CHOICES}`)
  const methods = new Map(names.map((n) => [n, fallback(n)] as const))
  const seen = new Set<string>()
  for (const choice of perName) {
    const name = normalName(choice.name)
    if (!methods.has(name)) {
      throw invalid(
        `could not choose a validation method: ${shown(choice.name)} is not a name of order ${order.orderNumber}`
      )
    }
    if (seen.has(name)) throw invalid(`could not choose a validation method: ${name} is named twice in dcv_per_name`)
    seen.add(name)
    methods.set(name, choice.method)
  }
  return methods
}

/** The approvers `perName` chooses, as (name, address) pairs for `approversFor`. */
export const choiceApprovers = (perName: readonly NameChoice[] = []): [string, string][] =>
  perName.filter((c) => c.approverEmail !== undefined).map((c) => [c.name, c.approverEmail as string])

/** Names as a caller may write them: any case, surrounding space. */
export const normalName = (name: string): string => String(name).trim().toLowerCase()

/** The one method every name uses, or null when they differ. */
export function sharedMethod(methods: Map<string, DcvMethod>): DcvMethod | null {
  const all = new Set(methods.values())
  return all.size === 1 ? [...all][0] : null
}

/** Whether any name is validated by email (approval messages go out). */
export const anyEmail = (methods: Map<string, DcvMethod>): boolean => [...methods.values()].includes('email')
