/**
 * GET /events. The spec shows no events (reseller API v3.0, "Events": not shown); this follows
 * its envelope and paging.
 */
import { Type } from '@sinclair/typebox'
import { EVENT_TYPES } from '../../core/events'
import { INVALID_MESSAGE } from '../validators'
import { Id, Nullable, ok, Pagination, PagingQuery, Query, StringEnum, Timestamp } from './kit'

/** `since`: a day from its start, or a UTC timestamp (`T` and fractions of a second also read). */
export const SINCE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z?)?$'

export const SINCE_MESSAGE = 'since must be a day (YYYY-MM-DD) or a UTC timestamp (YYYY-MM-DD HH:MM:SS)'

export const EventJson = Type.Object(
  {
    id: Id('the event id'),
    type: StringEnum(EVENT_TYPES),
    order_id: Nullable(Id('the order it is about')),
    order_number: Nullable(Type.String()),
    message: Type.String({ description: 'what happened, for a person' }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'details by type; never a secret or a private key' }
    ),
    created_at: Timestamp()
  },
  { title: 'Event' }
)

export const EventQuery = Query({
  type: Type.Optional(StringEnum(EVENT_TYPES, 'Only events of this type.')),
  since: Type.Optional(
    Type.String({
      pattern: SINCE_PATTERN,
      [INVALID_MESSAGE]: SINCE_MESSAGE,
      examples: ['2026-11-01'],
      description:
        'Only events at or after this moment: a day (YYYY-MM-DD, from its start) or a timestamp (YYYY-MM-DD HH:MM:SS), UTC.'
    })
  ),
  order_id: Type.Optional(Id('Only events of this order.')),
  ...PagingQuery
})

export const EventListResponse = ok(
  { events: Type.Array(EventJson), pagination: Pagination },
  { title: 'EventListResponse' }
)
