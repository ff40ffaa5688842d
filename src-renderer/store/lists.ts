/**
 * The paged lists (orders, invoices, the credit ledger): server-side filters, pages fetched as
 * they scroll in, and every row of a list under its filter for CSV export.
 */
import type {
  InvoiceStatus,
  InvoiceView,
  OrderFilter,
  OrderStatus,
  OrderView,
  PageView,
  TransactionView
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice, type Store } from './slice'

export const PAGE_SIZE = 100
export type ListName = 'orders' | 'invoices' | 'transactions'
export interface ListState<T> {
  filter: { status?: string; domain?: string }
  total: number
  pages: Record<number, T[]>
  version: number
  error: string | null
}
export interface ListsSlice {
  orders: ListState<OrderView>
  invoices: ListState<InvoiceView>
  transactions: ListState<TransactionView>
  setListFilter(name: ListName, filter: ListState<unknown>['filter']): Promise<void>
  loadPage(name: ListName, index: number): Promise<void>
  /** Every row of a list under its filter, page by page, for CSV export. */
  exportList(name: ListName, progress: (done: number, total: number) => void): Promise<unknown[]>
}

const emptyList = <T>(): ListState<T> => ({ filter: {}, total: 0, pages: {}, version: 0, error: null })
const inflight = new Set<string>()

const fetchers: Record<
  ListName,
  (resellerId: number, filter: ListState<unknown>['filter'], offset: number) => Promise<PageView<unknown>>
> = {
  orders: (r, f, offset) =>
    bridge.listOrders(r, { status: f.status as OrderStatus | undefined, domain: f.domain } satisfies OrderFilter, {
      limit: PAGE_SIZE,
      offset
    }),
  invoices: (r, f, offset) =>
    bridge.listInvoices(r, { status: f.status as InvoiceStatus | undefined }, { limit: PAGE_SIZE, offset }),
  transactions: (r, _f, offset) => bridge.listTransactions(r, { limit: PAGE_SIZE, offset })
}

export const listsSlice: Slice<ListsSlice> = (set, get) => ({
  orders: emptyList(),
  invoices: emptyList(),
  transactions: emptyList(),
  async setListFilter(name, filter) {
    const version = get()[name].version + 1
    set({ [name]: { ...emptyList(), filter, version } } as Partial<Store>)
    await get().loadPage(name, 0)
  },
  async loadPage(name, index) {
    const list = get()[name]
    const key = `${name}:${list.version}:${index}`
    if (list.pages[index] || inflight.has(key) || get().resellerId === null) return
    inflight.add(key)
    try {
      const page = await fetchers[name](rid(get), list.filter, index * PAGE_SIZE)
      const now = get()[name]
      // A filter changed while this page was on its way: drop the stale answer.
      if (now.version !== list.version) return
      set({
        [name]: { ...now, total: page.total, pages: { ...now.pages, [index]: page.items }, error: null }
      } as Partial<Store>)
    } catch (err) {
      set({ [name]: { ...get()[name], error: errorMessage(err) } } as Partial<Store>)
    } finally {
      inflight.delete(key)
    }
  },
  async exportList(name, progress) {
    const filter = get()[name].filter
    const rows: unknown[] = []
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const page = await fetchers[name](rid(get), filter, offset)
      rows.push(...page.items)
      progress(rows.length, page.total)
      if (page.items.length === 0 || rows.length >= page.total) return rows
    }
  }
})
