/**
 * CA/Browser Forum dates the core knows. Each constant names the rule it follows; every
 * function takes the date in question, never "now", so a scheduler run `--as-of` a future
 * day applies the rules of that day.
 */
import { parseDate } from '../time'

interface Step {
  from: Date
  value: number
}

const steps = (first: number, rest: [string, number][]): Step[] => [
  { from: new Date(0), value: first },
  ...rest.map(([day, value]) => ({ from: parseDate(day), value }))
]

const valueOn = (table: Step[], at: Date): number => {
  let value = table[0].value
  for (const step of table) if (at.getTime() >= step.from.getTime()) value = step.value
  return value
}

/**
 * Maximum TLS subscriber certificate validity in days, Baseline Requirements §6.3.2 as
 * amended by ballot SC-081: 398 days before 2026-03-15, then 200, 100 from 2027-03-15 and 47
 * from 2029-03-15.
 */
const MAX_VALIDITY = steps(398, [
  ['2026-03-15', 200],
  ['2027-03-15', 100],
  ['2029-03-15', 47]
])

/**
 * How long a domain validation may be reused, BR §4.2.1 as amended by SC-081: 398 days
 * before 2026-03-15, then 200, 100 from 2027-03-15 and 10 from 2029-03-15.
 */
const DCV_REUSE = steps(398, [
  ['2026-03-15', 200],
  ['2027-03-15', 100],
  ['2029-03-15', 10]
])

/** BR §3.2.2.4.4 (constructed email to domain contact) may not be used from this date. */
export const CONSTRUCTED_EMAIL_SUNSET = parseDate('2028-03-15')

/** Automatic reissue lead time, spec "Certificate lifecycle rule" item 2. */
export const REISSUE_LEAD_DAYS = 14

export function maxValidityDays(issuedAt: Date): number {
  return valueOn(MAX_VALIDITY, issuedAt)
}

export function dcvReuseDays(checkedAt: Date): number {
  return valueOn(DCV_REUSE, checkedAt)
}

export function constructedEmailAllowed(at: Date): boolean {
  return at.getTime() < CONSTRUCTED_EMAIL_SUNSET.getTime()
}

/** The mailbox local parts BR §3.2.2.4.4 allows for constructed-email validation. */
export const APPROVER_LOCAL_PARTS = ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster'] as const
