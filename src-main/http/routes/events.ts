/**
 * GET /events: the reseller's event log, newest first. The spec shows no events ("Events: not
 * shown"), so this endpoint follows the spec's envelope and paging: `type` and `since` filter,
 * `limit` (default 50, clamped to 100) and `offset` page, `pagination` says what was used.
 */
import { Type } from '@sinclair/typebox'
import { invalid } from '../../core/errors'
import { EVENT_TYPES } from '../../core/events'
import type { Service } from '../../core/service'
import { isValidDate, parseDate } from '../../core/time'
import { caller } from '../auth'
import { paging } from '../paging'
import { eventJson, paginationJson } from '../present'
import type { ApiRouter } from '../router'
import { EventJson, ok, Pagination, PagingQuery, StringEnum } from '../schemas'
import { ErrorRef } from './common'

const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/

/** `since`: a day (`YYYY-MM-DD`, from its start) or a timestamp (`YYYY-MM-DD HH:MM:SS`, UTC). */
function sinceOf(s: string | undefined): Date | undefined {
  if (s === undefined) return undefined
  if (isValidDate(s)) return parseDate(s)
  if (TIMESTAMP_RE.test(s)) {
    try {
      return parseDate(s)
    } catch {
      // falls through to the message below
    }
  }
  throw invalid('since must be a day (YYYY-MM-DD) or a UTC timestamp (YYYY-MM-DD HH:MM:SS)')
}

export function registerEventRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/events',
    {
      summary: 'Event log (orders, validation, certificates, deploys), newest first',
      querystring: Type.Object({
        type: Type.Optional(StringEnum(EVENT_TYPES)),
        since: Type.Optional(
          Type.String({ description: 'YYYY-MM-DD or YYYY-MM-DD HH:MM:SS (UTC); events at or after it' })
        ),
        order_id: Type.Optional(Type.Integer({ minimum: 1 })),
        ...PagingQuery
      }),
      response: { 200: ok({ events: Type.Array(EventJson), pagination: Pagination }), ...ErrorRef }
    },
    async (request) => {
      const q = request.query
      const page = service.events.list(
        caller(request).id,
        { type: q.type, since: sinceOf(q.since), orderId: q.order_id },
        paging(q)
      )
      return { success: true as const, events: page.items.map(eventJson), pagination: paginationJson(page) }
    }
  )
}
