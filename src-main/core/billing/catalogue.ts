/**
 * The catalogue: products, reseller groups and their prices. A product is in a group exactly
 * when the group has prices for it; the caller sees group prices only for its own group.
 */
import { CatalogueCache } from './catalogue-cache'
import type { CoreContext } from '../context'
import { inOrder } from '../pool'
import { forbidden, notFound } from '../errors'
import type { Cents } from './money'
import type { ProductFilter, ProductType, ProductView, ValidationType } from '../../../src-shared/records'
import type { SqlArg, Store } from '../store'

export { PRODUCT_TYPES, VALIDATION_TYPES } from '../../../src-shared/constants'
export type { ProductFilter, ProductType, ProductView, ValidationType } from '../../../src-shared/records'

export interface Product {
  id: number
  name: string
  brand: string
  type: ProductType
  validationType: ValidationType
  domainType: string
  maxYears: number
  warranty: string
  sanEnabled: boolean
  wildcardSanEnabled: boolean
  includedSans: number
  maxSans: number
  description: string
  fulfillment: 'certificate' | 'acme_subscription'
  acmeType: 'caas' | 'ais' | null
  wildcardOnly: boolean
}

export interface YearPrice {
  price: Cents
  sanPrice: Cents
  wildcardSanPrice: Cents
}

/** Prices keyed by year count. */
export type PriceTable = Record<number, YearPrice>

export interface PricedProduct extends Product {
  listPricing: PriceTable
  pricing: PriceTable
}

export interface Group {
  id: number
  name: string
  description: string
}

interface ProductRow {
  id: number
  name: string
  brand: string
  type: ProductType
  validation_type: ValidationType
  domain_type: string
  max_years: number
  warranty: string
  san_enabled: number
  wildcard_san_enabled: number
  included_sans: number
  max_sans: number
  description: string
  fulfillment: 'certificate' | 'acme_subscription'
  acme_type: 'caas' | 'ais' | null
  wildcard_only: number
}

const LIST_GROUP = 0

const toProduct = (r: ProductRow): Product => ({
  id: r.id,
  name: r.name,
  brand: r.brand,
  type: r.type,
  validationType: r.validation_type,
  domainType: r.domain_type,
  maxYears: r.max_years,
  warranty: r.warranty,
  sanEnabled: r.san_enabled === 1,
  wildcardSanEnabled: r.wildcard_san_enabled === 1,
  includedSans: r.included_sans,
  maxSans: r.max_sans,
  description: r.description,
  fulfillment: r.fulfillment,
  acmeType: r.acme_type,
  wildcardOnly: r.wildcard_only === 1
})

/** Code-signing and EV code-signing never auto-reissue (spec, "What the service does"). */
export const autoReissues = (p: Product): boolean => p.type !== 'code-signing'

export const isAcmeProduct = (p: Product): boolean => p.fulfillment === 'acme_subscription'

export class Catalogue {
  private readonly db: Store
  private readonly cache: CatalogueCache

  constructor(ctx: CoreContext) {
    this.db = ctx.store
    this.cache = new CatalogueCache(ctx.store)
  }

  async groups(): Promise<Group[]> {
    return (await this.db.all('SELECT id, name, description FROM reseller_groups ORDER BY id')) as Group[]
  }

  async group(id: number): Promise<Group | undefined> {
    return (await this.db.get('SELECT id, name, description FROM reseller_groups WHERE id = ?', id)) as
      Group | undefined
  }

  /** All products with list prices, for the admin's own view. */
  async allProducts(): Promise<(Product & { listPricing: PriceTable })[]> {
    const rows = (await this.db.all('SELECT * FROM products ORDER BY id')) as ProductRow[]
    return inOrder(rows, async (r) => ({ ...toProduct(r), listPricing: await this.prices(r.id, LIST_GROUP) }))
  }

  /** The products of `groupId`, filtered, with list and group prices. */
  async list(groupId: number | null, filter: ProductFilter = {}): Promise<PricedProduct[]> {
    const gid = requireGroup(groupId)
    const key = JSON.stringify(['list', gid, filter.brand, filter.type, filter.validation, filter.includeAcme === true])
    return await this.cache.get(key, async () => await this.load(gid, filter))
  }

  private async load(gid: number, filter: ProductFilter): Promise<PricedProduct[]> {
    const where = ['EXISTS (SELECT 1 FROM product_prices pp WHERE pp.product_id = p.id AND pp.group_id = ?)']
    const args: SqlArg[] = [gid]
    if (filter.brand !== undefined) {
      // ASCII case folded on both engines (brands are ASCII names).
      where.push('LOWER(p.brand) = LOWER(?)')
      args.push(filter.brand)
    }
    if (filter.type !== undefined) {
      where.push('p.type = ?')
      args.push(filter.type)
    }
    if (filter.validation !== undefined) {
      where.push('p.validation_type = ?')
      args.push(filter.validation)
    }
    // Subscription products are listed only when asked for (spec, GET /products `include`).
    if (!filter.includeAcme) where.push("p.fulfillment = 'certificate'")
    const rows = (await this.db.all(
      `SELECT p.* FROM products p WHERE ${where.join(' AND ')} ORDER BY p.id`,
      ...args
    )) as ProductRow[]
    const priced = await this.pricesFor(
      rows.map((r) => r.id),
      gid
    )
    return rows.map((r) => ({
      ...toProduct(r),
      listPricing: priced.list.get(r.id) ?? {},
      pricing: priced.group.get(r.id) ?? {}
    }))
  }

  /** One product as the caller's group sees it: 404 when it does not exist, 403 outside the group. */
  async product(groupId: number | null, productId: number): Promise<PricedProduct> {
    const gid = requireGroup(groupId)
    return await this.cache.get(
      JSON.stringify(['product', gid, productId]),
      async () => await this.loadProduct(gid, productId)
    )
  }

  private async loadProduct(gid: number, productId: number): Promise<PricedProduct> {
    const row = (await this.db.get('SELECT * FROM products WHERE id = ?', productId)) as ProductRow | undefined
    if (!row) throw notFound(`product ${productId} not found`)
    const pricing = await this.prices(productId, gid)
    if (Object.keys(pricing).length === 0) {
      throw forbidden(`product ${productId} is not available to your reseller group`)
    }
    return { ...toProduct(row), listPricing: await this.prices(productId, LIST_GROUP), pricing }
  }

  private async prices(productId: number, groupId: number): Promise<PriceTable> {
    return (await this.pricesFor([productId], groupId)).group.get(productId) ?? {}
  }

  private async pricesFor(
    productIds: number[],
    groupId: number
  ): Promise<{ list: Map<number, PriceTable>; group: Map<number, PriceTable> }> {
    const list = new Map<number, PriceTable>()
    const group = new Map<number, PriceTable>()
    if (productIds.length === 0) return { list, group }
    const rows = (await this.db.all(
      `SELECT product_id, group_id, years, price_cents, san_price_cents, wildcard_san_price_cents
         FROM product_prices WHERE group_id IN (0, ?) AND product_id IN (${productIds.map(() => '?').join(',')})
         ORDER BY years`,
      groupId,
      ...productIds
    )) as {
      product_id: number
      group_id: number
      years: number
      price_cents: number
      san_price_cents: number
      wildcard_san_price_cents: number
    }[]
    for (const r of rows) {
      const target = r.group_id === LIST_GROUP ? list : group
      const table = target.get(r.product_id) ?? {}
      table[r.years] = {
        price: r.price_cents,
        sanPrice: r.san_price_cents,
        wildcardSanPrice: r.wildcard_san_price_cents
      }
      target.set(r.product_id, table)
    }
    // The list group asked for as a group (never by a reseller) is the list itself.
    if (groupId === LIST_GROUP) for (const [k, v] of list) group.set(k, v)
    return { list, group }
  }
}

function requireGroup(groupId: number | null): number {
  // Spec, Authentication 5: reseller group undefined -> 403.
  if (groupId === null)
    throw forbidden('your reseller account has no reseller group; ask the administrator to assign one')
  return groupId
}

/** The shape of resources/catalogue.json. */
export interface CatalogueFile {
  version: number
  groups: Group[]
  products: {
    id: number
    name: string
    brand: string
    type: ProductType
    validation_type: ValidationType
    domain_type: string
    max_years: number
    warranty: string
    san_enabled: boolean
    wildcard_san_enabled: boolean
    included_sans: number
    max_sans: number
    description: string
    fulfillment: 'certificate' | 'acme_subscription'
    acme_type: 'caas' | 'ais' | null
    wildcard_only: boolean
    /** "list" or a group id -> year count -> USD prices. */
    prices: Record<string, Record<string, { price: number; san_price: number; wildcard_san_price: number }>>
  }[]
}

/**
 * Loads the default catalogue into an empty store; a store that has products is left alone.
 * The look and the load are one transaction: nodes of a team started together on a new
 * database each find it empty, and only one of them may fill it (the others' transactions are
 * refused for serialization and, run again, find the products).
 */
export async function seedCatalogue(db: Store, file: CatalogueFile): Promise<boolean> {
  const cents = (usd: number): number => Math.round(usd * 100)
  return db.tx(async () => {
    // Every table the load writes is looked at: PostgreSQL then reports a concurrent load's
    // rows as a serialization failure (retried) rather than a duplicate key (an error).
    const seen = (await db.get(
      `SELECT (SELECT COUNT(*) FROM products) AS p, (SELECT COUNT(*) FROM reseller_groups) AS g,
              (SELECT COUNT(*) FROM product_prices) AS pp`
    )) as { p: number }
    if (seen.p > 0) return false
    const gSql = 'INSERT INTO reseller_groups (id, name, description) VALUES (?, ?, ?)'
    for (const grp of file.groups) await db.run(gSql, grp.id, grp.name, grp.description)
    const pSql = `INSERT INTO products (id, name, brand, type, validation_type, domain_type, max_years, warranty,
        san_enabled, wildcard_san_enabled, included_sans, max_sans, description, fulfillment, acme_type, wildcard_only)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
    const prSql = `INSERT INTO product_prices (product_id, group_id, years, price_cents, san_price_cents, wildcard_san_price_cents)
       VALUES (?, ?, ?, ?, ?, ?)`
    for (const x of file.products) {
      await db.run(
        pSql,
        x.id,
        x.name,
        x.brand,
        x.type,
        x.validation_type,
        x.domain_type,
        x.max_years,
        x.warranty,
        x.san_enabled ? 1 : 0,
        x.wildcard_san_enabled ? 1 : 0,
        x.included_sans,
        x.max_sans,
        x.description,
        x.fulfillment,
        x.acme_type,
        x.wildcard_only ? 1 : 0
      )
      for (const [groupKey, byYear] of Object.entries(x.prices)) {
        const gid = groupKey === 'list' ? LIST_GROUP : Number(groupKey)
        for (const [years, v] of Object.entries(byYear)) {
          await db.run(prSql, x.id, gid, Number(years), cents(v.price), cents(v.san_price), cents(v.wildcard_san_price))
        }
      }
    }
    return true
  })
}

/**
 * A product as the desktop app lists it: group prices next to list prices, one entry per year
 * count, and whether it is an ACME subscription.
 */
export function productView(p: PricedProduct): ProductView {
  const { pricing, listPricing, fulfillment, domainType: _domainType, wildcardOnly: _wildcardOnly, ...product } = p
  return {
    ...product,
    acme: fulfillment === 'acme_subscription',
    prices: Object.entries(pricing).map(([years, x]) => ({
      years: Number(years),
      price: x.price,
      listPrice: listPricing[Number(years)]?.price ?? x.price,
      sanPrice: x.sanPrice,
      wildcardSanPrice: x.wildcardSanPrice
    }))
  }
}
