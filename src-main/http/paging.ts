import type { Paging } from '../core/billing/ledger'

/**
 * Page sizes (reseller API v3.0, "Limits": `limit` max 100, default 50). A larger `limit` is
 * served as 100 and `pagination.limit` shows the limit used (docs/decisions.md, "Limits are
 * clamped, not refused"), so a script that asks for "as many as you give" still works.
 */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 100

/**
 * The largest whole number the API reads or writes: 2^53 − 1, the last integer a JSON number
 * carries exactly to a JavaScript client (and the last one SQLite hands back as an exact
 * number). Ids, `offset` and `limit` above it are 400; without the bound, `offset=2^63-1`
 * reached SQLite as 2^63 and failed there as a 500.
 */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER

export const paging = (q: { limit?: number; offset?: number }): Paging => ({
  limit: Math.min(q.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
  offset: q.offset ?? 0
})
