/**
 * A look, some days before an order's renewal at the external ACME CA, at whether that renewal
 * can run with nobody: each name answered by its delegation CNAME (RFC 8555 §8.4) or its
 * dns-persist-01 record (draft-ietf-acme-dns-persist) for this reseller. When one is not, the
 * admin is told then, with the record the customer must add, not after the renewal failed.
 *
 * Once per certificate (ari_windows.readiness_checked_at), read-only DNS lookups through
 * `dcv.dns_resolver`, a bounded number per scheduler pass: the candidates come from a partial
 * index over the windows not yet looked at, so an idle pass reads nothing.
 */
import { ACME_ISSUER_SETTINGS } from './acme-issuer-accounts'
import type { CoreContext } from '../context'
import { delegatedName, type DelegatedDns } from '../dcv/delegated-dns'
import { checkPersistRecord, persistOwner, persistRecordValue } from '../dcv/dns-persist'
import { DCV_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { addDays, isoDate, isoTimestamp } from '../time'
import type { UnattendedRenewal } from './renewal-plan'

/** Days before the chosen moment when the look runs: a week for the customer to add a record. */
export const READINESS_LEAD_DAYS = 7
/** Orders looked at per pass (each costs a DNS lookup per name); the rest wait for the next pass. */
const LOOKS_PER_PASS = 200
/** Lookups at once: a resolver that does not answer holds up no more than this many. */
const PARALLEL = 4

export interface NotReady {
  order_id: number
  renew_at: string
  /** Each name that nothing answers unattended, and the record the customer must add for it. */
  reason: string
}

/** What the look asks of the ACME issuer (acme-issuer.ts), which hands itself in. */
export interface ReadinessIssuer {
  enabled(): Promise<boolean>
  readonly delegation: DelegatedDns
  accountUrlFor(orderId: number, names: string[]): Promise<string | null>
  unattendedRenewal(orderId: number): Promise<UnattendedRenewal | null>
}

export async function checkReadiness(
  ctx: CoreContext,
  settings: Settings,
  issuer: ReadinessIssuer,
  now: Date
): Promise<NotReady[]> {
  if (!(await issuer.enabled())) return []
  const db = ctx.store
  const rows = (await db.all(
    `SELECT w.order_id, w.renew_at, w.cert_id FROM ari_windows w
        WHERE w.readiness_checked_at IS NULL AND w.renew_at > ? AND w.renew_at <= ?
        ORDER BY w.renew_at LIMIT ?`,
    isoTimestamp(now),
    isoTimestamp(addDays(now, READINESS_LEAD_DAYS)),
    LOOKS_PER_PASS
  )) as {
    order_id: number
    renew_at: string
    cert_id: string
  }[]
  const out: NotReady[] = []
  for (let i = 0; i < rows.length; i += PARALLEL) {
    const batch = rows.slice(i, i + PARALLEL)
    const found = await Promise.all(batch.map((r) => lookAt(ctx, settings, issuer, r.order_id, now)))
    const markSql = 'UPDATE ari_windows SET readiness_checked_at = ? WHERE order_id = ? AND cert_id = ?'
    for (const [j, r] of batch.entries()) {
      await db.run(markSql, isoTimestamp(now), r.order_id, r.cert_id)
      const reason = found[j]
      if (reason) out.push({ order_id: r.order_id, renew_at: r.renew_at, reason })
    }
  }
  return out
}

/** Why the order's renewal needs the customer, or null when every name is answered unattended. */
async function lookAt(
  ctx: CoreContext,
  settings: Settings,
  issuer: ReadinessIssuer,
  orderId: number,
  now: Date
): Promise<string | null> {
  const order = (await ctx.store.get(
    `SELECT o.reseller_id, o.status, o.auto_reissue, o.purchase_end_date, r.names FROM orders o
         JOIN certificate_requests r ON r.order_id = o.id WHERE o.id = ?`,
    orderId
  )) as
    { reseller_id: number; status: string; auto_reissue: number; purchase_end_date: string; names: string } | undefined
  // Only a renewal that will run: the order holds its certificate and renews by itself.
  if (!order || order.status !== 'completed' || order.auto_reissue !== 1 || order.purchase_end_date <= isoDate(now))
    return null
  const names = JSON.parse(order.names) as string[]
  const persistIssuer = await settings.get(ACME_ISSUER_SETTINGS.persistIssuer)
  const accountUrl = persistIssuer ? await issuer.accountUrlFor(orderId, names) : null
  const resolver = (await settings.get(DCV_SETTINGS.resolver)) || null
  const problems: string[] = []
  for (const base of [...new Set(names.map(delegatedName))]) {
    const wildcard = names.some((n) => n.toLowerCase() === `*.${base}`)
    const why: string[] = []
    if (await issuer.delegation.enabled()) {
      const [st] = await issuer.delegation.status(order.reseller_id, [base])
      if (st?.in_place) continue
      why.push(st?.detail ?? `no CNAME at _acme-challenge.${base}`)
    }
    if (persistIssuer && accountUrl) {
      const v = await checkPersistRecord(base, resolver, {
        issuerDomains: [persistIssuer],
        accountUri: accountUrl,
        wildcard,
        now
      })
      if (v.ok) continue
      why.push(
        `${persistOwner(base)}: ${v.reason}; or the customer adds ${persistOwner(base)} TXT "${persistRecordValue({ issuerDomain: persistIssuer, accountUri: accountUrl, wildcard })}"`
      )
    }
    if (why.length === 0)
      why.push('no method renews it with nobody: no zone is delegated to CertDesk and the CA offers no dns-persist-01')
    problems.push(`${base}: ${why.join('; ')}`)
  }
  if (problems.length === 0) return null
  const plan = await issuer.unattendedRenewal(orderId)
  return `${problems.join(' | ')}${plan && !plan.unattended ? ` (its method: ${plan.detail})` : ''}`
}
