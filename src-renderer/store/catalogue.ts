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

export const catalogueSlice: Slice<CatalogueSlice> = (set, get) => ({
  products: [],
  productFilter: {},
  productsError: null,
  async loadProducts(filter = get().productFilter) {
    set({ productFilter: filter })
    try {
      set({ products: await bridge.listProducts(rid(get), filter), productsError: null })
    } catch (err) {
      set({ products: [], productsError: errorMessage(err) })
    }
  }
})
