/**
 * Orders as built from their rows, kept between list calls. A reseller's next order shifts each
 * of its pages by one, so every page it had is rebuilt; reading fifty orders of thirty columns
 * for that cost more than placing the order. Migration 0009 keeps a number per order
 * (order_versions) that moves with every change to the order's row or its invoice, and the
 * catalogue's version covers the product names: a page reads from the store only the orders
 * whose number moved since they were kept, usually the one new order.
 */
import type { Page } from '../billing/ledger'
import type { Order } from '../../../src-shared/records'
import type { Store } from '../store'

/** Orders kept at most (about 1 kB each, and as much again for their JSON); past it the oldest kept go first. */
const MAX_KEPT = 5_000

/** An order of a page as the store names it: its id and its number in order_versions. */
export type OrderRef = [id: number, version: number]

export class OrderCache {
  private catalogue: string | null = null
  private readonly kept = new Map<number, { version: number; order: Readonly<Order> }>()

  constructor(private readonly db: Store) {}

  /**
   * The orders of `refs`, in their order: kept ones whose number is unchanged, the others from
   * `load`. Call it in the read transaction that produced `refs`, so that what `load` reads is
   * the same snapshot of the store.
   */
  async resolve(refs: OrderRef[], load: (ids: number[]) => Promise<Order[]>): Promise<Order[]> {
    const catalogue = await this.db.catalogueVersion()
    if (catalogue !== this.catalogue) {
      this.kept.clear()
      this.catalogue = catalogue
    }
    const missing = refs.filter(([id, version]) => this.kept.get(id)?.version !== version).map(([id]) => id)
    const loaded = new Map(missing.length > 0 ? (await load(missing)).map((o) => [o.id, o]) : [])
    // Another call saw a newer catalogue while this one loaded: keep nothing read at the older one.
    const keep = this.catalogue === catalogue
    return refs.map(([id, version]) => {
      const fresh = loaded.get(id)
      if (!fresh) {
        const kept = this.kept.get(id)
        if (!kept || kept.version !== version)
          throw new Error(`could not list orders: order ${id} vanished while the page was read`)
        return kept.order as Order
      }
      if (!keep) return fresh
      this.kept.delete(id)
      if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as number)
      // Shared by every later page that shows it: nobody may change it in place.
      this.kept.set(id, { version, order: Object.freeze(fresh) })
      return fresh
    })
  }
}

/**
 * The newest-first order pages of one reseller after one more order, from its pages just before
 * it. The new order has the highest id of all (orders.ts numbers them so), so it heads the list
 * and every other order moves down one place: page [k, k+limit) is now the order that stood at
 * k-1 followed by the first limit-1 orders of the old page, and the total is one more. The order
 * at k-1 comes from another page of the same moment or else from `orderAt(k)` (its place in the
 * new list); a page for which neither has it gets no new version (null) and is read again when
 * asked for. A page that started past the last order (offset > total) stays empty.
 */
export async function pagesAfterOrder(
  pages: readonly Page<Order>[],
  order: Order,
  orderAt: (index: number) => Promise<Order | null>
): Promise<(Page<Order> | null)[]> {
  const at = async (i: number): Promise<Order | null> => {
    for (const p of pages) if (i >= p.offset && i < p.offset + p.items.length) return p.items[i - p.offset]
    return orderAt(i + 1)
  }
  const after: (Page<Order> | null)[] = []
  for (const p of pages) {
    // Past the end before and after: still no order on it, one more in all.
    if (p.offset > p.total) {
      after.push({ items: [], total: p.total + 1, limit: p.limit, offset: p.offset })
      continue
    }
    const head = p.offset === 0 ? order : await at(p.offset - 1)
    after.push(
      head
        ? { items: [head, ...p.items].slice(0, p.limit), total: p.total + 1, limit: p.limit, offset: p.offset }
        : null
    )
  }
  return after
}
