/** Credit top-ups recorded by the desktop user; the invoices and ledger lists live in ./lists. */
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface BillingSlice {
  /** Records a payment received outside CertDesk; false (and the form kept) on an error. */
  recordTopUp(amountCents: number, description: string): Promise<boolean>
}

export const billingSlice: Slice<BillingSlice> = (_set, get) => ({
  async recordTopUp(amountCents, description) {
    try {
      const tx = await bridge.topUp(rid(get), amountCents, description)
      get().toast('ok', `Top-up recorded; balance ${(tx.balanceAfter / 100).toFixed(2)} USD`)
      void get().refreshResellers()
      void get().setListFilter('transactions', {})
      return true
    } catch (err) {
      get().toast('error', errorMessage(err))
      return false
    }
  }
})
