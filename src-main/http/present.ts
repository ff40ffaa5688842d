/**
 * Core records -> the reseller API's JSON (snake_case, USD numbers). Pure functions: the
 * business rules stay in src-main/core. The `certdesk admin` commands print the same records
 * through these functions, so a script reads one shape from the API and from the CLI.
 */
import type { Static } from '@sinclair/typebox'
import type { PricedProduct, PriceTable, Product } from '../core/billing/catalogue'
import type { Invoice } from '../core/billing/invoices'
import type { CertEvent } from '../core/events'
import type { CreditTransaction, Page } from '../core/billing/ledger'
import type { AcmeDetails, AcmeSubscription } from '../core/acme-server/acme-subscriptions'
import { acmeSetup, type AcmeUrls } from '../core/acme-server/client-setup'
import { centsToUsd } from '../core/billing/money'
import type { CreatedOrder, Order } from '../core/orders/orders'
import type { Reseller } from '../core/billing/resellers'
import type { Stats } from '../core/billing/stats'
import { failure } from './errors'
import type {
  AcmeDetailsJson,
  ChartsJson,
  CreatedAcmeOrder,
  CreatedCertificateOrder,
  EventJson,
  InvoiceJson,
  OrderJson,
  ProductDetailJson,
  ProductJson,
  ResellerJson,
  SanPricingJson,
  StatsJson,
  TransactionJson
} from './schemas'

const byYears = (t: PriceTable, pick: (p: PriceTable[number]) => number): Record<string, number> =>
  Object.fromEntries(Object.entries(t).map(([years, p]) => [years, centsToUsd(pick(p))]))

/**
 * A product as the catalogue lists it, without any reseller's prices: the list prices the
 * desktop user sets (`certdesk admin product list`) and the part of GET /products every
 * reseller shares.
 */
export function catalogueProductJson(
  p: Product & { listPricing: PriceTable }
): Omit<Static<typeof ProductJson>, 'reseller_price' | 'pricing'> {
  const base = {
    id: p.id,
    name: p.name,
    brand: p.brand,
    type: p.type,
    validation_type: p.validationType,
    domain_type: p.domainType,
    list_price: centsToUsd(p.listPricing[1]?.price ?? 0),
    list_pricing: byYears(p.listPricing, (x) => x.price),
    max_years: p.maxYears,
    warranty: p.warranty,
    san_enabled: p.sanEnabled
  }
  if (p.fulfillment === 'acme_subscription') {
    return {
      ...base,
      fulfillment: 'acme_subscription',
      requires_csr: false,
      acme_type: p.acmeType ?? 'caas',
      wildcard_only: p.wildcardOnly
    }
  }
  return base
}

/** A product with the prices of the caller's group (GET /products). */
export function productJson(p: PricedProduct): Static<typeof ProductJson> {
  return {
    ...catalogueProductJson(p),
    reseller_price: centsToUsd(p.pricing[1]?.price ?? 0),
    pricing: byYears(p.pricing, (x) => x.price)
  }
}

export function sanPricingJson(p: PricedProduct): Static<typeof SanPricingJson> {
  const sans = (t: PriceTable) =>
    Object.fromEntries(
      Object.entries(t).map(([y, x]) => [
        y,
        { san_price: centsToUsd(x.sanPrice), wildcard_san_price: centsToUsd(x.wildcardSanPrice) }
      ])
    )
  return {
    product_id: p.id,
    product_name: p.name,
    san_enabled: p.sanEnabled,
    wildcard_san_enabled: p.wildcardSanEnabled,
    included_sans: p.includedSans,
    max_sans: p.maxSans,
    san_price: centsToUsd(p.pricing[1]?.sanPrice ?? 0),
    wildcard_san_price: centsToUsd(p.pricing[1]?.wildcardSanPrice ?? 0),
    pricing: sans(p.pricing),
    list_pricing: sans(p.listPricing)
  }
}

export function productDetailJson(p: PricedProduct): Static<typeof ProductDetailJson> {
  return {
    ...productJson(p),
    description: p.description,
    wildcard_san_enabled: p.wildcardSanEnabled,
    included_sans: p.includedSans,
    max_sans: p.maxSans,
    san_pricing: sanPricingJson(p)
  }
}

export function orderJson(o: Order): Static<typeof OrderJson> {
  return {
    id: o.id,
    order_id: o.id,
    order_number: o.orderNumber,
    product_id: o.productId,
    product: o.productName,
    brand: o.brand,
    type: o.productType,
    validation_type: o.validationType,
    domain: o.domain,
    san_count: o.sanCount,
    san_wildcard_count: o.sanWildcardCount,
    contact_email: o.contactEmail,
    base_price: centsToUsd(o.basePrice),
    san_total: centsToUsd(o.sanTotal),
    discount_amount: centsToUsd(o.discountAmount),
    total: centsToUsd(o.total),
    currency: 'USD',
    status: o.status,
    status_note: o.statusNote,
    payment_status: o.paymentStatus,
    invoice_number: o.invoiceNumber,
    invoice_status: o.invoiceStatus as Invoice['status'] | null,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    auto_reissue_enabled: o.autoReissue,
    max_validity_days: o.maxValidityDays,
    purchase_end_date: o.purchaseEndDate,
    next_reissue_at: o.nextReissueAt,
    reissue_count: o.reissueCount,
    cert_valid_from: o.certValidFrom,
    cert_valid_till: o.certValidTill,
    period: o.periodMonths
  }
}

export function createdOrderJson(c: CreatedOrder): Static<typeof CreatedCertificateOrder> {
  const o = c.order
  return {
    success: true,
    message: `Order ${o.orderNumber} created and paid from credit`,
    fulfillment: 'certificate',
    order_id: o.id,
    order_number: o.orderNumber,
    domain: o.domain,
    base_price: centsToUsd(o.basePrice),
    san_total: centsToUsd(o.sanTotal),
    discount_amount: centsToUsd(o.discountAmount),
    total: centsToUsd(o.total),
    status: o.status,
    payment_status: o.paymentStatus,
    credit_used: centsToUsd(c.creditUsed),
    new_balance: centsToUsd(c.newBalance),
    invoice_number: o.invoiceNumber ?? '',
    auto_reissue_enabled: o.autoReissue,
    max_validity_days: o.maxValidityDays,
    purchase_end_date: o.purchaseEndDate,
    next_reissue_at: o.nextReissueAt,
    period: o.periodMonths
  }
}

/**
 * The answer to POST /orders. An ACME subscription order gets the spec's short response; one
 * whose subscription could not be created was cancelled and refunded, and says so as a 503.
 */
export function createdOrderAnswer(c: CreatedOrder): { statusCode: number; body: unknown } {
  const o = c.order
  if (!c.subscription) return { statusCode: 200, body: createdOrderJson(c) }
  if ('error' in c.subscription) {
    const refund =
      c.subscription.refunded > 0 ? ` and ${centsToUsd(c.subscription.refunded).toFixed(2)} USD refunded to credit` : ''
    return {
      statusCode: 503,
      body: failure(
        `could not create the ACME subscription: ${c.subscription.error}; order ${o.orderNumber} is cancelled${refund}`
      )
    }
  }
  const body: Static<typeof CreatedAcmeOrder> = {
    success: true,
    message: `Order ${o.orderNumber} completed: ACME subscription created and paid from credit`,
    order_id: o.id,
    order_number: o.orderNumber,
    status: 'completed',
    fulfillment: 'acme_subscription',
    total: centsToUsd(o.total),
    credit_used: centsToUsd(c.creditUsed),
    new_balance: centsToUsd(c.newBalance),
    invoice_number: o.invoiceNumber ?? '',
    acme: { status: 'created', subscription_id: c.subscription.id, details_endpoint: `/orders/${o.id}/acme` }
  }
  return { statusCode: 200, body }
}

export function acmeSummaryJson(s: AcmeSubscription): NonNullable<Static<typeof OrderJson>['acme']> {
  return {
    status: s.status,
    category: s.category,
    subscription_id: s.id,
    domains: s.domains.map((d) => ({ id: d.id, name: d.name })),
    subscription: { begin: s.beginDate, end: s.endDate },
    bound_accounts: s.accounts.filter((a) => a.status === 'valid').length,
    details_endpoint: `/orders/${s.orderId}/acme`
  }
}

export type { AcmeUrls } from '../core/acme-server/client-setup'

/** The assembly lives in core (the desktop ACME panel shows the same object). */
export function acmeDetailsJson(d: AcmeDetails, urls: AcmeUrls): Static<typeof AcmeDetailsJson> {
  const setup = acmeSetup(d, urls)
  type AccountStatus = Static<typeof AcmeDetailsJson>['account']['accounts'][number]['status']
  // The ACME server writes only RFC 8555 §7.1.6 account states (valid, deactivated, revoked).
  const accounts = setup.account.accounts.map((a) => ({ ...a, status: a.status as AccountStatus }))
  return { ...setup, account: { ...setup.account, accounts } }
}

export function invoiceJson(i: Invoice): Static<typeof InvoiceJson> {
  return {
    id: i.id,
    invoice_number: i.invoiceNumber,
    order_id: i.orderId,
    order_number: i.orderNumber,
    domain: i.domain,
    product: i.productName,
    total: centsToUsd(i.total),
    currency: 'USD',
    status: i.status,
    due_date: i.dueDate,
    created_at: i.createdAt,
    paid_at: i.paidAt,
    sent_at: i.sentAt,
    cancelled_at: i.cancelledAt
  }
}

export function transactionJson(t: CreditTransaction): Static<typeof TransactionJson> {
  return {
    id: t.id,
    amount: centsToUsd(t.amount),
    type: t.type,
    description: t.description,
    balance_after: centsToUsd(t.balanceAfter),
    order_id: t.orderId,
    created_at: t.createdAt
  }
}

export function resellerJson(
  r: Reseller,
  groupName: string | null,
  stats: { orderCount: number; totalRevenue: number }
): Static<typeof ResellerJson> {
  return {
    id: r.id,
    name: r.name,
    email: r.email,
    company: r.company,
    discount_rate: r.discountRate,
    credit_balance: centsToUsd(r.creditBalance),
    group_id: r.groupId,
    group_name: groupName,
    api_access: r.apiAccess,
    created_at: r.createdAt,
    stats: { order_count: stats.orderCount, total_revenue: centsToUsd(stats.totalRevenue) }
  }
}

export function statsJson(s: Stats): { stats: Static<typeof StatsJson>; charts: Static<typeof ChartsJson> } {
  return {
    stats: {
      total_orders: s.totalOrders,
      active_orders: s.activeOrders,
      pending_orders: s.pendingOrders,
      total_revenue: centsToUsd(s.totalRevenue),
      monthly_revenue: centsToUsd(s.monthlyRevenue),
      credit_balance: centsToUsd(s.creditBalance)
    },
    charts: {
      daily_sales: s.dailySales.map((d) => ({ date: d.date, orders: d.orders, revenue: centsToUsd(d.revenue) })),
      brand_distribution: s.brandDistribution,
      status_distribution: s.statusDistribution
    }
  }
}

/** An event as a reseller sees it in GET /events (the core has already left out what it may not see). */
export const eventJson = (e: CertEvent): Static<typeof EventJson> => ({
  id: e.id,
  type: e.type,
  order_id: e.orderId,
  order_number: e.orderNumber,
  message: e.message,
  data: e.data,
  created_at: e.createdAt
})

export const paginationJson = <T>(p: Page<T>): { total: number; limit: number; offset: number } => ({
  total: p.total,
  limit: p.limit,
  offset: p.offset
})
