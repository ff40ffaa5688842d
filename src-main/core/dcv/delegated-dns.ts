/**
 * Delegated DNS validation (RFC 8555 §8.4 dns-01 through a CNAME, as acme.sh's "DNS alias" and
 * Certify The Web's acme-dns do): the customer sets once
 *
 *   _acme-challenge.<domain>.  CNAME  <label>.<zone>.
 *
 * where <zone> is a zone delegated (NS) to CertDesk's authoritative responder
 * (delegated-dns-server.ts). CertDesk then publishes each dns-01 value itself under <label>, so
 * renewals need no customer action and no DNS provider credentials. This module holds the
 * settings, the label of each name for each reseller, the published records, and the check that
 * a name's CNAME is in place.
 *
 * Whoever can publish under the CNAME's target proves control of the name (RFC 8555 §8.4), so a
 * label belongs to one reseller and one name: a CNAME a customer set for one reseller never
 * carries another reseller's dns-01 value. A second reseller ordering the name gets a label of
 * its own, and its order waits until the customer points the CNAME there.
 */
import { createHash, randomBytes } from 'node:crypto'
import { domainToASCII } from 'node:url'
import type { CoreContext } from '../context'
import { dnsResolver } from './dns-resolver'
import { DCV_SETTINGS, DELEGATED_DNS_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { addDays, isoTimestamp } from '../time'

/** Values kept per label: an order has one per name, a wildcard and its base share a label. */
export const MAX_VALUES_PER_LABEL = 8
/** dns-01 values older than this are dropped: a CA order is long gone (RFC 8555 §7.1.3). */
const RECORD_LIFETIME_DAYS = 7

/** The zone's name as stored: lower case, no trailing dot; null when delegation is off. */
export async function delegatedZone(settings: Settings): Promise<string | null> {
  const z = await settings.get(DELEGATED_DNS_SETTINGS.zone)
  return z ? z.toLowerCase().replace(/\.$/, '') : null
}

/** A name as labels are bound to it: lower case, A-labels (RFC 5891), no wildcard, no final dot. */
export function delegatedName(domain: string): string {
  const base = domain.toLowerCase().replace(/^\*\./, '').replace(/\.$/, '')
  return domainToASCII(base) || base
}

/**
 * The name-only label of schemas 11-15: a digest of the name, the same for every reseller. Kept
 * only by the reseller that alone had ordered the name when labels were bound to resellers
 * (migration 0016), so the CNAMEs its customers set keep working for it and for no one else.
 */
export function legacyDelegationLabel(domain: string): string {
  return `d${createHash('sha256').update(delegatedName(domain)).digest('hex').slice(0, 24)}`
}

/** A new label: 96 random bits, so it tells nothing of the name or the reseller. */
const newLabel = (): string => `d${randomBytes(12).toString('hex')}`

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

  /**
   * The label of `domain` for `resellerId`, made on first use and kept, so it survives renewals
   * and reorders. Made in one statement: two orders of the same reseller racing for a new name
   * end with the same label.
   */
  async label(resellerId: number, domain: string): Promise<string> {
    const name = delegatedName(domain)
    const db = this.ctx.store
    const read = async (): Promise<{ label: string | null; legacy: number } | undefined> =>
      (await db.get(
        'SELECT label, legacy FROM delegation_labels WHERE reseller_id = ? AND domain = ?',
        resellerId,
        name
      )) as { label: string | null; legacy: number } | undefined
    let row = await read()
    if (!row) {
      await db.run(
        'INSERT OR IGNORE INTO delegation_labels (reseller_id, domain, label, legacy, created_at) VALUES (?, ?, ?, 0, ?)',
        resellerId,
        name,
        newLabel(),
        isoTimestamp(this.ctx.clock())
      )
      row = await read()
    }
    if (!row) throw new Error(`could not keep the delegation label of ${name}`)
    return row.legacy === 1 ? legacyDelegationLabel(name) : (row.label as string)
  }

  /** Whether `resellerId` kept `domain` from before labels were bound (and may use the shared account). */
  async isLegacy(resellerId: number, domain: string): Promise<boolean> {
    return (
      (await this.ctx.store.get(
        'SELECT 1 FROM delegation_labels WHERE reseller_id = ? AND domain = ? AND legacy = 1',
        resellerId,
        delegatedName(domain)
      )) !== undefined
    )
  }

  /** `<label>.<zone>`: where the reseller's customer points `_acme-challenge.<domain>`. */
  async target(resellerId: number, domain: string): Promise<string> {
    const zone = await this.zone()
    if (!zone) throw new Error('could not name the delegation target: no delegated zone is set')
    return `${await this.label(resellerId, domain)}.${zone}`
  }

  /** Publishes a reseller's dns-01 value for `domain` (answered at once by the running responder). */
  async publish(resellerId: number, domain: string, value: string, orderId: number | null): Promise<void> {
    const now = this.ctx.clock()
    const db = this.ctx.store
    const label = await this.label(resellerId, domain)
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

  /**
   * Each name's CNAME for this reseller and whether it is in place, read-only (a CNAME lookup).
   * When it is not, `detail` names the exact record the customer must set.
   */
  async status(resellerId: number, domains: string[]): Promise<DelegationStatus[]> {
    const resolver = (await this.settings.get(DCV_SETTINGS.resolver)) || null
    const seen = new Set<string>()
    const out: DelegationStatus[] = []
    for (const d of domains) {
      const domain = delegatedName(d)
      if (seen.has(domain)) continue
      seen.add(domain)
      const name = `_acme-challenge.${domain}`
      const value = await this.target(resellerId, domain)
      const ask = `the customer must set ${name} CNAME ${value}`
      let inPlace = false
      let detail: string
      try {
        const found = (await dnsResolver(resolver).resolveCname(name)).map((c) => c.toLowerCase().replace(/\.$/, ''))
        inPlace = found.includes(value)
        // A CNAME to another target was given to someone else (another reseller, another
        // provider): it authorises only them, never this order.
        detail = inPlace ? 'in place' : `${name} points to ${found.join(', ')}, not to this order's target; ${ask}`
      } catch (err) {
        detail = `no CNAME at ${name} yet (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); ${ask}`
      }
      out.push({ domain, cname: { name, type: 'CNAME', value }, in_place: inPlace, detail })
    }
    return out
  }
}
