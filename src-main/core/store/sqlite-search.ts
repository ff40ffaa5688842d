/**
 * The SQLite engine's `?domain=` search (GET /orders; orders/order-search.ts keeps the terms and
 * totals every engine shares): the trigram index of migration 0013 for terms it can answer, a
 * LIKE scan of the caller's orders for the others.
 */
import type { DomainQuery, SqlArg } from './port'

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

/** The SQLite engine's `domainQuery` (FTS5 trigram index; sqlite-engine.ts). */
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
