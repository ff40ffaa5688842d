/**
 * Money is integer cents inside the core (docs/decisions.md, "Money is integer cents"); the API
 * shows USD numbers with at most two decimals.
 */
export type Cents = number

export function centsToUsd(cents: Cents): number {
  return Math.round(cents) / 100
}

/** USD from a person or a script; refuses fractions of a cent rather than rounding them away. */
export function usdToCents(usd: number): Cents {
  if (!Number.isFinite(usd)) throw new RangeError('amount must be a finite number')
  const cents = Math.round(usd * 100)
  if (Math.abs(cents - usd * 100) > 1e-6) throw new RangeError('amount has more than two decimals')
  return cents
}

export function formatUsd(cents: Cents): string {
  const sign = cents < 0 ? '-' : ''
  const abs = Math.abs(cents)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} USD`
}

/**
 * Rounds half away from zero: `round((base + san) * rate / 100)` in cents (docs/decisions.md,
 * "Discounts round half away from zero").
 */
export function percentOf(cents: Cents, percent: number): Cents {
  return Math.round((cents * percent) / 100)
}
