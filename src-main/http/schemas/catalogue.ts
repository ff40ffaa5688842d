/** Products and their prices (reseller API v3.0, "Product"). */
import { Type } from '@sinclair/typebox'
import { PRODUCT_TYPES, VALIDATION_TYPES } from '../../../src-shared/constants'
import { Id, Money, ok, StringEnum } from './kit'

const YearsKey = Type.String({ pattern: '^[1-5]$', description: 'a subscription length in years' })
const PriceByYears = (description: string) => Type.Record(YearsKey, Money(), { description })

export const ProductJson = Type.Object(
  {
    id: Id('the product id, as POST /orders takes it'),
    name: Type.String(),
    brand: Type.String(),
    type: StringEnum(PRODUCT_TYPES),
    validation_type: StringEnum(VALIDATION_TYPES, 'domain (dv), organisation (ov) or extended (ev) validation'),
    domain_type: Type.String({ description: 'single, wildcard, multi-domain or code-signing' }),
    list_price: Money('the one-year list price, USD'),
    list_pricing: PriceByYears('list prices by subscription length in years'),
    reseller_price: Money("the one-year price of the caller's group, USD"),
    pricing: PriceByYears("the caller's group prices by subscription length in years"),
    max_years: Type.Integer({ minimum: 1, maximum: 5, description: 'the longest subscription, in years' }),
    warranty: Type.String({ description: 'the warranty, USD' }),
    san_enabled: Type.Boolean({ description: 'whether additional names (san_count) can be ordered' }),
    fulfillment: Type.Optional(
      Type.Literal('acme_subscription', { description: 'only on ACME subscription products (include=acme)' })
    ),
    requires_csr: Type.Optional(Type.Boolean({ description: 'false for ACME subscription products' })),
    acme_type: Type.Optional(
      StringEnum(['caas', 'ais'] as const, "caas: the customer's own ACME client; ais: an auto-install tool")
    ),
    wildcard_only: Type.Optional(Type.Boolean({ description: 'the domain must be a wildcard name (*.example.com)' }))
  },
  { title: 'Product', description: 'A product of the caller’s group, with its prices' }
)

const SanPrices = Type.Object({ san_price: Money(), wildcard_san_price: Money() })

export const SanPricingJson = Type.Object(
  {
    product_id: Id('the product id'),
    product_name: Type.String(),
    san_enabled: Type.Boolean(),
    wildcard_san_enabled: Type.Boolean(),
    included_sans: Type.Integer({ minimum: 0, description: 'names included in the base price' }),
    max_sans: Type.Integer({ minimum: 0, description: 'the most additional names one order can have' }),
    san_price: Money('one additional name for one year, group price'),
    wildcard_san_price: Money('one additional wildcard name for one year, group price'),
    pricing: Type.Record(YearsKey, SanPrices, { description: 'group SAN prices by years' }),
    list_pricing: Type.Record(YearsKey, SanPrices, { description: 'list SAN prices by years' })
  },
  { title: 'SanPricing', description: 'SAN and wildcard SAN prices of a product' }
)

export const ProductDetailJson = Type.Composite(
  [
    ProductJson,
    Type.Object({
      description: Type.String(),
      wildcard_san_enabled: Type.Boolean(),
      included_sans: Type.Integer({ minimum: 0 }),
      max_sans: Type.Integer({ minimum: 0 }),
      san_pricing: SanPricingJson
    })
  ],
  { title: 'ProductDetail', description: 'A product with all its prices' }
)

export const ProductListResponse = ok(
  {
    products: Type.Array(ProductJson),
    count: Type.Integer({ minimum: 0 }),
    group_id: Id("the caller's reseller group"),
    note: Type.String({ description: 'what the prices are' })
  },
  { title: 'ProductListResponse' }
)
export const ProductResponse = ok({ product: ProductDetailJson }, { title: 'ProductResponse' })
export const SanPricingResponse = ok({ san_pricing: SanPricingJson }, { title: 'SanPricingResponse' })
