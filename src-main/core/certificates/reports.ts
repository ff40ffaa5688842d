/**
 * The expiry report: every certificate that ends inside a chosen window, issued here or
 * imported, with whether a renewal is planned and who to contact (the order's contact, else
 * the reseller). One reseller's, or every reseller's for the admin's CLI.
 */
import { stringify } from 'csv-stringify/sync'
import type { CoreContext } from '../context'
import { invalid } from '../errors'
import type { ExpiringCertificate } from '../../../src-shared/records'
import { addDays, isoTimestamp } from '../time'

/** A year ahead is the longest window that still means "expiring". */
export const MAX_REPORT_DAYS = 398
/** Rows in one report; a reseller with more narrows the window. */
export const MAX_REPORT_ROWS = 100_000

export type { ExpiringCertificate } from '../../../src-shared/records'

export async function expiringReport(
  ctx: CoreContext,
  opts: { days: number; resellerId?: number | null }
): Promise<ExpiringCertificate[]> {
  const days = opts.days
  if (!Number.isInteger(days) || days < 0 || days > MAX_REPORT_DAYS) {
    throw invalid(`could not build the report: days must be a whole number from 0 to ${MAX_REPORT_DAYS}`)
  }
  const now = ctx.clock()
  const from = isoTimestamp(now).slice(0, 10)
  const till = `${isoTimestamp(addDays(now, days)).slice(0, 10)} 23:59:59`
  const reseller = opts.resellerId ?? null
  const rows = (await ctx.store.all(
    `${REPORT_SELECT} ORDER BY valid_till, reference LIMIT ?`,
    from,
    till,
    reseller,
    reseller,
    from,
    till,
    reseller,
    reseller,
    MAX_REPORT_ROWS + 1
  )) as ReportRow[]
  if (rows.length > MAX_REPORT_ROWS) {
    throw invalid(
      `could not build the report: more than ${MAX_REPORT_ROWS} certificates end in ${days} days; choose a shorter window`
    )
  }
  return rows.map((r) => reportRow(r, from))
}

interface ReportRow {
  kind: 'issued' | 'imported'
  reseller_id: number
  reseller_name: string
  reference: string
  order_id: number | null
  imported_id: number | null
  domain: string
  valid_till: string
  renewal: string | null
  contact: string
}

/**
 * Every certificate that ends in a window, issued here (its order completed) or imported, one
 * reseller's or all; arguments: from, till, reseller twice, then the same for the imports. The
 * report and the dashboard's count read this one statement, so they always agree.
 */
const REPORT_SELECT = `SELECT 'issued' AS kind, o.reseller_id, r.name AS reseller_name, o.order_number AS reference,
    o.id AS order_id, NULL AS imported_id, o.domain, o.cert_valid_till AS valid_till, o.next_reissue_at AS renewal,
    COALESCE(o.contact_email, r.email) AS contact
  FROM orders o JOIN resellers r ON r.id = o.reseller_id
  WHERE o.cert_valid_till IS NOT NULL AND o.cert_valid_till >= ? AND o.cert_valid_till <= ?
    AND o.status = 'completed' AND (CAST(? AS BIGINT) IS NULL OR o.reseller_id = ?)
  UNION ALL
  SELECT 'imported', i.reseller_id, r.name, 'IMP-' || i.id, i.replacement_order_id, i.id, i.domain, i.valid_till,
    NULL, r.email
  FROM imported_certificates i JOIN resellers r ON r.id = i.reseller_id
  WHERE i.valid_till >= ? AND i.valid_till <= ? AND (CAST(? AS BIGINT) IS NULL OR i.reseller_id = ?)`

function reportRow(r: ReportRow, from: string): ExpiringCertificate {
  return {
    kind: r.kind,
    resellerId: r.reseller_id,
    resellerName: r.reseller_name,
    reference: r.reference,
    orderId: r.kind === 'issued' ? r.order_id : null,
    importedId: r.imported_id,
    domain: r.domain,
    validTill: r.valid_till.length === 10 ? `${r.valid_till} 23:59:59` : r.valid_till,
    daysLeft: Math.floor(
      (Date.parse(`${r.valid_till.slice(0, 10)}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000
    ),
    renewalPlannedAt: r.renewal,
    contact: r.contact
  }
}

/** The dashboard's look at the report: how many end within `days`, and the soonest without a renewal. */
export interface ExpiringSummary {
  days: number
  /** Every certificate of the reseller ending within `days`, issued here or imported. */
  total: number
  /** Of those, the ones no automatic reissue replaces. */
  withoutRenewal: number
  /** The soonest of those, at most `limit`. */
  soonest: ExpiringCertificate[]
}

export async function expiringSummary(
  ctx: CoreContext,
  resellerId: number,
  days: number,
  limit = 10
): Promise<ExpiringSummary> {
  const now = ctx.clock()
  const from = isoTimestamp(now).slice(0, 10)
  const till = `${isoTimestamp(addDays(now, days)).slice(0, 10)} 23:59:59`
  const args = [from, till, resellerId, resellerId, from, till, resellerId, resellerId]
  // The count and the soonest from one snapshot.
  return await ctx.store.tx(
    async (): Promise<ExpiringSummary> => {
      const counts = (await ctx.store.get(
        `SELECT COUNT(*) AS total, COUNT(*) - COUNT(renewal) AS bare FROM (${REPORT_SELECT}) report`,
        ...args
      )) as { total: number; bare: number }
      const soonest = (await ctx.store.all(
        `SELECT * FROM (${REPORT_SELECT}) report WHERE renewal IS NULL ORDER BY valid_till, reference LIMIT ?`,
        ...args,
        limit
      )) as ReportRow[]
      return { days, total: counts.total, withoutRenewal: counts.bare, soonest: soonest.map((r) => reportRow(r, from)) }
    },
    { readOnly: true }
  )
}

/** The report as CSV (RFC 4180), one header row; cells that a spreadsheet would run as a formula are quoted with a leading apostrophe. */
export function expiringCsv(rows: ExpiringCertificate[]): string {
  const cell = (v: string): string => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v)
  return stringify(
    rows.map((r) => [
      r.kind,
      r.reference,
      cell(r.domain),
      r.validTill,
      String(r.daysLeft),
      r.renewalPlannedAt ?? '',
      cell(r.resellerName),
      cell(r.contact)
    ]),
    {
      header: true,
      columns: ['kind', 'reference', 'domain', 'valid_till', 'days_left', 'renewal_planned_at', 'reseller', 'contact']
    }
  )
}

/** The reports, for the transports. */
export class Reports {
  constructor(private readonly ctx: CoreContext) {}

  async expiring(opts: { days: number; resellerId?: number | null }): Promise<ExpiringCertificate[]> {
    return await expiringReport(this.ctx, opts)
  }
}
