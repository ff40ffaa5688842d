/**
 * Delegated DNS validation (RFC 8555 §8.4 dns-01 through a CNAME, as acme.sh's "DNS alias" and
 * Certify The Web's acme-dns do): the customer sets once
 *
 *   _acme-challenge.<domain>.  CNAME  <label>.<zone>.
 *
 * where <zone> is a zone delegated (NS) to CertDesk's authoritative responder
 * (delegated-dns-server.ts). CertDesk then publishes each dns-01 value itself under <label>, so
 * renewals need no customer action and no DNS provider credentials. This module holds the
 * settings, the label of each domain, the published records, and the check that a domain's
 * CNAME is in place.
 */
import { createHash } from 'node:crypto'
import type { CoreContext } from './context'
import { dnsResolver } from './dns-resolver'
import { DCV_SETTINGS, DELEGATED_DNS_SETTINGS } from './setting-keys'
import type { Settings } from './settings'
import { addDays, isoTimestamp } from './time'

/** Values kept per label: an order has one per name, a wildcard and its base share a label. */
export const MAX_VALUES_PER_LABEL = 8
/** dns-01 values older than this are dropped: a CA order is long gone (RFC 8555 §7.1.3). */
const RECORD_LIFETIME_DAYS = 7

/** The zone's name as stored: lower case, no trailing dot; null when delegation is off. */
export async function delegatedZone(settings: Settings): Promise<string | null> {
  const z = await settings.get(DELEGATED_DNS_SETTINGS.zone)
  return z ? z.toLowerCase().replace(/\.$/, '') : null
}

/**
 * The label of a domain under the zone: a digest, so a customer's domain never becomes part
 * of a name CertDesk serves (no injection through the domain), and stable across renewals.
 * A wildcard and its base name prove the same `_acme-challenge` owner (RFC 8555 §8.4).
 */
export function delegationLabel(domain: string): string {
  const base = domain.toLowerCase().replace(/^\*\./, '').replace(/\.$/, '')
  return `d${createHash('sha256').update(base).digest('hex').slice(0, 24)}`
}

export interface DelegationStatus {
  domain: string
  /** The record the customer sets once. */
  cname: { name: string; type: 'CNAME'; value: string }
  /** Whether `_acme-challenge.<domain>` resolves to that target now (through `dcv.dns_resolver`). */
  in_place: boolean
  detail: string
}

export class DelegatedDns {
  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings
  ) {}

  async zone(): Promise<string | null> {
    return await delegatedZone(this.settings)
  }

  async enabled(): Promise<boolean> {
    return (await this.zone()) !== null
  }

  async target(domain: string): Promise<string> {
    const zone = await this.zone()
    if (!zone) throw new Error('could not name the delegation target: no delegated zone is set')
    return `${delegationLabel(domain)}.${zone}`
  }

  /** Publishes a dns-01 value for `domain` (answered at once by the running responder). */
  async publish(domain: string, value: string, orderId: number | null): Promise<void> {
    const now = this.ctx.clock()
    const db = this.ctx.store
    const label = delegationLabel(domain)
    await db.tx(async () => {
      await db.run(
        'DELETE FROM delegated_dns_records WHERE created_at < ?',
        isoTimestamp(addDays(now, -RECORD_LIFETIME_DAYS))
      )
      await db.run(
        'INSERT OR IGNORE INTO delegated_dns_records (label, value, order_id, created_at) VALUES (?, ?, ?, ?)',
        label,
        value,
        orderId,
        isoTimestamp(now)
      )
      // Oldest first out, so a label never holds more than the responder answers with.
      await db.run(
        `DELETE FROM delegated_dns_records WHERE label = ? AND id NOT IN
           (SELECT id FROM delegated_dns_records WHERE label = ? ORDER BY id DESC LIMIT ?)`,
        label,
        label,
        MAX_VALUES_PER_LABEL
      )
    })
  }

  /** Drops an order's values once its certificate is issued (RFC 8555 §8.4 lets clients remove them). */
  async unpublish(orderId: number): Promise<void> {
    await this.ctx.store.run('DELETE FROM delegated_dns_records WHERE order_id = ?', orderId)
  }

  /** What the responder answers for `<label>.<zone>` TXT. */
  async values(label: string): Promise<string[]> {
    return (
      (await this.ctx.store.all(
        'SELECT value FROM delegated_dns_records WHERE label = ? ORDER BY id LIMIT ?',
        label,
        MAX_VALUES_PER_LABEL
      )) as { value: string }[]
    ).map((r) => r.value)
  }

  /** Each domain's CNAME and whether it is in place, read-only (a CNAME lookup, nothing written). */
  async status(domains: string[]): Promise<DelegationStatus[]> {
    const resolver = (await this.settings.get(DCV_SETTINGS.resolver)) || null
    const seen = new Set<string>()
    const out: DelegationStatus[] = []
    for (const d of domains) {
      const domain = d.toLowerCase().replace(/^\*\./, '')
      if (seen.has(domain)) continue
      seen.add(domain)
      const name = `_acme-challenge.${domain}`
      const value = await this.target(domain)
      let inPlace = false
      let detail: string
      try {
        const found = (await dnsResolver(resolver).resolveCname(name)).map((c) => c.toLowerCase().replace(/\.$/, ''))
        inPlace = found.includes(value)
        detail = inPlace ? 'in place' : `${name} points to ${found.join(', ')}, not ${value}`
      } catch (err) {
        detail = `no CNAME at ${name} yet (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
      }
      out.push({ domain, cname: { name, type: 'CNAME', value }, in_place: inPlace, detail })
    }
    return out
  }
}
