/**
 * GET /events: the reseller's event log, newest first. The spec shows no events ("Events: not
 * shown"), so this endpoint follows the spec's envelope and paging: `type` and `since` filter,
 * `limit` (default 50, clamped to 100) and `offset` page, `pagination` says what was used.
 */
import { invalid } from '../../core/errors'
import type { Service } from '../../core/service'
import { isValidDate, parseDate } from '../../core/time'
import { caller } from '../auth'
import { paging } from '../paging'
import { eventJson, paginationJson } from '../present'
import type { ApiRouter } from '../router'
import { EventListResponse, EventQuery, SINCE_MESSAGE } from '../schemas'

/** `since`: a day (`YYYY-MM-DD`, from its start) or a timestamp (`YYYY-MM-DD HH:MM:SS`, UTC). */
function sinceOf(s: string | undefined): Date | undefined {
  if (s === undefined) return undefined
  if (isValidDate(s)) return parseDate(s)
  if (s.length > 10) {
    try {
      return parseDate(s)
    } catch {
      // falls through to the message below
    }
  }
  throw invalid(SINCE_MESSAGE)
}

export function registerEventRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/events',
    {
      operationId: 'listEvents',
      tags: ['Events'],
      summary: 'List what happened to your orders, newest first',
      description:
        'Your event log: orders placed, paid and cancelled, validations, certificates issued, reissued and about to expire, deploys and installation checks. Filter by type, moment and order; page with limit and offset.',
      querystring: EventQuery,
      response: { 200: EventListResponse }
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
