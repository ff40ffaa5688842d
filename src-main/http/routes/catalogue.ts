import { Type } from '@sinclair/typebox'
import { PRODUCT_TYPES, VALIDATION_TYPES } from '../../core/billing/catalogue'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import { productDetailJson, productJson, sanPricingJson } from '../present'
import type { ApiRouter } from '../router'
import { IdParams, ProductListResponse, ProductResponse, Query, SanPricingResponse, StringEnum } from '../schemas'

export function registerCatalogueRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/products',
    {
      operationId: 'listProducts',
      tags: ['Products'],
      summary: 'List the products you can order',
      description:
        "The products of your reseller group with your group's prices, by subscription length in years. ACME subscription products are listed only with include=acme.",
      querystring: Query({
        brand: Type.Optional(
          Type.String({ maxLength: 100, examples: ['Sectigo'], description: 'Only products of this brand.' })
        ),
        type: Type.Optional(StringEnum(PRODUCT_TYPES, 'Only products of this type.')),
        validation: Type.Optional(StringEnum(VALIDATION_TYPES, 'Only products of this validation level.')),
        include: Type.Optional(StringEnum(['acme'] as const, 'acme: also list the ACME subscription products.'))
      }),
      response: { 200: ProductListResponse }
    },
    async (request) => {
      const reseller = caller(request)
      const q = request.query
      const products = await service.catalogue.list(reseller.groupId, {
        brand: q.brand,
        type: q.type,
        validation: q.validation,
        includeAcme: q.include === 'acme'
      })
      const group = await service.catalogue.group(reseller.groupId as number)
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
      operationId: 'getProduct',
      tags: ['Products'],
      summary: 'Show a product with all its prices',
      description: 'One product of your group, with its description, SAN limits and SAN prices for each year.',
      params: IdParams('id', 'The product id, as listProducts shows it.'),
      response: { 200: ProductResponse }
    },
    async (request) => {
      const product = await service.catalogue.product(caller(request).groupId, request.params.id)
      return { success: true as const, product: productDetailJson(product) }
    }
  )

  r.get(
    '/san-pricing/:product_id',
    {
      operationId: 'getSanPricing',
      tags: ['Products'],
      summary: 'Show the SAN prices of a product',
      description:
        'What one additional name and one additional wildcard name cost per year, for your group and at list price.',
      params: IdParams('product_id', 'The product id, as listProducts shows it.'),
      response: { 200: SanPricingResponse }
    },
    async (request) => {
      const product = await service.catalogue.product(caller(request).groupId, request.params.product_id)
      return { success: true as const, san_pricing: sanPricingJson(product) }
    }
  )
}
