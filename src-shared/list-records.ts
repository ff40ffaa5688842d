/**
 * The desktop lists paged by key, and their CSV exports: what the renderer asks for (a list, its
 * filter, its sort order, a position or the key of a neighbouring row) and what comes back.
 * Every field is bounded, so a hostile value is refused by the bridge's argument check before
 * it reaches a query.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { CreditTransaction, OrderView } from './account-records'
import { Verdict } from './installation-records'
import { InvoiceStatus, Nullable, OneOf, OrderStatus } from './schema-kit'

export const LIST_NAMES = ['orders', 'invoices', 'transactions'] as const
export const ORDER_SORTS = ['date', 'domain', 'status', 'expiry', 'renewal'] as const
/**
 * The orders list's saved views, each a question a reseller comes back to: which orders wait
 * for domain validation, which renew within RENEWAL_VIEW_DAYS, whose servers present something
 * wrong, which are not paid yet.
 */
export const ORDER_VIEWS = ['needs_validation', 'renewal_due', 'installation_problems', 'unpaid'] as const
/** The "renewal due" view's horizon, in days from today (UTC). */
export const RENEWAL_VIEW_DAYS = 30
export const SORT_DIRECTIONS = ['asc', 'desc'] as const
/** The most rows one keyset page carries. */
export const MAX_PAGE_ROWS = 500

export const ListName = OneOf(LIST_NAMES)
export type ListName = Static<typeof ListName>
export const OrderSort = OneOf(ORDER_SORTS)
export type OrderSort = Static<typeof OrderSort>
export const OrderListView = OneOf(ORDER_VIEWS)
export type OrderListView = Static<typeof OrderListView>

/** A search term: an order number or part of a domain name. */
const SearchText = Type.String({ maxLength: 253, must: 'must be text of at most 253 characters' })

export const ListFilter = Type.Object(
  {
    status: Type.Optional(Type.Union([OrderStatus, InvoiceStatus], { must: 'must be an order or invoice status' })),
    search: Type.Optional(SearchText),
    unpaid: Type.Optional(Type.Boolean({ must: 'must be true or false' })),
    /** Orders only: one of the saved views, combined with the other fields. */
    view: Type.Optional(OrderListView)
  },
  { additionalProperties: false, must: 'must be { status?, search?, unpaid?, view? }' }
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
/**
 * What the orders list shows of an order beyond the order itself, read with the page (one
 * query for all its rows): validation progress, the next renewal and the installation verdict.
 */
export const OrderWorklist = Type.Object({
  /** Names of the order's request and how many of them are validated; 0 and 0 before a CSR. */
  namesTotal: Type.Integer(),
  namesValid: Type.Integer(),
  /** The validation methods its names use, each once, sorted. */
  methods: Type.Array(Type.String()),
  /** The day the order next renews (YYYY-MM-DD), null when it renews never. */
  renewalDue: Nullable(Type.String()),
  /** `reissue`: automatic, inside the paid period; `renewal`: the subscription or certificate ends then. */
  renewalKind: Nullable(OneOf(['reissue', 'renewal'] as const)),
  /** The worst verdict of its servers; null until a check has answered. */
  installVerdict: Nullable(Verdict),
  /** The verdict in words, as the order page says it. */
  installLabel: Nullable(Type.String())
})
export type OrderWorklist = Static<typeof OrderWorklist>
export const OrderListRow = Type.Composite([OrderView, Type.Object({ worklist: OrderWorklist })])
export type OrderListRow = Static<typeof OrderListRow>

/** A row of the credit ledger list: the transaction and the number of the order it is about. */
export const LedgerRow = Type.Composite([CreditTransaction, Type.Object({ orderNumber: Nullable(Type.String()) })])
export type LedgerRow = Static<typeof LedgerRow>

/** How many orders each saved view holds. */
export const OrderViewCounts = Type.Object({
  needs_validation: Type.Integer(),
  renewal_due: Type.Integer(),
  installation_problems: Type.Integer(),
  unpaid: Type.Integer()
})
export type OrderViewCounts = Static<typeof OrderViewCounts>

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
