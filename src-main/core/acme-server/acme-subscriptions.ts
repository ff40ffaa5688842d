/**
 * ACME subscriptions (spec "ACME subscription details"): a yearly subscription product is
 * fulfilled by External Account Binding credentials for the embedded ACME server instead of a
 * CSR. The rules live here: which names a subscription covers, how long it runs, which
 * certificate lifetime it may get; the RFC 8555 protocol lives in src-main/acme.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Product } from '../billing/catalogue'
import type { CoreContext } from '../context'
import { inOrder } from '../pool'
import { baseDomain, isWildcard } from '../dcv/domains'
import { forbidden, invalid, notFound, ServiceError } from '../errors'
import { maxValidityDays } from '../certificates/cab-policy'
import { keepNewSecret } from '../secrets'
import type { Order } from '../../../src-shared/records'
import { addMonths, isoDate, isoTimestamp, parseDate } from '../time'

export type AcmeCategory = 'caas' | 'ais'

export interface AcmeDomain {
  id: string
  name: string
}

export interface AcmeAccountSummary {
  id: number
  status: string
  createdAt: string
}

export interface AcmeSubscription {
  id: number
  orderId: number
  resellerId: number
  category: AcmeCategory
  status: 'active' | 'cancelled' | 'expired'
  eabKid: string
  wildcard: boolean
  beginDate: string
  endDate: string | null
  contactEmail: string | null
  domains: AcmeDomain[]
  accounts: AcmeAccountSummary[]
}

export interface AcmeDetails extends AcmeSubscription {
  eabHmacKey: string
  nextRenewal: string
  /** Names an ACME order of this subscription may carry (the domains, plus `*.bare` for wildcard products). */
  allowedIdentifiers: string[]
  setupToken: string | null
}

interface SubscriptionRow {
  id: number
  order_id: number
  reseller_id: number
  category: AcmeCategory
  status: AcmeSubscription['status']
  eab_kid: string
  wildcard: number
  begin_date: string
  end_date: string | null
  contact_email: string | null
}

/**
 * Keychain entry names; the values never reach SQLite (docs/security.md, "Secrets live in the OS
 * keychain").
 */
export const eabSecretName = (kid: string): string => `acme-eab/${kid}`
const setupSecretName = (subscriptionId: number): string => `acme-setup/${subscriptionId}`

const token = (bytes: number): string => randomBytes(bytes).toString('base64url')

/**
 * A base64url secret that does not start with '-': command-line parsers (certbot's argparse)
 * read `--eab-hmac-key -abc` as a missing value followed by an option.
 */
function pasteableToken(bytes: number): string {
  for (;;) {
    const t = token(bytes)
    if (!t.startsWith('-')) return t
  }
}
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex')

/**
 * The names a subscription covers, as the spec's sample lists them: the bare domain and its
 * www form. A wildcard-only product is ordered as `*.example.com`; its bare domain and www
 * form are listed, and the wildcard itself may be ordered too.
 */
export function subscriptionDomains(orderDomain: string): { bare: string; names: string[]; wildcard: boolean } {
  const wildcard = isWildcard(orderDomain)
  let bare = baseDomain(orderDomain)
  // `www.example.com` ordered on a single-name product still means the site example.com.
  if (!wildcard && bare.startsWith('www.') && bare.split('.').length > 2) bare = bare.slice(4)
  return { bare, names: [bare, `www.${bare}`], wildcard }
}

export class AcmeSubscriptions {
  constructor(private readonly ctx: CoreContext) {}

  /**
   * Creates the subscription of a just-paid order: EAB credentials (HMAC key in the keychain
   * first, so a keychain failure leaves no row behind), the covered names, and for `ais` the
   * set-up link token. Throws when it cannot; the caller then cancels and refunds the order.
   */
  async create(order: Order, product: Product): Promise<AcmeSubscription> {
    if (product.fulfillment !== 'acme_subscription')
      throw invalid(`${product.name} is not an ACME subscription product`)
    const category: AcmeCategory = product.acmeType ?? 'caas'
    const kid = `kid_${token(12)}`
    await keepNewSecret(this.ctx.secrets, eabSecretName(kid), () => pasteableToken(32))
    const db = this.ctx.store
    const now = this.ctx.clock()
    const { names, wildcard } = subscriptionDomains(order.domain)
    const setup = category === 'ais' ? token(24) : null
    try {
      const id = await db.tx(async () => {
        const id = await db.insert(
          `INSERT INTO acme_subscriptions (order_id, reseller_id, category, status, eab_kid, wildcard, setup_token_hash,
               begin_date, end_date, created_at) VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)`,
          order.id,
          order.resellerId,
          category,
          kid,
          wildcard ? 1 : 0,
          setup ? sha256(setup) : null,
          isoDate(now),
          order.purchaseEndDate,
          isoTimestamp(now)
        )
        for (const [i, name] of names.entries()) {
          await db.run(
            'INSERT INTO acme_subscription_domains (subscription_id, public_id, name, position) VALUES (?, ?, ?, ?)',
            id,
            `dom_${token(9)}`,
            name,
            i
          )
        }
        return id
      })
      // The link token under the row's id, once the row is committed (a transaction may run
      // twice, a keychain write must not); without it the subscription does not stay.
      if (setup) {
        try {
          await this.ctx.secrets.set(setupSecretName(id), setup)
        } catch (err) {
          await db.tx(async () => {
            await db.run('DELETE FROM acme_subscription_domains WHERE subscription_id = ?', id)
            await db.run('DELETE FROM acme_subscriptions WHERE id = ?', id)
          })
          throw err
        }
      }
      return await this.byId(id)
    } catch (err) {
      await this.forget(kid)
      throw err
    }
  }

  async byId(id: number): Promise<AcmeSubscription> {
    const row = (await this.ctx.store.get(`${SELECT} WHERE s.id = ?`, id)) as SubscriptionRow | undefined
    if (!row) throw notFound(`ACME subscription ${id} not found`)
    return await this.toSubscription(row)
  }

  /** A reseller's subscriptions, newest first (the desktop app's ACME panel). */
  async list(resellerId: number): Promise<AcmeSubscription[]> {
    const rows = (await this.ctx.store.all(
      `${SELECT} WHERE s.reseller_id = ? ORDER BY s.id DESC`,
      resellerId
    )) as SubscriptionRow[]
    return inOrder(rows, (r) => this.toSubscription(r))
  }

  /** The subscription of a reseller's order; 404 for another reseller's order or a non-ACME order. */
  async forOrder(resellerId: number, orderId: number): Promise<AcmeSubscription> {
    const row = (await this.ctx.store.get(
      `${SELECT} WHERE s.order_id = ? AND s.reseller_id = ?`,
      orderId,
      resellerId
    )) as SubscriptionRow | undefined
    if (!row) throw notFound(`order ${orderId} has no ACME subscription`)
    return await this.toSubscription(row)
  }

  /** The subscription of an order, or null when the order is not an ACME subscription. */
  async summaryForOrder(resellerId: number, orderId: number): Promise<AcmeSubscription | null> {
    const row = (await this.ctx.store.get(
      `${SELECT} WHERE s.order_id = ? AND s.reseller_id = ?`,
      orderId,
      resellerId
    )) as SubscriptionRow | undefined
    return row ? await this.toSubscription(row) : null
  }

  async byKid(kid: string): Promise<AcmeSubscription | null> {
    const row = (await this.ctx.store.get(`${SELECT} WHERE s.eab_kid = ?`, kid)) as SubscriptionRow | undefined
    return row ? await this.toSubscription(row) : null
  }

  async bySetupToken(setupToken: string): Promise<AcmeSubscription | null> {
    const row = (await this.ctx.store.get(`${SELECT} WHERE s.setup_token_hash = ?`, sha256(setupToken))) as
      SubscriptionRow | undefined
    return row ? await this.toSubscription(row) : null
  }

  /** Everything GET /orders/{id}/acme shows, including the EAB HMAC key read from the keychain. */
  async details(sub: AcmeSubscription): Promise<AcmeDetails> {
    const eabHmacKey = await this.hmacKey(sub.eabKid)
    const setupToken = sub.category === 'ais' ? await this.ctx.secrets.get(setupSecretName(sub.id)) : null
    return {
      ...sub,
      eabHmacKey,
      nextRenewal: this.nextRenewal(sub),
      allowedIdentifiers: allowedIdentifiers(sub),
      setupToken
    }
  }

  async hmacKey(kid: string): Promise<string> {
    const key = await this.ctx.secrets.get(eabSecretName(kid))
    if (!key)
      throw new ServiceError('unavailable', `could not read the EAB key of ${kid}: it is missing from the OS keychain`)
    return key
  }

  /**
   * The yearly renewal date: the next anniversary of the start that falls before the end of
   * the paid period, else the end itself.
   */
  nextRenewal(sub: AcmeSubscription): string {
    const begin = parseDate(sub.beginDate)
    const today = isoDate(this.ctx.clock())
    for (let months = 12; ; months += 12) {
      const at = isoDate(addMonths(begin, months))
      if (sub.endDate && at >= sub.endDate) return sub.endDate
      if (at > today) return at
    }
  }

  /**
   * Checks that an ACME order may be placed under this subscription (RFC 8555 §7.4 leaves the
   * policy to the server): the subscription is active and not past its end, and every name is
   * one it covers. Returns the names lower-cased.
   */
  checkOrder(sub: AcmeSubscription, identifiers: string[]): string[] {
    const today = isoDate(this.ctx.clock())
    if (sub.status !== 'active' || (sub.endDate && today >= sub.endDate)) {
      throw forbidden(
        `the subscription of order ${sub.orderId} is ${sub.status === 'active' ? 'past its end' : sub.status} (it ended ${sub.endDate ?? 'never'})`
      )
    }
    if (identifiers.length === 0) throw invalid('an order needs at least one identifier')
    const allowed = new Set(allowedIdentifiers(sub))
    const names = identifiers.map((n) => n.toLowerCase().replace(/\.$/, ''))
    const outside = names.filter((n) => !allowed.has(n))
    if (outside.length > 0) {
      throw forbidden(
        `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not covered by this subscription (it covers ${[...allowed].join(', ')})`
      )
    }
    return [...new Set(names)]
  }

  /**
   * The validity of a certificate issued now: the CA/B Forum maximum for today (BR §6.3.2 as
   * amended by SC-081), cut at the end of the paid subscription. Ends one second early because
   * the Baseline Requirements count validity inclusively.
   */
  certificateWindow(sub: AcmeSubscription, now: Date): { notBefore: Date; notAfter: Date } {
    const max = new Date(now.getTime() + maxValidityDays(now) * 86_400_000 - 1000)
    const end = sub.endDate ? new Date(parseDate(sub.endDate).getTime() - 1000) : max
    return { notBefore: now, notAfter: end.getTime() < max.getTime() ? end : max }
  }

  /** Removes the keychain entries of a subscription that was never stored. */
  private async forget(kid: string): Promise<void> {
    try {
      await this.ctx.secrets.delete(eabSecretName(kid))
    } catch {
      // The keychain already failed once; a stray random key without a row grants nothing.
    }
  }

  private async toSubscription(r: SubscriptionRow): Promise<AcmeSubscription> {
    const domains = (await this.ctx.store.all(
      'SELECT public_id AS id, name FROM acme_subscription_domains WHERE subscription_id = ? ORDER BY position',
      r.id
    )) as AcmeDomain[]
    const accounts = (await this.ctx.store.all(
      'SELECT id, status, created_at AS createdAt FROM acme_accounts WHERE subscription_id = ? ORDER BY id',
      r.id
    )) as AcmeAccountSummary[]
    // Past its end a subscription reads as expired (reseller API v3.0, "Order statuses"),
    // whether or not a pass stored it.
    const ended = r.status === 'active' && r.end_date !== null && isoDate(this.ctx.clock()) >= r.end_date
    return {
      id: r.id,
      orderId: r.order_id,
      resellerId: r.reseller_id,
      category: r.category,
      status: ended ? 'expired' : r.status,
      eabKid: r.eab_kid,
      wildcard: r.wildcard === 1,
      beginDate: r.begin_date,
      endDate: r.end_date,
      contactEmail: r.contact_email,
      domains,
      accounts
    }
  }
}

const SELECT = `SELECT s.*, o.contact_email FROM acme_subscriptions s JOIN orders o ON o.id = s.order_id`

export function allowedIdentifiers(sub: Pick<AcmeSubscription, 'domains' | 'wildcard'>): string[] {
  const names = sub.domains.map((d) => d.name)
  return sub.wildcard ? [...names, `*.${names[0]}`] : names
}

/** The embedded ACME server's settings key, loopback port and public paths (client-setup.ts builds the addresses). */
export const ACME_DIRECTORY_URL_SETTING = 'acme_server.directory_url'
export const DEFAULT_ACME_PORT = 7781
export const ACME_ROOT_CA_PATH = '/acme/root-ca.pem'
export const ACME_SETUP_PREFIX = '/acme/setup/'
/** The file the set-up commands save the root certificate to and point the clients at. */
export const ROOT_CA_FILE = 'certdesk-root.pem'
