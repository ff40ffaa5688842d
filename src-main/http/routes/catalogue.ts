import { Type } from '@sinclair/typebox'
import { PRODUCT_TYPES, VALIDATION_TYPES } from '../../core/catalogue'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { productDetailJson, productJson, sanPricingJson } from '../present'
import type { ApiRouter } from '../router'
import { ErrorRef } from './common'
import { IdParam, ok, ProductDetailJson, ProductJson, SanPricingJson, StringEnum } from '../schemas'

export function registerCatalogueRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/products',
    {
      summary: 'Product list with group prices',
      querystring: Type.Object({
        brand: Type.Optional(Type.String({ maxLength: 100 })),
        type: Type.Optional(StringEnum(PRODUCT_TYPES)),
        validation: Type.Optional(StringEnum(VALIDATION_TYPES)),
        include: Type.Optional(StringEnum(['acme'] as const, 'acme adds ACME subscription products'))
      }),
      response: {
        200: ok({
          products: Type.Array(ProductJson),
          count: Type.Integer(),
          group_id: Type.Integer(),
          note: Type.String()
        }),
        ...ErrorRef
      }
    },
    async (request) => {
      const reseller = caller(request)
      const q = request.query
      const products = service.catalogue.list(reseller.groupId, {
        brand: q.brand,
        type: q.type,
        validation: q.validation,
        includeAcme: q.include === 'acme'
      })
      const group = service.catalogue.group(reseller.groupId as number)
      return {
        success: true as const,
        products: products.map(productJson),
        count: products.length,
        group_id: reseller.groupId as number,
        note:
          `Prices are the ${group?.name ?? ''} group prices in USD per subscription length in years` +
          (q.include === 'acme' ? '; ACME subscription products included' : '; add include=acme for ACME subscriptions')
      }
    }
  )

  r.get(
    '/products/:id',
    {
      summary: 'Product detail with SAN and multi-year prices',
      params: IdParam('id'),
      response: { 200: ok({ product: ProductDetailJson }), ...ErrorRef }
    },
    async (request) => {
      const product = service.catalogue.product(caller(request).groupId, request.params.id)
      return { success: true as const, product: productDetailJson(product) }
    }
  )

  r.get(
    '/san-pricing/:product_id',
    {
      summary: 'SAN and wildcard SAN prices',
      params: IdParam('product_id'),
      response: { 200: ok({ san_pricing: SanPricingJson }), ...ErrorRef }
    },
    async (request) => {
      const product = service.catalogue.product(caller(request).groupId, request.params.product_id)
      return { success: true as const, san_pricing: sanPricingJson(product) }
    }
  )
}
