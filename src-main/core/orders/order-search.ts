/**
 * GET /orders?domain=: a case-insensitive substring of the order's domain (reseller API v3.0,
 * "List orders"; docs/decisions.md, "`?domain=` is a substring"). Terms the trigram index of
 * migration 0013 can answer are looked up there as one FTS5 phrase, with the caller's owner
 * token beside it, so the page and its total come from the index alone; the others (shorter
 * than a trigram, or not printable ASCII) take a LIKE scan of the caller's orders.
 */
import { domainToASCII } from 'node:url'
import type { Store } from '../store'

const ASCII = /^\p{ASCII}*$/u

/**
 * A search term in the form domains are stored in: lower case, each label that holds non-ASCII
 * characters as its A-label (RFC 5891 §4, through the UTS #46 mapping WHATWG URL applies), so
 * `bücher.example`, as the lists show it, finds `xn--bcher-kva.example`. A label that does not
 * convert (a stray character) is searched as typed, and finds what holds it literally.
 */
export function storedFormOf(term: string): string {
  const t = term.toLowerCase()
  if (ASCII.test(t)) return t
  return t
    .split('.')
    .map((label) => (ASCII.test(label) ? label : domainToASCII(label) || label))
    .join('.')
}

/** Totals kept at most; the term is free text, so the map must not grow forever. */
const MAX_TOTALS = 256

/**
 * Totals of searches, kept while the caller's rows are unchanged. A script paging through a
 * broad search asks for the same total with every page; counting 50,000 matches costs more
 * than the page itself. The reseller's scope version (migration 0009's triggers, moved by every
 * writer of that reseller's orders in any process) decides whether a kept total still holds.
 */
export class SearchTotals {
  private readonly kept = new Map<string, { version: string; total: number }>()

  constructor(private readonly db: Store) {}

  /** Call it inside the read transaction of the page, so the version and the count agree. */
  async total(
    resellerId: number,
    term: string,
    status: string | undefined,
    count: () => Promise<number>
  ): Promise<number> {
    const v = await this.db.scopeVersions(resellerId)
    const version = `${v.reseller}|${v.catalogue}`
    const key = `${resellerId} ${status ?? ''} ${term}`
    const hit = this.kept.get(key)
    if (hit && hit.version === version) return hit.total
    const total = await count()
    this.kept.delete(key)
    if (this.kept.size >= MAX_TOTALS) this.kept.delete(this.kept.keys().next().value as string)
    this.kept.set(key, { version, total })
    return total
  }
}
