import type { Paging } from '../core/ledger'

/** Design page: default 50 everywhere; a limit above 100 is clamped to 100 and shown as used. */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 100

export const paging = (q: { limit?: number; offset?: number }): Paging => ({
  limit: Math.min(q.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
  offset: q.offset ?? 0
})
