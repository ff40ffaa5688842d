/**
 * Whether an order at the external ACME CA renews without the customer, said when it is placed
 * and wherever its renewal is shown. At every renewal the CA may want the names validated again
 * (its authorizations expire, RFC 8555 §7.1.3; the Baseline Requirements shorten their reuse to
 * 10 days from 2029-03-15, ballot SC-081). Two methods answer that with nobody: dns-01 through a
 * CNAME into the zone delegated to CertDesk (RFC 8555 §8.4), and a dns-persist-01 record
 * (draft-ietf-acme-dns-persist, BR §3.2.2.4.22). http-01 and a plain dns-01 record need a new
 * answer from the customer each time, so for those the plan names the methods that renew
 * unattended, with the one-time records, and how to switch.
 */
import { persistOwner, persistRecordValue } from '../dcv/dns-persist'

export type RenewalMethod = 'http-01' | 'dns-01' | 'delegated-dns' | 'dns-persist-01'

export interface RecordToSet {
  name: string
  type: 'CNAME' | 'TXT'
  value: string
}

export interface UnattendedRenewal {
  /** How this order's renewals prove control at the external CA. */
  method: RenewalMethod
  /** Whether that method renews with nobody (once its one-time record is in place). */
  unattended: boolean
  detail: string
  /** Methods that renew with nobody, offered when this one does not, each with its records. */
  alternatives: { method: 'delegated-dns' | 'dns-persist-01'; dcv_method: 'dns'; records: RecordToSet[] }[]
  /** The call that switches, for the order's state; null when there is nothing to switch to. */
  switch_with: string | null
}

export interface PlanInput {
  orderId: number
  status: string
  /** The names of the order (a wildcard and its base share one record). */
  names: string[]
  /** The method the order validates with: its stored challenge's, else its DCV method's. */
  method: RenewalMethod
  /** This reseller's delegation target of a name, or null when no zone is delegated. */
  delegationTarget: ((name: string) => string) | null
  /** The dns-persist-01 record's issuer and this reseller's account, when the CA offers it. */
  persist: { issuerDomain: string; accountUrl: string } | null
}

const UNATTENDED: ReadonlySet<RenewalMethod> = new Set(['delegated-dns', 'dns-persist-01'])

const DETAIL: Record<RenewalMethod, string> = {
  'http-01':
    "http-01 needs a new file on the customer's web server at every renewal: each renewal waits for the customer",
  'dns-01': 'a dns-01 TXT record needs a new value from the customer at every renewal: each renewal waits for them',
  'delegated-dns':
    "renews with nobody once _acme-challenge of each name is a CNAME to this reseller's target (set once)",
  'dns-persist-01':
    "renews with nobody while each name's _validation-persist record names this reseller's ACME account (set once)"
}

/** The names one record each stands for: a wildcard and its base share one. */
export function renewalBases(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.toLowerCase().replace(/^\*\./, '')))]
}

export function unattendedPlan(p: PlanInput): UnattendedRenewal {
  const unattended = UNATTENDED.has(p.method)
  const bases = renewalBases(p.names)
  const alternatives: UnattendedRenewal['alternatives'] = []
  if (!unattended && p.delegationTarget) {
    const target = p.delegationTarget
    alternatives.push({
      method: 'delegated-dns',
      dcv_method: 'dns',
      records: bases.map((b) => ({ name: `_acme-challenge.${b}`, type: 'CNAME', value: target(b) }))
    })
  }
  if (!unattended && p.persist) {
    const persist = p.persist
    alternatives.push({
      method: 'dns-persist-01',
      dcv_method: 'dns',
      records: bases.map((b) => ({
        name: persistOwner(b),
        type: 'TXT',
        value: persistRecordValue({
          issuerDomain: persist.issuerDomain,
          accountUri: persist.accountUrl,
          wildcard: p.names.some((n) => n.toLowerCase() === `*.${b}`)
        })
      }))
    })
  }
  const detail =
    !unattended && alternatives.length === 0
      ? `${DETAIL[p.method]}; no method that renews with nobody is set up: delegate a zone to CertDesk (setting dns.delegated_zone), or use a CA that offers dns-persist-01`
      : DETAIL[p.method]
  const switchWith =
    alternatives.length === 0
      ? null
      : p.status === 'validation_pending'
        ? 'POST /ssl/change-dcv with dcv_method dns'
        : `POST /orders/${p.orderId}/renewal with dcv_method dns`
  return { method: p.method, unattended, detail, alternatives, switch_with: switchWith }
}
