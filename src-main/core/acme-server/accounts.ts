/**
 * ACME accounts (RFC 8555 §7.3): bound to an ACME subscription through its External Account
 * Binding (§7.3.4), updated or deactivated by their holder (§7.3.2, §7.3.6), and rolled over to a
 * new key (§7.3.5). The signatures are checked by the protocol layer before any of this runs.
 */
import type { JsonWebKey } from 'node:crypto'
import type { AcmeSubscriptions } from './acme-subscriptions'
import type { CoreContext } from '../context'
import { isoTimestamp } from '../time'
import { AcmeError } from './errors'
import { accountOf, type AccountRow, type AcmeAccount } from './records'

export interface NewAccount {
  /** The EAB key id the binding was MACed with (already verified). */
  eabKid: string
  jwk: JsonWebKey
  thumbprint: string
  contact: unknown
}

export interface AccountUpdate {
  contact?: unknown
  status?: unknown
}

/** What a key change did: the account with its new key, or the account that already holds it. */
export type KeyChange = { changed: AcmeAccount } | { takenBy: number }

/** §7.3: contacts are URLs; anything that is not a string is dropped, as before any change. */
const contactsOf = (v: unknown[]): string[] => v.filter((c): c is string => typeof c === 'string')

export class AcmeAccounts {
  constructor(
    private readonly ctx: CoreContext,
    private readonly subscriptions: AcmeSubscriptions
  ) {}

  async get(id: number): Promise<AcmeAccount | null> {
    return await this.row(id)
  }

  /** §7.3.1: an account is found by its key. */
  async byThumbprint(thumbprint: string): Promise<AcmeAccount | null> {
    const row = (await this.ctx.store.get('SELECT * FROM acme_accounts WHERE thumbprint = ?', thumbprint)) as
      AccountRow | undefined
    return row ? accountOf(row) : null
  }

  /** The EAB HMAC key of a subscription's key id, or null when no subscription has that id. */
  async eabHmacKey(kid: string): Promise<string | null> {
    return (await this.subscriptions.byKid(kid)) ? await this.subscriptions.hmacKey(kid) : null
  }

  /** §7.3.4: a new account, bound to the subscription whose EAB key id signed the request. */
  async create(a: NewAccount): Promise<AcmeAccount> {
    const sub = await this.subscriptions.byKid(a.eabKid)
    if (!sub) throw new AcmeError('unauthorized', 'could not bind the account: unknown EAB key id')
    if (sub.status !== 'active')
      throw new AcmeError('unauthorized', `could not bind the account: the subscription is ${sub.status}`)
    const contact = Array.isArray(a.contact) ? contactsOf(a.contact) : []
    const info = await this.ctx.store.insert(
      `INSERT INTO acme_accounts (subscription_id, thumbprint, jwk, contact, status, created_at) VALUES (?, ?, ?, ?, 'valid', ?)`,
      sub.id,
      a.thumbprint,
      JSON.stringify(a.jwk),
      JSON.stringify(contact),
      isoTimestamp(this.ctx.clock())
    )
    return (await this.row(info)) as AcmeAccount
  }

  /**
   * §7.3.2 contact update and §7.3.6 deactivation. The request is checked whole before anything
   * is written, so a refused update changes nothing.
   */
  async update(account: AcmeAccount, u: AccountUpdate): Promise<AcmeAccount> {
    if (u.status !== undefined && u.status !== 'deactivated')
      throw new AcmeError('malformed', 'the only status a client may set is deactivated')
    const db = this.ctx.store
    await db.tx(async () => {
      if (Array.isArray(u.contact)) {
        await db.run(
          'UPDATE acme_accounts SET contact = ? WHERE id = ?',
          JSON.stringify(contactsOf(u.contact)),
          account.id
        )
      }
      if (u.status === 'deactivated')
        await db.run(`UPDATE acme_accounts SET status = 'deactivated' WHERE id = ?`, account.id)
    })
    return (await this.row(account.id)) as AcmeAccount
  }

  /** §7.3.5: the account moves to a new key, unless another account already holds that key. */
  async changeKey(account: AcmeAccount, jwk: JsonWebKey, thumbprint: string): Promise<KeyChange> {
    const db = this.ctx.store
    return await db.tx(async (): Promise<KeyChange> => {
      const taken = (await db.get('SELECT id FROM acme_accounts WHERE thumbprint = ?', thumbprint)) as
        { id: number } | undefined
      if (taken) return { takenBy: taken.id }
      await db.run(
        'UPDATE acme_accounts SET jwk = ?, thumbprint = ? WHERE id = ?',
        JSON.stringify(jwk),
        thumbprint,
        account.id
      )
      return { changed: (await this.row(account.id)) as AcmeAccount }
    })
  }

  private async row(id: number): Promise<AcmeAccount | null> {
    const row = (await this.ctx.store.get('SELECT * FROM acme_accounts WHERE id = ?', id)) as AccountRow | undefined
    return row ? accountOf(row) : null
  }
}
