/**
 * ACME orders (RFC 8555 §7.4): placed under the account's subscription for names it covers,
 * each name with its authorization and challenges, optionally replacing an earlier certificate
 * (RFC 9773 §5); an order's status follows its authorizations (§7.1.6).
 */
import { randomBytes } from 'node:crypto'
import type { AcmeSubscriptions } from './acme-subscriptions'
import type { CoreContext } from '../context'
import { ServiceError } from '../errors'
import { addDays, isoTimestamp } from '../time'
import { AcmeError, noSuch } from './errors'
import { publicId, storedTime, type AcmeAccount, type AcmeOrder, type CertRow, type OrderRow } from './records'

/** Orders and authorizations not completed within a week expire (RFC 8555 §7.1.3 leaves it to the server). */
export const PENDING_LIFETIME_DAYS = 7

/** §8.1: a token holds at least 128 bits of entropy; 256 here. */
const challengeToken = (): string => randomBytes(32).toString('base64url')

export class AcmeOrders {
  constructor(
    private readonly ctx: CoreContext,
    private readonly subscriptions: AcmeSubscriptions,
    /** The issuer domain name dns-persist-01 challenges offer (challenges.ts). */
    private readonly persistIssuer: () => Promise<string> = async () => 'localhost'
  ) {}

  /**
   * §7.4: a new order for `identifiers` (DNS names), each checked against the subscription.
   * `replaces` (RFC 9773 §5) must name a certificate of this account not replaced yet.
   */
  async create(account: AcmeAccount, identifiers: string[], replaces?: string): Promise<AcmeOrder> {
    const sub = await this.subscriptions.byId(account.subscriptionId)
    let names: string[]
    try {
      names = this.subscriptions.checkOrder(sub, identifiers)
    } catch (err) {
      if (err instanceof ServiceError)
        throw new AcmeError('rejectedIdentifier', `could not create the order: ${err.message}`)
      throw err
    }
    const db = this.ctx.store
    const now = this.ctx.clock()
    const expires = isoTimestamp(addDays(now, PENDING_LIFETIME_DAYS))
    const orderPid = publicId()
    await db.tx(async () => {
      let replacing: string | null = null
      if (replaces !== undefined) {
        const old = (await db.get('SELECT * FROM acme_certificates WHERE ari_id = ?', replaces)) as CertRow | undefined
        if (!old || old.account_id !== account.id)
          throw new AcmeError('malformed', 'replaces does not name a certificate of this account')
        if (old.replaced_by) throw new AcmeError('alreadyReplaced', 'that certificate was already replaced')
        replacing = old.ari_id
      }
      const info = await db.insert(
        `INSERT INTO acme_orders (public_id, account_id, status, identifiers, replaces, expires_at, created_at) VALUES (?, ?, 'pending', ?, ?, ?, ?)`,
        orderPid,
        account.id,
        JSON.stringify(names),
        replacing,
        expires,
        isoTimestamp(now)
      )
      const orderId = info
      for (const name of names) {
        const wildcard = name.startsWith('*.')
        const z = await db.insert(
          `INSERT INTO acme_authorizations (public_id, order_id, identifier, wildcard, status, expires_at) VALUES (?, ?, ?, ?, 'pending', ?)`,
          publicId(),
          orderId,
          wildcard ? name.slice(2) : name,
          wildcard ? 1 : 0,
          expires
        )
        // §7.1.4 / §8.3: a wildcard can only be proven through DNS. dns-persist-01 has no token:
        // its row keeps the issuer domain name it offers (draft-ietf-acme-dns-persist §3).
        const types = wildcard ? ['dns-01', 'dns-persist-01'] : ['http-01', 'dns-01', 'dns-persist-01']
        for (const type of types) {
          await db.run(
            `INSERT INTO acme_challenges (public_id, authz_id, type, token, status) VALUES (?, ?, ?, ?, 'pending')`,
            publicId(),
            z,
            type,
            type === 'dns-persist-01' ? await this.persistIssuer() : challengeToken()
          )
        }
      }
    })
    return await this.view((await this.rowByPublicId(orderPid)) as OrderRow)
  }

  /** An order of this account, its status brought up to date (§7.1.6). */
  async get(account: AcmeAccount, orderPublicId: string): Promise<AcmeOrder> {
    return await this.view(await this.owned(account, orderPublicId))
  }

  /** §7.1.2.1: the account's orders still in progress, newest first. */
  async listOpen(account: AcmeAccount): Promise<string[]> {
    const rows = (await this.ctx.store.all(
      `SELECT public_id FROM acme_orders WHERE account_id = ? AND status IN ('pending', 'ready', 'processing') ORDER BY id DESC`,
      account.id
    )) as { public_id: string }[]
    return rows.map((r) => r.public_id)
  }

  /** The stored order row of this account, refreshed; for the other ACME core modules. */
  async owned(account: AcmeAccount, orderPublicId: string): Promise<OrderRow> {
    const o = await this.rowByPublicId(orderPublicId)
    if (!o || o.account_id !== account.id) throw noSuch('order')
    return await this.refresh(o)
  }

  async view(o: OrderRow): Promise<AcmeOrder> {
    const db = this.ctx.store
    const authz = (await db.all('SELECT public_id FROM acme_authorizations WHERE order_id = ? ORDER BY id', o.id)) as {
      public_id: string
    }[]
    const cert = (await db.get('SELECT public_id FROM acme_certificates WHERE order_id = ?', o.id)) as
      { public_id: string } | undefined
    return {
      id: o.id,
      publicId: o.public_id,
      accountId: o.account_id,
      status: o.status,
      identifiers: JSON.parse(o.identifiers) as string[],
      replaces: o.replaces,
      error: o.error ? (JSON.parse(o.error) as Record<string, unknown>) : null,
      expiresAt: storedTime(o.expires_at),
      authorizationIds: authz.map((a) => a.public_id),
      certificateId: cert?.public_id ?? null
    }
  }

  async rowById(id: number): Promise<OrderRow> {
    return (await this.ctx.store.get('SELECT * FROM acme_orders WHERE id = ?', id)) as OrderRow
  }

  private async rowByPublicId(orderPublicId: string): Promise<OrderRow | undefined> {
    return (await this.ctx.store.get('SELECT * FROM acme_orders WHERE public_id = ?', orderPublicId)) as
      OrderRow | undefined
  }

  /** §7.1.6: a pending order is ready once every authorization is valid, invalid once one is not. */
  private async refresh(o: OrderRow): Promise<OrderRow> {
    if (o.status !== 'pending') return o
    const statuses = (
      (await this.ctx.store.all('SELECT status FROM acme_authorizations WHERE order_id = ? ORDER BY id', o.id)) as {
        status: string
      }[]
    ).map((a) => a.status)
    let next: OrderRow['status'] = o.status
    if (statuses.some((s) => s !== 'pending' && s !== 'valid')) next = 'invalid'
    else if (statuses.every((s) => s === 'valid')) next = 'ready'
    else if (storedTime(o.expires_at).getTime() < this.ctx.clock().getTime()) next = 'invalid'
    if (next !== o.status)
      await this.ctx.store.run(`UPDATE acme_orders SET status = ? WHERE id = ? AND status = 'pending'`, next, o.id)
    return { ...o, status: next }
  }
}
