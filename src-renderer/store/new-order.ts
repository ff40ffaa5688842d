/** The new-order wizard; the draft outlives errors and screen changes. */
import type { OrderView, PaymentMethod, QuoteView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { freshOrderState } from './order'
import { latestOnly, rid, type Slice } from './slice'

export interface Draft {
  productId: number | null
  domain: string
  period: number
  sanCount: number
  sanWildcardCount: number
  contactEmail: string
  payment: PaymentMethod
}
export interface DraftSlice {
  draft: Draft
  quote: QuoteView | null
  quoteError: string | null
  submitting: boolean
  submitError: string | null
  setDraft(patch: Partial<Draft>): void
  submitOrder(): Promise<OrderView | null>
}

const emptyDraft: Draft = {
  productId: null,
  domain: '',
  period: 12,
  sanCount: 0,
  sanWildcardCount: 0,
  contactEmail: '',
  payment: 'credit'
}

/** Only the latest quote is shown, whatever order the answers come in. */
const quoteCall = latestOnly()

export const draftSlice: Slice<DraftSlice> = (set, get) => ({
  draft: emptyDraft,
  quote: null,
  quoteError: null,
  submitting: false,
  submitError: null,
  setDraft(patch) {
    const draft = { ...get().draft, ...patch }
    set({ draft, submitError: null })
    if (draft.productId === null) return set({ quote: null, quoteError: null })
    const latest = quoteCall()
    // The live price is the core's own quote (Orders.quote): the same numbers the order will charge.
    bridge
      .quoteOrder(rid(get), {
        productId: draft.productId,
        domain: draft.domain.trim() || undefined,
        period: draft.period,
        sanCount: draft.sanCount,
        sanWildcardCount: draft.sanWildcardCount,
        contactEmail: draft.contactEmail.trim() || undefined
      })
      .then((quote) => latest() && set({ quote, quoteError: null }))
      .catch((err: unknown) => latest() && set({ quoteError: errorMessage(err) }))
  },
  async submitOrder() {
    const d = get().draft
    if (d.productId === null) return null
    set({ submitting: true, submitError: null })
    try {
      const r = await bridge.createOrder(
        rid(get),
        {
          productId: d.productId,
          domain: d.domain.trim(),
          period: d.period,
          sanCount: d.sanCount,
          sanWildcardCount: d.sanWildcardCount,
          contactEmail: d.contactEmail.trim() || undefined
        },
        d.payment
      )
      // Only a placed order clears the form; on an error everything typed stays. The new order's
      // page starts empty: nothing of the order looked at before carries over.
      set({
        submitting: false,
        draft: { ...emptyDraft, productId: d.productId, period: d.period },
        quote: null,
        ...freshOrderState(r.order.id),
        order: r.order
      })
      get().toast('ok', `Order ${r.order.orderNumber} placed`)
      void get().refreshResellers()
      void get().setListFilter('orders', get().orders.filter)
      return r.order
    } catch (err) {
      set({ submitting: false, submitError: errorMessage(err) })
      return null
    }
  }
})
