/**
 * Prices as the reseller pays them. The catalogue carries the group's price list; an order
 * charges it less the reseller's discount, rounded to the cent on the order's sum
 * (src-main/core/order-quote.ts: discount = round((base + SANs) × rate / 100)). For one line
 * alone the same rule gives the figure shown here, so the catalogue and the order agree.
 */
import { usd } from './format'

export const discountOf = (cents: number, rate: number): number => Math.round((cents * rate) / 100)

/** What the reseller pays for `cents` of group price at its discount rate. */
export const afterDiscount = (cents: number, rate: number): number => cents - discountOf(cents, rate)

/**
 * The warranty as the catalogue stores it (whole US dollars as text, reseller API v3.0 §products
 * "warranty: string"; all money of the API is USD) in words with its currency.
 */
export function warrantyText(w: string): string {
  const n = Number(w)
  if (w.trim() === '' || !Number.isFinite(n)) return w
  if (n === 0) return 'none'
  return `${usd(Math.round(n * 100)).replace(/\.00$/, '')} USD`
}
