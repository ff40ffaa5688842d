/**
 * Validity arithmetic shared by ordering, issuance and the scheduler (reseller API v3.0,
 * "Certificate lifecycle rule"): `valid_till = min(valid_from + max, purchase_end_date)`, and the next
 * reissue 14 days before `valid_till` while the subscription outlasts the certificate.
 */
import { maxValidityDays, REISSUE_LEAD_DAYS } from './cab-policy'
import type { Product } from '../billing/catalogue'
import { addDays, DAY_MS } from '../time'

/**
 * Code-signing certificates follow the Code Signing Baseline Requirements, not the TLS BRs:
 * at most 460 days since ballot CSC-31 (effective 2026-03-01 for new certificates; earlier
 * certificates could run 39 months, which this tool never issues).
 */
export const CODE_SIGNING_MAX_DAYS = 460

export function maxValidityFor(product: Pick<Product, 'type'>, issuedAt: Date): number {
  return product.type === 'code-signing' ? CODE_SIGNING_MAX_DAYS : maxValidityDays(issuedAt)
}

export interface ValidityWindow {
  validFrom: Date
  /** Last second of validity, inclusive (BR §1.6.1 "Validity Period" counts inclusively). */
  validTill: Date
  /** Null once this certificate reaches the end of the subscription, or for code signing. */
  nextReissueAt: Date | null
}

/**
 * The order's next reissue after the certificate actually issued: the issuing CA's moment when it
 * names one (an external CA's RFC 9773 window), else 14 days before that certificate ends; none
 * when it reaches the end of the subscription, or when the product never reissues by itself.
 * One schedule per order, whoever signed (the local CA's certificate ends where `validityWindow`
 * said, an external CA's wherever the CA chose).
 */
export function nextReissueAfter(
  issued: { validTill: Date; renewAt?: Date },
  purchaseEnd: Date,
  autoReissue: boolean
): Date | null {
  const endOfSubscription = new Date(purchaseEnd.getTime() - 1000)
  if (!autoReissue || issued.validTill.getTime() >= endOfSubscription.getTime()) return null
  return issued.renewAt ?? addDays(issued.validTill, -REISSUE_LEAD_DAYS)
}

export function validityWindow(
  product: Pick<Product, 'type'>,
  issuedAt: Date,
  purchaseEnd: Date,
  autoReissue: boolean
): ValidityWindow {
  const max = maxValidityFor(product, issuedAt)
  // A certificate of `max` days ends one second before valid_from + max days.
  const capped = new Date(issuedAt.getTime() + max * DAY_MS - 1000)
  const endOfSubscription = new Date(purchaseEnd.getTime() - 1000)
  const validTill = capped.getTime() < endOfSubscription.getTime() ? capped : endOfSubscription
  const nextReissueAt =
    autoReissue && validTill.getTime() < endOfSubscription.getTime() ? addDays(validTill, -REISSUE_LEAD_DAYS) : null
  return { validFrom: issuedAt, validTill, nextReissueAt }
}
