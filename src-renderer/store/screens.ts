/**
 * The event log, the ACME subscription page and the invoice document. Like the order page, each
 * page's data is keyed by the record it is about, and an answer for a record no longer on screen
 * is dropped, so one record's data never shows on another's page.
 */
import type {
  AcmeSubscriptionPageView,
  EventView,
  InvoiceView,
  OrderView,
  SslStatusView
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { latestOnly, rid, type Slice } from './slice'

/** Events per page of the log; the reseller API's default page (reseller API v3.0, "Limits"). */
export const EVENTS_PAGE = 50

export interface EventLogFilter {
  type: string
  /** A day, `YYYY-MM-DD` (UTC): events on or after it. */
  since: string
  /** An order number (`ORD-2026-000042`) or an order id, as typed. */
  order: string
}

export interface EventLogState {
  filter: EventLogFilter
  offset: number
  items: EventView[]
  total: number
  error: string | null
  loading: boolean
}

export interface ScreensSlice {
  eventLog: EventLogState
  /** Loads a page of the log; without arguments, the same filter and page again (the live refresh). */
  loadEvents(filter?: EventLogFilter, offset?: number): Promise<void>
  /** The events of the order on screen, newest first. */
  orderEvents: { orderId: number; items: EventView[] } | null
  loadOrderEvents(orderId: number): Promise<void>
  /** `view` null once `loaded`: the order is not an ACME subscription. */
  acmePage: { orderId: number; loaded: boolean; view: AcmeSubscriptionPageView | null; error: string | null } | null
  /** The subscription behind an order; null when the order is not an ACME subscription. */
  loadAcmePage(orderId: number): Promise<AcmeSubscriptionPageView | null>
  invoicePage: { id: number; invoice: InvoiceView | null; order: OrderView | null; error: string | null } | null
  loadInvoice(id: number): Promise<void>
  /** Drops the order's CSR and checks; it waits for a CSR again. The API's message on failure. */
  cancelValidation(orderId: number): Promise<string | null>
}

const noFilter: EventLogFilter = { type: '', since: '', order: '' }
const eventsLoad = latestOnly()

/**
 * The order id an "order" filter names: an id, or an order number whose last digits are the id
 * (orders.ts numbers orders `ORD-<year>-<id>`). The number is then compared with the order's own.
 */
async function orderOf(resellerId: number, typed: string): Promise<number> {
  const text = typed.trim()
  const m = /^(?:ORD-\d{4}-)?0*([1-9]\d{0,15})$/i.exec(text)
  const id = m ? Number(m[1]) : NaN
  const fail = (): never => {
    throw new Error(`could not filter by order: there is no order ${text} for this reseller`)
  }
  if (!Number.isSafeInteger(id)) return fail()
  const order = await bridge.getOrder(resellerId, id).catch(fail)
  if (/^ORD-/i.test(text) && order.orderNumber.toUpperCase() !== text.toUpperCase()) return fail()
  return order.id
}

export const screensSlice: Slice<ScreensSlice> = (set, get) => ({
  eventLog: { filter: noFilter, offset: 0, items: [], total: 0, error: null, loading: false },
  async loadEvents(filter = get().eventLog.filter, offset = get().eventLog.offset) {
    const latest = eventsLoad()
    set({ eventLog: { ...get().eventLog, filter, offset, loading: true } })
    try {
      const r = rid(get)
      const orderId = filter.order.trim() ? await orderOf(r, filter.order) : undefined
      const page = await bridge.listEvents(
        r,
        { type: filter.type || undefined, since: filter.since || undefined, orderId },
        { limit: EVENTS_PAGE, offset }
      )
      if (latest())
        set({
          eventLog: { filter, offset, items: page.items, total: page.total, error: null, loading: false }
        })
    } catch (err) {
      if (latest()) set({ eventLog: { filter, offset, items: [], total: 0, error: errorMessage(err), loading: false } })
    }
  },
  orderEvents: null,
  async loadOrderEvents(orderId) {
    if (get().orderEvents?.orderId !== orderId) set({ orderEvents: { orderId, items: [] } })
    try {
      const page = await bridge.listEvents(rid(get), { orderId }, { limit: 100, offset: 0 })
      if (get().orderEvents?.orderId === orderId) set({ orderEvents: { orderId, items: page.items } })
    } catch {
      // The order's own error (not found, signed out) is what its page shows.
    }
  },
  acmePage: null,
  async loadAcmePage(orderId) {
    if (get().acmePage?.orderId !== orderId) set({ acmePage: { orderId, loaded: false, view: null, error: null } })
    try {
      const view = await bridge.acmeSubscription(rid(get), orderId)
      if (get().acmePage?.orderId === orderId) set({ acmePage: { orderId, loaded: true, view, error: null } })
      return view
    } catch (err) {
      if (get().acmePage?.orderId === orderId)
        set({ acmePage: { orderId, loaded: true, view: null, error: errorMessage(err) } })
      return null
    }
  },
  invoicePage: null,
  async loadInvoice(id) {
    if (get().invoicePage?.id !== id) set({ invoicePage: { id, invoice: null, order: null, error: null } })
    try {
      const r = rid(get)
      const invoice = await bridge.getInvoice(r, id)
      const order = await bridge.getOrder(r, invoice.orderId)
      if (get().invoicePage?.id === id) set({ invoicePage: { id, invoice, order, error: null } })
    } catch (err) {
      if (get().invoicePage?.id === id)
        set({ invoicePage: { id, invoice: null, order: null, error: errorMessage(err) } })
    }
  },
  async cancelValidation(orderId) {
    try {
      const ssl: SslStatusView = await bridge.cancelValidation(rid(get), orderId)
      if (get().orderId === orderId) set({ ssl, order: ssl.order })
      get().toast('ok', `Validation of ${ssl.order.orderNumber} cancelled; the order waits for a CSR again`)
      void get().loadOrderEvents(orderId)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  }
})
