/**
 * An order's renewal automation as the order page and GET /orders/{id}/renewal show it: the
 * renewal window and where it came from (RFC 9773, or the 14-day rule), each name's delegation
 * CNAME and whether it is in place, the dns-persist-01 records for the external ACME CA, and
 * whether the order renews with nobody.
 * Every DNS look here is read-only.
 */
import { ACME_ISSUER_SETTINGS, type AcmeIssuer } from './acme-issuer'
import type { RenewalWindowView } from './ari'
import type { CoreContext } from '../context'
import type { DelegationStatus } from '../dcv/delegated-dns'
import { persistRecordViews, type PersistRecordView } from '../dcv/dns-persist-view'
import type { UnattendedRenewal } from './renewal-plan'
import { DCV_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'

export interface OrderRenewalView {
  window: RenewalWindowView | null
  delegation: { zone: string; domains: DelegationStatus[] } | null
  dns_persist: PersistRecordView[]
  /** Whether renewals run with nobody, and the switch when they do not (renewal-plan.ts). */
  unattended: UnattendedRenewal | null
}

export async function orderRenewalView(
  ctx: CoreContext,
  settings: Settings,
  issuer: AcmeIssuer,
  orderId: number
): Promise<OrderRenewalView> {
  const req = (await ctx.store.get('SELECT names FROM certificate_requests WHERE order_id = ?', orderId)) as
    { names: string } | undefined
  const order = (await ctx.store.get('SELECT domain, reseller_id FROM orders WHERE id = ?', orderId)) as
    { domain: string; reseller_id: number } | undefined
  const names = req ? (JSON.parse(req.names) as string[]) : order?.domain ? [order.domain] : []
  const zone = await issuer.delegation.zone()
  const acmeOrder = (await issuer.enabled()) && order !== undefined
  // The account this order's reseller proves control with: a record naming any other account
  // (another reseller's) is not this order's authorisation.
  const accountUrl = acmeOrder && names.length ? await issuer.accountUrlFor(orderId, names) : null
  const persistIssuer = await settings.get(ACME_ISSUER_SETTINGS.persistIssuer)
  return {
    window: await issuer.windows.view(orderId),
    delegation:
      zone && acmeOrder && names.length
        ? { zone, domains: await issuer.delegation.status(order.reseller_id, names) }
        : null,
    dns_persist:
      acmeOrder && accountUrl && persistIssuer && names.length
        ? await persistRecordViews({
            domains: names,
            accountUrls: [accountUrl],
            issuerDomain: persistIssuer,
            wildcard: false,
            resolver: (await settings.get(DCV_SETTINGS.resolver)) || null,
            now: ctx.clock()
          })
        : [],
    unattended: order ? await issuer.unattendedRenewal(orderId) : null
  }
}
