/**
 * The ACME accounts CertDesk holds at the external CA: one per reseller (RFC 8555 §7.3), each
 * bound with the CA's External Account Binding (§7.3.4). An account is what a dns-persist-01
 * record authorises (draft-ietf-acme-dns-persist §3, `accounturi`) and what a CA reuses valid
 * authorizations for (§7.1.3), so one account for every reseller would let one reseller's
 * customer's record, or its fresh validation, get a certificate for any other reseller. With an
 * account per reseller the CA itself, not only CertDesk, refuses another reseller's order.
 *
 * The account CertDesk had before (one for everyone, `issuer.acme.account_url`) is kept only for
 * names that a single reseller had ordered through it (migration 0016), and only for that
 * reseller, so records its customers published keep working for it. No new order of a name that
 * another reseller could have been shown starts there.
 */
import { Agent } from 'node:https'
import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import * as acme from 'acme-client'
import type { CoreContext } from '../context'
import { ServiceError } from '../errors'
import type { Settings } from '../settings/settings'
import { isoTimestamp } from '../time'

export const ACME_ISSUER_SETTINGS = {
  /** The external CA's directory; CertDesk issues TLS orders there while it is set. */
  directoryUrl: 'issuer.acme.directory_url',
  /** EAB key id the CA gave; its HMAC key is in the keychain (`issuer.acme/eab-hmac`). */
  eabKid: 'issuer.acme.eab_kid',
  /** Optional PEM file of extra roots to trust for the directory's HTTPS (a private or test CA). */
  caBundle: 'issuer.acme.ca_bundle',
  /** The one account URL of schemas 6-15, kept for the names bound to it (see above). */
  accountUrl: 'issuer.acme.account_url',
  /** The issuer domain name the CA's dns-persist-01 challenges named last (shown with the record). */
  persistIssuer: 'issuer.acme.persist_issuer'
} as const

export const EAB_SECRET = 'issuer.acme/eab-hmac'
/** The key of the shared account of before. */
const SHARED_ACCOUNT_KEY = 'issuer.acme/account-key'
/** Each reseller's account key. */
export const resellerAccountKey = (resellerId: number): string => `issuer.acme/account-key/reseller-${resellerId}`

/** Polling the CA after a challenge answer: RFC 8555 §7.5.1 leaves the pace to the client. */
const POLL = { attempts: 12, minMs: 250, maxMs: 2000 }

/** An account at the external CA: a reseller's, or (null) the shared one of before. */
export type AccountOwner = number | null

export interface AccountSummary {
  reseller_id: number
  account_url: string
}

export class IssuerAccounts {
  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings
  ) {}

  async directoryUrl(): Promise<string> {
    return (await this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl)) ?? ''
  }

  /**
   * The account an order's new CA orders go through: the shared account of before only when
   * every name was bound to this reseller before accounts were (`isLegacy`) and that account
   * still exists at this CA; the reseller's own account otherwise.
   */
  async ownerFor(
    resellerId: number,
    names: string[],
    isLegacy: (name: string) => Promise<boolean>
  ): Promise<AccountOwner> {
    const shared = Boolean(await this.settings.get(ACME_ISSUER_SETTINGS.accountUrl))
    if (!shared || names.length === 0) return resellerId
    for (const n of names) if (!(await isLegacy(n))) return resellerId
    return null
  }

  /** The account's URL when it is registered at the configured CA, without registering it. */
  async url(owner: AccountOwner): Promise<string | null> {
    if (owner === null) return (await this.settings.get(ACME_ISSUER_SETTINGS.accountUrl)) || null
    const row = (await this.ctx.store.get(
      'SELECT account_url, directory_url FROM acme_issuer_accounts WHERE reseller_id = ?',
      owner
    )) as { account_url: string; directory_url: string } | undefined
    return row && row.directory_url === (await this.directoryUrl()) ? row.account_url : null
  }

  /** Every reseller's account at the configured CA (what the admin sees). */
  async list(): Promise<AccountSummary[]> {
    return (await this.ctx.store.all(
      'SELECT reseller_id, account_url FROM acme_issuer_accounts WHERE directory_url = ? ORDER BY reseller_id',
      await this.directoryUrl()
    )) as AccountSummary[]
  }

  /** A new CA means new accounts: the keys and URLs of the old one are dropped. */
  async forgetAll(): Promise<void> {
    const ids = (await this.ctx.store.column('SELECT reseller_id FROM acme_issuer_accounts')) as number[]
    for (const id of ids) await this.ctx.secrets.delete(resellerAccountKey(id))
    await this.ctx.store.run('DELETE FROM acme_issuer_accounts')
    await this.ctx.secrets.delete(SHARED_ACCOUNT_KEY)
    await this.settings.set(ACME_ISSUER_SETTINGS.accountUrl, '')
  }

  /**
   * An acme-client for the configured CA as `owner`, its account registered (with EAB) on first
   * use. Registrations of one reseller run one at a time: two orders starting together must not
   * each register an account and leave one order with a key the keychain no longer holds.
   */
  async client(owner: AccountOwner): Promise<acme.Client> {
    if (owner !== null) {
      let pending = this.registering.get(owner)
      if (!pending) {
        pending = this.register(owner).finally(() => this.registering.delete(owner))
        this.registering.set(owner, pending)
      }
      await pending
    }
    const keyName = owner === null ? SHARED_ACCOUNT_KEY : resellerAccountKey(owner)
    const accountKey = await this.ctx.secrets.get(keyName)
    const accountUrl = await this.url(owner)
    if (!accountKey || !accountUrl)
      throw new ServiceError(
        'unavailable',
        owner === null
          ? 'could not reach the ACME CA: the account CertDesk shared before accounts were per reseller is gone'
          : "could not reach the ACME CA: the reseller's account key is missing from the OS keychain"
      )
    return await this.newClient(accountKey, accountUrl)
  }

  private readonly registering = new Map<number, Promise<void>>()

  /** Registers the reseller's account unless its key and URL are both in place. */
  private async register(owner: number): Promise<void> {
    const keyName = resellerAccountKey(owner)
    if ((await this.ctx.secrets.get(keyName)) && (await this.url(owner))) return
    // A key without a registered account (a registration that failed half-way) is replaced.
    const accountKey = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString()
    const client = await this.newClient(accountKey, undefined)
    try {
      await client.createAccount({ termsOfServiceAgreed: true })
    } catch (err) {
      throw new ServiceError(
        'unavailable',
        `could not register the ACME account at ${await this.directoryUrl()}: ${err instanceof Error ? err.message : String(err)}`
      )
    }
    await this.ctx.secrets.set(keyName, accountKey)
    await this.ctx.store.run(
      `INSERT INTO acme_issuer_accounts (reseller_id, directory_url, account_url, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(reseller_id) DO UPDATE SET directory_url = excluded.directory_url, account_url = excluded.account_url,
           created_at = excluded.created_at`,
      owner,
      await this.directoryUrl(),
      client.getAccountUrl(),
      isoTimestamp(this.ctx.clock())
    )
  }

  private async newClient(accountKey: string, accountUrl: string | undefined): Promise<acme.Client> {
    const bundle = await this.settings.get(ACME_ISSUER_SETTINGS.caBundle)
    if (bundle) {
      // acme-client talks through its own axios instance; extra roots are added there.
      acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, readFileSync(bundle, 'utf8')] })
    }
    const kid = await this.settings.get(ACME_ISSUER_SETTINGS.eabKid)
    const hmacKey = kid ? await this.ctx.secrets.get(EAB_SECRET) : null
    if (kid && !hmacKey)
      throw new ServiceError(
        'unavailable',
        'could not reach the ACME CA: its EAB HMAC key is missing from the OS keychain'
      )
    return new acme.Client({
      directoryUrl: await this.directoryUrl(),
      accountKey,
      accountUrl,
      ...(kid && hmacKey ? { externalAccountBinding: { kid, hmacKey } } : {}),
      backoffAttempts: POLL.attempts,
      backoffMin: POLL.minMs,
      backoffMax: POLL.maxMs
    })
  }
}
