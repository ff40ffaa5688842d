/**
 * The desktop lists paged by key, and their CSV exports: what the renderer asks for (a list, its
 * filter, its sort order, a position or the key of a neighbouring row) and what comes back.
 * Every field is bounded, so a hostile value is refused by the bridge's argument check before
 * it reaches a query.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { InvoiceStatus, Nullable, OneOf, OrderStatus } from './schema-kit'

export const LIST_NAMES = ['orders', 'invoices', 'transactions'] as const
export const ORDER_SORTS = ['date', 'domain', 'status', 'expiry'] as const
export const SORT_DIRECTIONS = ['asc', 'desc'] as const
/** The most rows one keyset page carries. */
export const MAX_PAGE_ROWS = 500

export const ListName = OneOf(LIST_NAMES)
export type ListName = Static<typeof ListName>
export const OrderSort = OneOf(ORDER_SORTS)
export type OrderSort = Static<typeof OrderSort>

/** A search term: an order number or part of a domain name. */
const SearchText = Type.String({ maxLength: 253, must: 'must be text of at most 253 characters' })

export const ListFilter = Type.Object(
  {
    status: Type.Optional(Type.Union([OrderStatus, InvoiceStatus], { must: 'must be an order or invoice status' })),
    search: Type.Optional(SearchText),
    unpaid: Type.Optional(Type.Boolean({ must: 'must be true or false' }))
  },
  { additionalProperties: false, must: 'must be { status?, search?, unpaid? }' }
)
export type ListFilter = Static<typeof ListFilter>

/** The sort key and id of a row: the next page starts after it (or ends before it). */
export const RowKey = Type.Object(
  {
    key: Nullable(Type.Union([Type.String({ maxLength: 300 }), Type.Integer()])),
    id: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
  },
  { additionalProperties: false, must: 'must be { key, id } of a row' }
)
export type RowKey = Static<typeof RowKey>

export const ListQuery = Type.Object(
  {
    filter: ListFilter,
    sort: Type.Optional(OrderSort),
    dir: Type.Optional(OneOf(SORT_DIRECTIONS)),
    /** Where the page starts in the whole list (0 = first row). */
    position: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, must: 'must be 0 or more' }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_ROWS, must: `must be 1 to ${MAX_PAGE_ROWS}` }),
    /** The last row of the page before: the page is read after it, in constant time. */
    after: Type.Optional(RowKey),
    /** The first row of the page after: the page is read before it. */
    before: Type.Optional(RowKey)
  },
  { additionalProperties: false, must: 'must be { filter, sort?, dir?, position, limit, after?, before? }' }
)
export type ListQuery = Static<typeof ListQuery>

export const KeyedPageOf = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    keys: Type.Array(RowKey),
    total: Type.Integer(),
    position: Type.Integer()
  })
/** One page of a list: its rows, each row's key, the list's total and where the page starts. */
export interface KeyedPage<T> {
  items: T[]
  keys: RowKey[]
  total: number
  position: number
}

export const ExportRequest = Type.Object(
  {
    list: ListName,
    filter: ListFilter,
    sort: Type.Optional(OrderSort),
    dir: Type.Optional(OneOf(SORT_DIRECTIONS)),
    path: Type.String({ minLength: 1, maxLength: 4096, must: 'must be a file path' })
  },
  { additionalProperties: false, must: 'must be { list, filter, sort?, dir?, path }' }
)
export type ExportRequest = Static<typeof ExportRequest>

export const ExportJobView = Type.Object({
  id: Type.Integer(),
  list: ListName,
  path: Type.String(),
  state: OneOf(['running', 'done', 'cancelled', 'failed'] as const),
  rows: Type.Integer(),
  total: Type.Integer(),
  /** Seconds left at the current rate; null until there is a rate. */
  secondsLeft: Nullable(Type.Number()),
  error: Nullable(Type.String()),
  startedAt: Type.String()
})
export type ExportJobView = Static<typeof ExportJobView>

/** Where an export may be written: the path the save dialog answered, or a suggestion to edit. */
export const ExportTarget = Type.Object({ path: Nullable(Type.String()), dialog: Type.Boolean() })
export type ExportTarget = Static<typeof ExportTarget>
