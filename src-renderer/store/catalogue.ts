/** The catalogue with the acting reseller's group prices. */
import type { ProductFilter, ProductView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice } from './slice'

export interface CatalogueSlice {
  products: ProductView[]
  productFilter: ProductFilter
  productsError: string | null
  loadProducts(filter?: ProductFilter): Promise<void>
}

/** Grows with every load: an answer to a load that another has followed since is dropped. */
let productsSeq = 0

export const catalogueSlice: Slice<CatalogueSlice> = (set, get) => ({
  products: [],
  productFilter: {},
  productsError: null,
  async loadProducts(filter = get().productFilter) {
    const seq = ++productsSeq
    set({ productFilter: filter })
    try {
      const products = await bridge.listProducts(rid(get), filter)
      if (seq === productsSeq) set({ products, productsError: null })
    } catch (err) {
      if (seq === productsSeq) set({ products: [], productsError: errorMessage(err) })
    }
  }
})
