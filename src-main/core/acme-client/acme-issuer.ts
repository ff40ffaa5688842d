/**
 * The ACME issuer: TLS orders fulfilled by an external RFC 8555 CA through `acme-client`, with
 * External Account Binding (§7.3.4). Directory URL and EAB key id are settings; the EAB HMAC
 * key and the ACME account key live in the OS keychain. Code signing always stays with the
 * local CA (ACME issues TLS server certificates only).
 *
 * An external CA validates the names itself, so while it is configured it also owns domain
 * validation of TLS orders: the order's DCV method maps http → http-01 and dns → dns-01
 * (RFC 8555 §8.3, §8.4), the validation instructions are the CA's challenge values, and a
 * check asks the CA to validate. Email (and https, which ACME has no challenge for) are refused.
 */
import { Agent } from 'node:https'
import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import * as acme from 'acme-client'
import { ACME_ISSUER_SETTINGS, EAB_SECRET, IssuerAccounts, type AccountOwner } from './acme-issuer-accounts'
import { isAcmeProduct, type Product } from '../billing/catalogue'
import type { CoreContext } from '../context'
import { ChallengeFailure } from '../dcv/acme-challenges'
import {
  IssuerChallenges,
  type ChallengeState,
  type ExternalInstructions,
  type OfferedChallenge
} from './acme-issuer-challenges'
import { RenewalWindows } from './ari'
import { RenewalTracking } from './ari-tracking'
import type { CheckResult, DcvMethod } from '../dcv/dcv'
import { DelegatedDns } from '../dcv/delegated-dns'
import type { ExternalRevocation } from '../certificates/revocation'
import { conflict, invalid, ServiceError } from '../errors'
import {
  RenewalNeedsCustomer,
  type ExternalValidation,
  type IssueRequest,
  type IssuedCertificate,
  type Issuer
} from '../certificates/issuer'
import { checkReadiness, type NotReady } from './renewal-readiness'
import { renewalBases, unattendedPlan, type RenewalMethod, type UnattendedRenewal } from './renewal-plan'
import type { Settings } from '../settings/settings'
import { isoTimestamp, parseDate } from '../time'
import { x509 } from '../certificates/x509'

export { ACME_ISSUER_SETTINGS } from './acme-issuer-accounts'
export type { ExternalInstructions } from './acme-issuer-challenges'

interface OrderRow {
  order_id: number
  directory_url: string
  order_url: string
  challenges: string
  /** The account the CA order was created with: a reseller's, or null for the shared one of before. */
  account_reseller_id: number | null
}

export class AcmeIssuer implements Issuer, ExternalValidation, ExternalRevocation {
  readonly name = 'acme'
  /** The zone delegated to CertDesk, where it answers dns-01 itself. */
  readonly delegation: DelegatedDns
  /** RFC 9773 renewal windows of the certificates issued here. */
  readonly windows: RenewalWindows
  /** One ACME account per reseller at the external CA. */
  readonly accounts: IssuerAccounts
  /** The challenges CertDesk answers and how it looks before asking the CA. */
  private readonly challenges: IssuerChallenges
  /** Keeps each certificate's RFC 9773 window and looks at it again when the CA says. */
  private readonly tracking: RenewalTracking

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly fallback: Issuer
  ) {
    this.delegation = new DelegatedDns(ctx, settings)
    this.windows = new RenewalWindows(ctx)
    this.tracking = new RenewalTracking(this.windows, () => ctx.clock(), {
      directoryUrl: () => this.directoryUrl(),
      agent: () => this.agent(),
      enabled: () => this.enabled()
    })
    this.accounts = new IssuerAccounts(ctx, settings)
    this.challenges = new IssuerChallenges(ctx, settings, this.delegation, (id) => this.resellerOf(id))
  }

  /** Stores the connection to an external CA; the HMAC key goes to the keychain only. */
  async configure(
    directoryUrl: string,
    eabKid: string | null,
    eabHmacKey: string | null,
    caBundle?: string | null
  ): Promise<void> {
    let u: URL
    try {
      u = new URL(directoryUrl)
    } catch {
      throw invalid(`could not configure the ACME issuer: ${directoryUrl} is not a URL`)
    }
    if (u.protocol !== 'https:')
      throw invalid('could not configure the ACME issuer: the directory must be an https:// URL (RFC 8555 §6.1)')
    if ((eabKid === null) !== (eabHmacKey === null))
      throw invalid('could not configure the ACME issuer: give both the EAB key id and its HMAC key, or neither')
    if (eabHmacKey !== null && !/^[A-Za-z0-9_-]+=*$/.test(eabHmacKey))
      throw invalid('could not configure the ACME issuer: the EAB HMAC key must be base64url')
    if (eabHmacKey !== null) await this.ctx.secrets.set(EAB_SECRET, eabHmacKey)
    else await this.ctx.secrets.delete(EAB_SECRET)
    // A new CA means new accounts: the old keys belong to the old CA.
    if ((await this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl)) !== directoryUrl) await this.accounts.forgetAll()
    await this.settings.set(ACME_ISSUER_SETTINGS.directoryUrl, directoryUrl)
    await this.settings.set(ACME_ISSUER_SETTINGS.eabKid, eabKid ?? '')
    await this.settings.set(ACME_ISSUER_SETTINGS.caBundle, caBundle ?? '')
  }

  /** Back to the local CA for new orders; the keychain entries stay for a later `configure`. */
  async disable(): Promise<void> {
    await this.settings.set(ACME_ISSUER_SETTINGS.directoryUrl, '')
  }

  /** What the admin sees: never the HMAC key, only whether the keychain holds one. */
  async summary(): Promise<{
    enabled: boolean
    directory_url: string | null
    eab_kid: string | null
    eab_hmac_key_in_keychain: boolean
    account_url: string | null
    reseller_accounts: { reseller_id: number; account_url: string }[]
  }> {
    const get = async (k: string) => (await this.settings.get(k)) || null
    return {
      enabled: await this.enabled(),
      directory_url: await get(ACME_ISSUER_SETTINGS.directoryUrl),
      eab_kid: await get(ACME_ISSUER_SETTINGS.eabKid),
      eab_hmac_key_in_keychain: (await this.ctx.secrets.get(EAB_SECRET)) !== null,
      account_url: await get(ACME_ISSUER_SETTINGS.accountUrl),
      reseller_accounts: await this.accounts.list()
    }
  }

  async enabled(): Promise<boolean> {
    return Boolean(await this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl))
  }

  async handles(orderId: number): Promise<boolean> {
    return (await this.enabled()) && (await this.row(orderId)) !== null
  }

  async validatesRenewals(): Promise<boolean> {
    return await this.enabled()
  }

  /** Whether this product's certificates come from the external CA (TLS; never code signing or subscriptions). */
  async issues(product: Product): Promise<boolean> {
    return (await this.enabled()) && product.type !== 'code-signing' && !isAcmeProduct(product)
  }

  async begin(orderId: number, names: string[], methods: Map<string, DcvMethod>): Promise<void> {
    if (!(await this.enabled())) return
    // Each name by its own method (certificates/name-methods.ts): http → http-01, dns → dns-01.
    const types = new Map<string, 'http-01' | 'dns-01'>()
    for (const name of names) {
      const method = methods.get(name) ?? 'email'
      const type = method === 'http' ? 'http-01' : method === 'dns' ? 'dns-01' : null
      if (!type) {
        throw invalid(
          `${method} validation is not available for certificates from the external ACME CA: ` +
            'RFC 8555 validates with http-01 (dcv_method http) or dns-01 (dcv_method dns); choose one of those'
        )
      }
      if (name.startsWith('*.') && type === 'http-01')
        throw invalid(`http validation cannot validate the wildcard name ${name} (RFC 8555 §7.1.3); use dns`)
      types.set(name, type)
    }
    const resellerId = await this.resellerOf(orderId)
    const owner = await this.ownerFor(resellerId, names)
    const client = await this.accounts.client(owner)
    const order = await this.call('create the ACME order', () =>
      client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) })
    )
    const authzs = await this.call('read the ACME authorizations', () => client.getAuthorizations(order))
    const challenges: ChallengeState[] = []
    for (const authz of authzs) {
      const name = authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value
      if (authz.status === 'valid') continue // §7.1.3: the CA reused a valid authorization
      const type = types.get(name) ?? 'dns-01'
      const [state] = await this.challenges.offered(client, authz, name, type)
      if (state?.delegated) await this.delegation.publish(resellerId, authz.identifier.value, state.value, orderId)
      if (!state)
        throw new ServiceError(
          'unavailable',
          `could not validate ${name}: the ACME CA offers no ${type} challenge for it`
        )
      challenges.push(state)
    }
    await this.keepOrder(orderId, order.url, challenges, owner)
  }

  async instructions(orderId: number, name: string): Promise<ExternalInstructions | null> {
    const ch = await this.challenge(orderId, name)
    return ch ? await this.challenges.instructions(ch, await this.resellerOf(orderId)) : null
  }

  async unattendedRenewal(orderId: number): Promise<UnattendedRenewal | null> {
    if (!(await this.enabled())) return null
    const db = this.ctx.store
    const req = (await db.get('SELECT names, dcv_method FROM certificate_requests WHERE order_id = ?', orderId)) as
      { names: string; dcv_method: string } | undefined
    const order = (await db.get('SELECT status, reseller_id FROM orders WHERE id = ?', orderId)) as
      { status: string; reseller_id: number } | undefined
    // Code signing (no names to validate) stays with the local CA.
    if (!req || !order || req.dcv_method === 'none') return null
    const names = JSON.parse(req.names) as string[]
    const stored = await this.row(orderId)
    const first = stored ? (JSON.parse(stored.challenges) as ChallengeState[])[0] : undefined
    const persistIssuer = await this.settings.get(ACME_ISSUER_SETTINGS.persistIssuer)
    // The stored challenge when the CA order waits; else what the next one will pick
    // (challengesFor's order: delegated dns-01, then dns-persist-01, then dns-01).
    const method: RenewalMethod = first
      ? first.type === 'dns-persist-01'
        ? 'dns-persist-01'
        : first.delegated
          ? 'delegated-dns'
          : first.type
      : req.dcv_method === 'http'
        ? 'http-01'
        : (await this.delegation.enabled())
          ? 'delegated-dns'
          : persistIssuer
            ? 'dns-persist-01'
            : 'dns-01'
    const accountUrl = persistIssuer ? await this.accountUrlFor(orderId, names) : null
    // Each name's target, read (and made, the first time) before the plan, which is plain data.
    const targets = new Map<string, string>()
    if (await this.delegation.enabled())
      for (const base of renewalBases(names)) targets.set(base, await this.delegation.target(order.reseller_id, base))
    return unattendedPlan({
      orderId,
      status: order.status,
      names,
      method,
      delegationTarget: targets.size > 0 ? (n) => targets.get(n) ?? '' : null,
      persist: persistIssuer && accountUrl ? { issuerDomain: persistIssuer, accountUrl } : null
    })
  }

  /** Asks the CA to validate one name (§7.5.1) and waits for its answer. */
  async check(orderId: number, name: string): Promise<CheckResult> {
    const ch = await this.challenge(orderId, name)
    // No challenge stored: the CA reused a valid authorization for this name.
    if (!ch) return { ok: true, detail: 'the ACME CA already holds a valid authorization for this name' }
    // Look first, as certbot and acme-client do: asking the CA before the answer is published
    // would spend the challenge (§8.2: a failed challenge invalidates the authorization).
    const client = await this.accounts.client(((await this.row(orderId)) as OrderRow).account_reseller_id)
    try {
      await this.challenges.lookFirst(client, ch, orderId)
    } catch (err) {
      const why = err instanceof ChallengeFailure ? err.message : String(err)
      return { ok: false, detail: `not published yet, the ACME CA was not asked: ${why}` }
    }
    try {
      const authz = await client.getAuthorizations({ authorizations: [ch.authzUrl] } as never)
      if (authz[0]?.status === 'valid') return { ok: true, detail: `validated by the ACME CA (${ch.type})` }
      const current = authz[0]?.challenges.find((c) => c.url === ch.challengeUrl)
      if (current?.status === 'pending') await client.completeChallenge(current)
      // The challenge, not the authorization, carries the CA's error (§7.1.4).
      await client.waitForValidStatus({ url: ch.challengeUrl } as never)
      return { ok: true, detail: `validated by the ACME CA (${ch.type})` }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      // Final only when the CA itself marked the challenge or its authorization invalid
      // (§7.1.6); a time-out or a network error may still pass on the next look.
      let final = false
      try {
        const [authz] = await client.getAuthorizations({ authorizations: [ch.authzUrl] } as never)
        const current = authz?.challenges.find((c) => c.url === ch.challengeUrl)
        final = authz?.status === 'invalid' || current?.status === 'invalid'
      } catch {
        // the CA did not answer: not known to be final
      }
      return { ok: false, final, detail: `the ACME CA could not validate ${name} over ${ch.type}: ${why}` }
    }
  }

  async issue(req: IssueRequest): Promise<IssuedCertificate> {
    if (!(await this.enabled()) || req.profile !== 'tls') {
      // The local CA's certificate follows the local schedule, not a window of the CA before.
      if (req.orderId !== undefined) await this.windows.forget(req.orderId)
      return this.fallback.issue(req)
    }
    const row = req.orderId !== undefined ? await this.row(req.orderId) : null
    if (req.orderId === undefined) throw new Error('could not issue certificate: a TLS order is needed for the ACME CA')
    const owner = row ? row.account_reseller_id : await this.ownerFor(await this.resellerOf(req.orderId), req.names)
    const client = await this.accounts.client(owner)
    let order = row
      ? await this.call('read the ACME order', () => client.getOrder({ url: row.order_url } as never))
      : await this.renewalOrder(client, req.names, req.orderId)
    if (order.status === 'pending') {
      // A renewal: validated without the customer when a dns-persist-01 record or the delegated
      // zone allows it; otherwise only while the CA reuses its authorizations.
      await this.validateUnattended(client, order, req.orderId, owner)
      order = await this.call('read the ACME order', () => client.getOrder(order))
    }
    const body = (req.csrDer.toString('base64').match(/.{1,64}/g) ?? []).join('\n')
    const csrPem = `-----BEGIN CERTIFICATE REQUEST-----\n${body}\n-----END CERTIFICATE REQUEST-----\n`
    if (order.status === 'ready')
      order = await this.call('finalize the ACME order', () => client.finalizeOrder(order, csrPem))
    const pem = await this.call('download the certificate', () => client.getCertificate(order))
    const certs = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
    const leafPem = certs[0]
    if (!leafPem)
      throw new ServiceError('unavailable', 'could not issue certificate: the ACME CA returned no certificate')
    const info = acme.crypto.readCertificateInfo(leafPem)
    const leaf = new x509.X509Certificate(leafPem)
    await this.ctx.store.run('DELETE FROM acme_issuer_orders WHERE order_id = ?', req.orderId)
    await this.delegation.unpublish(req.orderId)
    await this.tracking.track(req.orderId, leafPem, info.notAfter)
    const window = await this.windows.get(req.orderId)
    return {
      certificatePem: `${leafPem}\n`,
      chainPem: certs
        .slice(1)
        .map((c) => `${c}\n`)
        .join(''),
      serial: leaf.serialNumber.toUpperCase(),
      validFrom: info.notBefore,
      validTill: info.notAfter,
      issuer: `acme:${await this.directoryUrl()}`,
      // The order's one schedule: the moment in this certificate's renewal window.
      ...(window ? { renewAt: parseDate(window.renew_at) } : {})
    }
  }

  /**
   * A renewal's new CA order. RFC 9773 §5: it names the certificate it replaces, so the CA can
   * keep the renewal out of rate limits and revocation; a CA that refuses `replaces` (it
   * replaced that certificate already, or does not know it) gets the order again without it.
   */
  private async renewalOrder(client: acme.Client, names: string[], orderId: number | undefined): Promise<acme.Order> {
    const identifiers = names.map((value) => ({ type: 'dns', value }))
    const prior = orderId !== undefined ? await this.windows.get(orderId) : null
    // Only towards the CA that issued it, and only when that CA speaks ARI (§5 names the
    // certificate by its renewalInfo CertID).
    if (prior && prior.source === 'ari' && prior.directory_url === (await this.directoryUrl())) {
      try {
        return await client.createOrder({ identifiers, replaces: prior.cert_id } as never)
      } catch (err) {
        this.tracking.replacesRefused.set(
          orderId as number,
          `the CA refused replaces, renewed without it: ${(err as Error).message}`
        )
      }
    }
    return this.call('create the ACME order', () => client.createOrder({ identifiers }))
  }

  /**
   * Validates a renewal's pending authorizations without the customer: a dns-persist-01 record
   * that still authorizes this account, or dns-01 in the delegated zone with its CNAME in place.
   * Names nothing answers that way are left to the customer: the CA order is kept with the
   * challenges of the order's own method (the instructions that apply, RFC 8555 §8.3, §8.4),
   * and RenewalNeedsCustomer says so.
   */
  private async validateUnattended(
    client: acme.Client,
    order: acme.Order,
    orderId: number,
    owner: AccountOwner
  ): Promise<void> {
    const authzs = await this.call('read the ACME authorizations', () => client.getAuthorizations(order))
    const waiting: { authz: acme.Authorization; name: string; why: string[] }[] = []
    for (const authz of authzs) {
      if (authz.status === 'valid') continue
      const name = authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value
      const why: string[] = []
      let done = false
      for (const ch of await this.challenges.unattended(client, authz, name)) {
        try {
          await this.challenges.lookFirst(client, ch, orderId)
        } catch (err) {
          why.push(`${ch.type}${ch.delegated ? ' (delegated)' : ''}: ${(err as Error).message}`)
          continue
        }
        const offered = (authz.challenges as unknown as OfferedChallenge[]).find((c) => c.url === ch.challengeUrl)
        await this.call(`validate ${name} over ${ch.type}`, async () => {
          if (offered && offered.status === 'pending') await client.completeChallenge(offered as never)
          await client.waitForValidStatus({ url: ch.challengeUrl } as never)
        })
        done = true
        break
      }
      if (!done) waiting.push({ authz, name, why })
    }
    if (waiting.length === 0) return
    const method = await this.renewalMethod(orderId)
    const challenges: ChallengeState[] = []
    for (const w of waiting) {
      // http-01 cannot prove a wildcard name (RFC 8555 §7.1.3): such a name is asked over DNS.
      const type = method === 'http' && !w.name.startsWith('*.') ? 'http-01' : 'dns-01'
      const [state] = await this.challenges.offered(client, w.authz, w.name, type)
      if (!state)
        throw new ServiceError(
          'unavailable',
          `could not renew ${w.name}: the ACME CA offers no ${type} challenge for it`
        )
      if (state.delegated)
        await this.delegation.publish(await this.resellerOf(orderId), w.authz.identifier.value, state.value, orderId)
      challenges.push(state)
    }
    await this.keepOrder(orderId, order.url, challenges, owner)
    const why = waiting.flatMap((w) => w.why.map((y) => `${w.name}: ${y}`))
    throw new RenewalNeedsCustomer(
      `the ACME CA wants ${waiting.map((w) => w.name).join(', ')} validated again and nothing answers it unattended` +
        (why.length ? ` (${why.join('; ')})` : ' (no delegated zone is set and the CA offers no dns-persist-01)') +
        `; the renewal waits for the answers its validation shows` +
        (method === 'http'
          ? '; http-01 needs a new file from the customer at every renewal: switch the order to dns (delegated DNS or dns-persist-01, GET /orders/{id}/renewal) to renew unattended'
          : ''),
      method
    )
  }

  /** The method an order's renewals fall back to when nothing answers unattended: its own. */
  private async renewalMethod(orderId: number): Promise<'http' | 'dns'> {
    const m = await this.ctx.store.value('SELECT dcv_method FROM certificate_requests WHERE order_id = ?', orderId)
    return m === 'http' ? 'http' : 'dns'
  }

  /** Keeps the CA order behind a TLS order while it waits for validation. */
  private async keepOrder(
    orderId: number,
    orderUrl: string,
    challenges: ChallengeState[],
    owner: AccountOwner
  ): Promise<void> {
    await this.ctx.store.run(
      `INSERT INTO acme_issuer_orders (order_id, directory_url, order_url, challenges, created_at, account_reseller_id)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET directory_url = excluded.directory_url, order_url = excluded.order_url,
           challenges = excluded.challenges, created_at = excluded.created_at, account_reseller_id = excluded.account_reseller_id`,
      orderId,
      await this.directoryUrl(),
      orderUrl,
      JSON.stringify(challenges),
      isoTimestamp(this.ctx.clock()),
      owner
    )
  }

  /**
   * A scheduler look at windows whose Retry-After has passed (RFC 9773 §4.3). Returns the looks
   * that failed, so the pass reports them; a failed look keeps the window and is asked again
   * later. A look that fails on the network is tried once more at once (§4.3.3 leaves the retry
   * of a failed look to the client): one dropped connection must not hold back a renewal the
   * CA asked for by six hours.
   */
  refreshWindows(now: Date): Promise<{ order_id: number; error: string }[]> {
    return this.tracking.refresh(now)
  }

  /** Renewals due within a week that cannot run with nobody (renewal-readiness.ts). */
  checkReadiness(now: Date): Promise<NotReady[]> {
    return checkReadiness(this.ctx, this.settings, this, now)
  }

  /** TLS to the CA: the system roots plus the configured bundle (a private or test CA). */
  private async agent(): Promise<Agent | undefined> {
    const bundle = await this.settings.get(ACME_ISSUER_SETTINGS.caBundle)
    return bundle ? new Agent({ ca: [...rootCertificates, readFileSync(bundle, 'utf8')] }) : undefined
  }

  private async directoryUrl(): Promise<string> {
    return (await this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl)) ?? ''
  }

  /** The reseller an order belongs to: delegation labels and ACME accounts are per reseller. */
  /**
   * RFC 8555 §7.6: revokes a certificate this CA issued for the order, signed by the account
   * that orders its names (the reseller's), with its RFC 5280 reason code. Only at the CA
   * configured now: a certificate from a CA CertDesk no longer uses is revoked there, by whoever
   * holds its account.
   */
  async revoke(
    orderId: number,
    names: string[],
    directoryUrl: string,
    certificatePem: string,
    reasonCode: number
  ): Promise<void> {
    if (!(await this.enabled()) || (await this.directoryUrl()) !== directoryUrl) {
      throw conflict(
        `could not revoke the certificate at ${directoryUrl}: CertDesk no longer uses that ACME CA; revoke it there with the account that ordered it`
      )
    }
    const row = await this.row(orderId)
    const owner = row ? row.account_reseller_id : await this.ownerFor(await this.resellerOf(orderId), names)
    const client = await this.accounts.client(owner)
    await this.call('revoke the certificate', async () => {
      try {
        await client.revokeCertificate(certificatePem, { reason: reasonCode })
      } catch (err) {
        // urn:ietf:params:acme:error:alreadyRevoked (§6.7): the CA holds it revoked, as asked.
        if (!/already revoked/i.test(err instanceof Error ? err.message : String(err))) throw err
      }
    })
  }

  private async resellerOf(orderId: number): Promise<number> {
    const id = (await this.ctx.store.value('SELECT reseller_id FROM orders WHERE id = ?', orderId)) as
      number | undefined
    if (id === undefined) throw new Error(`could not find order ${orderId}`)
    return id
  }

  /** The account a new CA order for these names goes through (acme-issuer-accounts.ts). */
  private async ownerFor(resellerId: number, names: string[]): Promise<AccountOwner> {
    return await this.accounts.ownerFor(resellerId, names, (n) => this.delegation.isLegacy(resellerId, n))
  }

  /** The account URL a dns-persist-01 record for this order names, without registering one. */
  async accountUrlFor(orderId: number, names: string[]): Promise<string | null> {
    const row = await this.row(orderId)
    return await this.accounts.url(
      row ? row.account_reseller_id : await this.ownerFor(await this.resellerOf(orderId), names)
    )
  }

  private async row(orderId: number): Promise<OrderRow | null> {
    return (
      ((await this.ctx.store.get('SELECT * FROM acme_issuer_orders WHERE order_id = ?', orderId)) as
        OrderRow | undefined) ?? null
    )
  }

  private async challenge(orderId: number, name: string): Promise<ChallengeState | null> {
    const row = await this.row(orderId)
    if (!row) return null
    return (JSON.parse(row.challenges) as ChallengeState[]).find((c) => c.name === name) ?? null
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof ServiceError) throw err
      const why = err instanceof Error ? err.message : String(err)
      throw new ServiceError('unavailable', `could not ${what} at ${await this.directoryUrl()}: ${why}`)
    }
  }
}
