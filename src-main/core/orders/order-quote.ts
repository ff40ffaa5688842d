/**
 * What an order costs before it is placed, and the checks on what was asked for: period, SANs,
 * domain and contact address. `create` charges exactly these numbers (reseller API v3.0,
 * "Order"; docs/decisions.md, "Money and orders").
 */
import type { PricedProduct } from '../billing/catalogue'
import { normalizeEmailAddress } from '../dcv/email-address'
import { invalid } from '../errors'
import { percentOf, type Cents } from '../billing/money'
import type { Reseller } from '../billing/resellers'
import type { OrderInput } from '../../../src-shared/records'

export interface Quote {
  product: PricedProduct
  domain: string
  periodMonths: number
  years: number
  sanCount: number
  sanWildcardCount: number
  contactEmail: string | null
  basePrice: Cents
  sanTotal: Cents
  discountAmount: Cents
  total: Cents
}

/**
 * Checks the request against the product and prices it for the reseller's group and discount.
 * `domainOf` checks and normalises the domain; it runs after the period and SAN checks, so a
 * request wrong in several ways is refused for the same reason as before.
 */
export function priceOrder(
  product: PricedProduct,
  reseller: Reseller,
  input: OrderInput,
  domainOf: () => string
): Quote {
  const periodMonths = input.period ?? 12
  // The period is in months, a multiple of 12, from 12 to max_years * 12 (docs/decisions.md).
  if (
    !Number.isInteger(periodMonths) ||
    periodMonths % 12 !== 0 ||
    periodMonths < 12 ||
    periodMonths > product.maxYears * 12
  ) {
    throw invalid(
      `period must be ${Array.from({ length: product.maxYears }, (_, i) => (i + 1) * 12).join(', ')} months for ${product.name}`
    )
  }
  const years = periodMonths / 12
  const sanCount = input.sanCount ?? 0
  const sanWildcardCount = input.sanWildcardCount ?? 0
  if (!Number.isInteger(sanCount) || sanCount < 0) throw invalid('san_count must be a whole number, 0 or more')
  if (!Number.isInteger(sanWildcardCount) || sanWildcardCount < 0) {
    throw invalid('san_wildcard_count must be a whole number, 0 or more')
  }
  if (sanCount > 0 && !product.sanEnabled) throw invalid(`${product.name} does not take additional SANs`)
  if (sanWildcardCount > 0 && !product.wildcardSanEnabled) {
    throw invalid(`${product.name} does not take wildcard SANs`)
  }
  if (sanCount + sanWildcardCount > product.maxSans) {
    throw invalid(`${product.name} takes at most ${product.maxSans} additional SANs`)
  }
  const domain = domainOf()
  if (product.acmeType === 'ais' && !input.contactEmail) {
    throw invalid('contact_email is required for auto-install subscription products')
  }
  // Checked strictly: the address is printed into the ACME client commands of the subscription.
  const contactEmail =
    input.contactEmail === undefined ? null : normalizeEmailAddress(input.contactEmail, 'contact_email')
  const price = product.pricing[years]
  if (!price) throw invalid(`${product.name} has no price for ${years} year(s) in your group`)
  const basePrice = price.price
  const sanTotal = sanCount * price.sanPrice + sanWildcardCount * price.wildcardSanPrice
  const discountAmount = percentOf(basePrice + sanTotal, reseller.discountRate)
  return {
    product,
    domain,
    periodMonths,
    years,
    sanCount,
    sanWildcardCount,
    contactEmail,
    basePrice,
    sanTotal,
    discountAmount,
    total: basePrice + sanTotal - discountAmount
  }
}
