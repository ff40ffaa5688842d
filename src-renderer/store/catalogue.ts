/** The catalogue with the acting reseller's group prices. */
import type { ProductFilter, ProductView } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { latestOnly, rid, type Slice } from './slice'

export interface CatalogueSlice {
  products: ProductView[]
  productFilter: ProductFilter
  productsError: string | null
  loadProducts(filter?: ProductFilter): Promise<void>
}

/** Only the latest load's answer is shown. */
const productsLoad = latestOnly()

export const catalogueSlice: Slice<CatalogueSlice> = (set, get) => ({
  products: [],
  productFilter: {},
  productsError: null,
  async loadProducts(filter = get().productFilter) {
    const latest = productsLoad()
    set({ productFilter: filter })
    try {
      const products = await bridge.listProducts(rid(get), filter)
      if (latest()) set({ products, productsError: null })
    } catch (err) {
      if (latest()) set({ products: [], productsError: errorMessage(err) })
    }
  }
})
