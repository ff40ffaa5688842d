/**
 * The revocation reasons of subscriber certificates and their RFC 5280 §5.3.1 CRLReason codes:
 * the subset the Baseline Requirements allow (§4.9.1.1, §7.2.2). The names are the RFC's.
 */
import { REVOCATION_REASONS } from '../../../src-shared/constants'

export type RevocationReason = (typeof REVOCATION_REASONS)[number]

export { REVOCATION_REASONS }

/** RFC 5280 §5.3.1 CRLReason codes. */
export const REASON_CODES: Record<RevocationReason, number> = {
  unspecified: 0,
  keyCompromise: 1,
  affiliationChanged: 3,
  superseded: 4,
  cessationOfOperation: 5,
  privilegeWithdrawn: 9
}

/** The reason of a stored code; a code outside the subset (written elsewhere) reads as null. */
export const reasonName = (code: number | null): RevocationReason | null =>
  code === null
    ? null
    : ((Object.entries(REASON_CODES).find(([, c]) => c === code)?.[0] as RevocationReason | undefined) ?? null)
