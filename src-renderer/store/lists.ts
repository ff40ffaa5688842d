/**
 * The paged lists (orders, invoices, the credit ledger): server-side filters and sort orders,
 * pages of 100 rows read by key from the neighbouring page (constant time at any depth) or, for
 * a jump, by position, and only the pages near the rows in view kept in memory.
 */
import type { InvoiceView, TransactionView } from '../../src-preload/contract'
import type {
  ListFilter,
  ListQuery,
  OrderListRow,
  OrderSort,
  OrderViewCounts,
  RowKey
} from '../../src-shared/list-records'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice, type Store } from './slice'

export const PAGE_SIZE = 100
/** Pages kept on each side of the rows in view; farther ones are dropped (tab memory stays flat). */
export const KEEP_PAGES = 15
export type ListName = 'orders' | 'invoices' | 'transactions'
export interface ListState<T> {
  filter: ListFilter
  sort?: OrderSort
  dir?: 'asc' | 'desc'
  total: number
  pages: Record<number, T[]>
  /** The first and last key of each loaded page: the next page is read after or before them. */
  edges: Record<number, [RowKey, RowKey]>
  /** Grows with every new filter or sort: a list shows its top again, and stale pages are dropped. */
  version: number
  loaded: boolean
  error: string | null
}
export interface ListsSlice {
  orders: ListState<OrderListRow>
  /** How many orders each saved view of the orders list holds; null until read. */
  orderViewCounts: OrderViewCounts | null
  loadOrderViewCounts(): Promise<void>
  invoices: ListState<InvoiceView>
  transactions: ListState<TransactionView>
  setListFilter(name: ListName, filter: ListFilter, order?: { sort?: OrderSort; dir?: 'asc' | 'desc' }): Promise<void>
  /** Loads page `index` unless it is there; drops pages farther than KEEP_PAGES from `center`. */
  loadPage(name: ListName, index: number, center?: number): Promise<void>
}

const emptyList = <T>(): ListState<T> => ({
  filter: {},
  total: 0,
  pages: {},
  edges: {},
  version: 0,
  loaded: false,
  error: null
})
const inflight = new Set<string>()

const fetchers = {
  orders: (r: number, q: ListQuery) => bridge.orderPage(r, q),
  invoices: (r: number, q: ListQuery) => bridge.invoicePage(r, q),
  transactions: (r: number, q: ListQuery) => bridge.ledgerPage(r, q)
}

export const listsSlice: Slice<ListsSlice> = (set, get) => ({
  orders: emptyList(),
  invoices: emptyList(),
  transactions: emptyList(),
  orderViewCounts: null,
  async loadOrderViewCounts() {
    try {
      const counts = await bridge.orderViewCounts(rid(get))
      set({ orderViewCounts: counts })
    } catch {
      // The list's own error says what went wrong; a count shows "…" until it can be read.
    }
  },
  async setListFilter(name, filter, order) {
    const prev = get()[name]
    const version = prev.version + 1
    set({
      [name]: {
        ...emptyList(),
        filter,
        sort: order ? order.sort : prev.sort,
        dir: order ? order.dir : prev.dir,
        total: prev.total,
        version
      }
    } as Partial<Store>)
    await get().loadPage(name, 0, 0)
  },
  async loadPage(name, index, center = index) {
    const list = get()[name]
    const key = `${name}:${list.version}:${index}`
    if (list.pages[index] || inflight.has(key) || get().resellerId === null) return
    inflight.add(key)
    try {
      const q: ListQuery = {
        filter: list.filter,
        sort: name === 'orders' ? list.sort : undefined,
        dir: name === 'orders' ? list.dir : undefined,
        position: index * PAGE_SIZE,
        limit: PAGE_SIZE
      }
      // A neighbour's edge makes the read a range of the index, however deep the page is.
      const before = list.edges[index - 1]
      const after = list.edges[index + 1]
      if (before) q.after = before[1]
      else if (after) q.before = after[0]
      const page = await fetchers[name](rid(get), q)
      const now = get()[name]
      // A filter changed while this page was on its way: drop the stale answer.
      if (now.version !== list.version) return
      const pages: Record<number, unknown[]> = {}
      const edges: Record<number, [RowKey, RowKey]> = {}
      for (const p of Object.keys(now.pages).map(Number)) {
        if (Math.abs(p - center) > KEEP_PAGES) continue
        pages[p] = now.pages[p]
        edges[p] = now.edges[p]
      }
      if (page.items.length > 0) {
        pages[index] = page.items
        edges[index] = [page.keys[0], page.keys[page.keys.length - 1]]
      }
      set({
        [name]: { ...now, total: page.total, pages, edges, loaded: true, error: null }
      } as Partial<Store>)
    } catch (err) {
      set({ [name]: { ...get()[name], loaded: true, error: errorMessage(err) } } as Partial<Store>)
    } finally {
      inflight.delete(key)
    }
  }
})
