/**
 * GET /orders?domain=: a case-insensitive substring of the order's domain (reseller API v3.0,
 * "List orders"; docs/decisions.md, "`?domain=` is a substring"). Terms the trigram index of
 * migration 0013 can answer are looked up there as one FTS5 phrase, with the caller's owner
 * token beside it, so the page and its total come from the index alone; the others (shorter
 * than a trigram, or not printable ASCII) take a LIKE scan of the caller's orders.
 */
import { domainToASCII } from 'node:url'
import type { DomainQuery, SqlArg, Store } from '../store'

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

/**
 * Whether `term` goes to the index. A trigram index has no entry for fewer than three
 * characters. Only printable ASCII: the index folds case with Unicode's tables and LIKE only
 * ASCII letters, so a term with other characters could match differently; domains are stored
 * as ASCII (A-labels), so such a term is rare and the scan answers it exactly.
 */
export const usesSearchIndex = (term: string): boolean => term.length >= 3 && /^[\x20-\x7e]+$/.test(term)

/**
 * The FTS5 query for `term` owned by `resellerId`. Inside a double-quoted FTS5 string every
 * character is text, not syntax (`*`, `OR`, `NEAR(`, `:`, `^` included); a double quote in it is
 * written twice (sqlite.org/fts5.html, section 3.1, "FTS5 Strings").
 */
export const searchPhrase = (term: string, resellerId: number): string =>
  `domain : "${term.replace(/"/g, '""')}" AND owner : "#${resellerId}#"`

/** The SQLite engine's `domainQuery` (FTS5 trigram index; store/sqlite-engine.ts). */
export function domainQuery(resellerId: number, term: string, status: string | undefined): DomainQuery {
  if (usesSearchIndex(term)) {
    const match = searchPhrase(term, resellerId)
    // The index hands out rowids newest first by itself, so a page stops after offset + limit
    // entries; the status, when asked for, is read from each candidate's order row.
    const from = status
      ? `orders_search s JOIN orders o ON o.id = s.rowid AND o.status = ? WHERE s.orders_search MATCH ?`
      : `orders_search s WHERE s.orders_search MATCH ?`
    const args: SqlArg[] = status ? [status, match] : [match]
    return {
      page: { sql: `SELECT s.rowid AS id FROM ${from} ORDER BY s.rowid DESC LIMIT ? OFFSET ?`, args },
      count: { sql: `SELECT COUNT(*) AS n FROM ${from}`, args }
    }
  }
  // LIKE with its wildcards escaped: the term is text, never a pattern.
  const where = `o.reseller_id = ?${status ? ' AND o.status = ?' : ''} AND o.domain LIKE ? ESCAPE '\\'`
  const args: SqlArg[] = [resellerId, ...(status ? [status] : []), `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]
  return {
    page: { sql: `SELECT o.id FROM orders o WHERE ${where} ORDER BY o.id DESC LIMIT ? OFFSET ?`, args },
    count: { sql: `SELECT COUNT(*) AS n FROM orders o WHERE ${where}`, args }
  }
}

/**
 * The SQLite engine's `domainMatch`: the trigram index of migration 0013 for terms it can
 * answer (one FTS5 phrase: its characters are text, not syntax), an escaped LIKE scan otherwise.
 */
export function domainMatch(term: string): { sql: string; args: SqlArg[] } {
  return usesSearchIndex(term)
    ? {
        sql: 'o.id IN (SELECT rowid FROM orders_search WHERE orders_search MATCH ?)',
        args: [`domain : "${term.replace(/"/g, '""')}"`]
      }
    : { sql: `o.domain LIKE ? ESCAPE '\\'`, args: [`%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`] }
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
