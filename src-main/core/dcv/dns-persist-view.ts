/**
 * What an admin publishes for dns-persist-01 (draft-ietf-acme-dns-persist; BR §3.2.2.4.22) and
 * whether it is in place: one TXT record per domain and ACME account, looked up read-only
 * through `dcv.dns_resolver`, with a warning while its `persistUntil` is near or past (after
 * it, renewals need validation again). Used for ACME subscriptions (GET /orders/{id}/acme) and
 * for orders the ACME issuer gets from an external CA (GET /orders/{id}/renewal).
 */
import { addDays, isoTimestamp } from '../time'
import {
  checkPersistRecord,
  persistOwner,
  persistRecordValue,
  PERSIST_WARNING_DAYS,
  type PersistVerdict
} from './dns-persist'

/** How long one read-only look may take before the page says it did not finish. */
const LOOKUP_LIMIT_MS = 3000

export interface PersistRecordView {
  domain: string
  record_name: string
  record_type: 'TXT'
  /** The exact value to publish (without persistUntil: the admin may add one). */
  record_value: string
  account_url: string
  in_place: boolean
  detail: string
  persist_until: string | null
  warning: string | null
}

export async function persistRecordViews(p: {
  domains: string[]
  accountUrls: string[]
  issuerDomain: string
  wildcard: boolean
  resolver: string | null
  now: Date
}): Promise<PersistRecordView[]> {
  const out: PersistRecordView[] = []
  const bases = [...new Set(p.domains.map((d) => d.toLowerCase().replace(/^\*\./, '')))]
  for (const domain of bases) {
    for (const accountUri of p.accountUrls) {
      const wildcard = p.wildcard || p.domains.some((d) => d.toLowerCase() === `*.${domain}`)
      // A page must not hang on a resolver that does not answer: the look gives up after a while.
      const verdict: PersistVerdict = await Promise.race([
        checkPersistRecord(domain, p.resolver, { issuerDomains: [p.issuerDomain], accountUri, wildcard, now: p.now }),
        new Promise<PersistVerdict>((resolve) => {
          const t = setTimeout(
            () => resolve({ ok: false, type: 'dns', reason: 'the DNS lookup did not finish in time', records: [] }),
            LOOKUP_LIMIT_MS
          )
          t.unref()
        })
      ])
      const until = verdict.ok ? verdict.record.persistUntil : null
      let warning: string | null = null
      if (until && until.getTime() < addDays(p.now, PERSIST_WARNING_DAYS).getTime()) {
        warning = `persistUntil ends on ${isoTimestamp(until)}: publish a record with a later persistUntil (or none) before then, or renewals will need validation again`
      } else if (!verdict.ok && verdict.reason.includes('persistUntil passed')) {
        warning = `the record's persistUntil has passed: ${verdict.reason}`
      }
      out.push({
        domain,
        record_name: persistOwner(domain),
        record_type: 'TXT',
        record_value: persistRecordValue({ issuerDomain: p.issuerDomain, accountUri, wildcard }),
        account_url: accountUri,
        in_place: verdict.ok,
        detail: verdict.ok ? 'in place' : verdict.reason,
        persist_until: until ? isoTimestamp(until) : null,
        warning
      })
    }
  }
  return out
}
