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
import type { CoreContext } from './context'
import { ChallengeFailure, checkDns01, checkHttp01 } from './acme-challenges'
import {
  certIdOfPem,
  fetchDirectory,
  fetchRenewalInfo,
  onceMore,
  RenewalWindows,
  type AriRow,
  type RenewalInfo
} from './ari'
import { DCV_SETTINGS, type CheckResult, type DcvMethod } from './dcv'
import { DelegatedDns } from './delegated-dns'
import { checkPersistRecord, persistOwner, persistRecordValue } from './dns-persist'
import { baseDomain } from './domains'
import { conflict, invalid, ServiceError } from './errors'
import type { ExternalRevocation } from './certificates/revocation'
import type { IssueRequest, IssuedCertificate, Issuer } from './issuer'
import type { Settings } from './settings'
import { isoTimestamp } from './time'
import { x509 } from './x509'

export const ACME_ISSUER_SETTINGS = {
  /** The external CA's directory; CertDesk issues TLS orders there while it is set. */
  directoryUrl: 'issuer.acme.directory_url',
  /** EAB key id the CA gave; its HMAC key is in the keychain (`issuer.acme/eab-hmac`). */
  eabKid: 'issuer.acme.eab_kid',
  /** Optional PEM file of extra roots to trust for the directory's HTTPS (a private or test CA). */
  caBundle: 'issuer.acme.ca_bundle',
  /** The account URL at the CA, kept once registered (RFC 8555 §7.3). */
  accountUrl: 'issuer.acme.account_url',
  /** The issuer domain name the CA's dns-persist-01 challenges named last (shown with the record). */
  persistIssuer: 'issuer.acme.persist_issuer'
} as const

const EAB_SECRET = 'issuer.acme/eab-hmac'
const ACCOUNT_KEY_SECRET = 'issuer.acme/account-key'

/** Polling the CA after a challenge answer: RFC 8555 §7.5.1 leaves the pace to the client. */
const POLL = { attempts: 12, minMs: 250, maxMs: 2000 }

export interface ExternalValidation {
  /** True when this order's names are validated by the external CA. */
  handles(orderId: number): boolean
  /** Starts the CA order for these names, each by its method (throws a clear 400 for email). */
  begin(orderId: number, names: string[], methods: Map<string, DcvMethod>): Promise<void>
  instructions(orderId: number, name: string): ExternalInstructions | null
  check(orderId: number, name: string): Promise<CheckResult>
}

export type ExternalInstructions =
  | { method: 'http'; url: string; fileName: string; fileContent: string }
  | { method: 'dns'; recordName: string; recordType: 'TXT' | 'CNAME'; recordValue: string; txtAlternative: string }

type ChallengeType = 'http-01' | 'dns-01' | 'dns-persist-01'

interface ChallengeState {
  name: string
  authzUrl: string
  challengeUrl: string
  type: ChallengeType
  token: string
  /**
   * http-01: the key authorization; dns-01: base64url(SHA-256(key authorization));
   * dns-persist-01: the TXT record to publish. Public by design.
   */
  value: string
  /** dns-persist-01: the issuer domain names the CA accepts (draft-ietf-acme-dns-persist §3). */
  issuerDomains?: string[]
  /** dns-01 answered by CertDesk's own responder under the delegated zone (delegated-dns.ts). */
  delegated?: boolean
}

/** A challenge as acme-client returns it, with the dns-persist-01 member it does not know. */
interface OfferedChallenge {
  type: string
  url: string
  status: string
  token?: unknown
  'issuer-domain-names'?: unknown
}

interface OrderRow {
  order_id: number
  directory_url: string
  order_url: string
  challenges: string
}

export class AcmeIssuer implements Issuer, ExternalValidation, ExternalRevocation {
  readonly name = 'acme'
  /** The zone delegated to CertDesk, where it answers dns-01 itself. */
  readonly delegation: DelegatedDns
  /** RFC 9773 renewal windows of the certificates issued here. */
  readonly windows: RenewalWindows
  /** Why a renewal's `replaces` was refused, kept until its window is stored (shown with it). */
  private readonly replacesRefused = new Map<number, string>()

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly fallback: Issuer
  ) {
    this.delegation = new DelegatedDns(ctx, settings)
    this.windows = new RenewalWindows(ctx)
  }

  /** Stores the connection to an external CA; the HMAC key goes to the keychain only. */
  configure(directoryUrl: string, eabKid: string | null, eabHmacKey: string | null, caBundle?: string | null): void {
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
    if (eabHmacKey !== null) this.ctx.secrets.set(EAB_SECRET, eabHmacKey)
    else this.ctx.secrets.delete(EAB_SECRET)
    // A new CA means a new account: the old key belongs to the old CA.
    if (this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl) !== directoryUrl) {
      this.ctx.secrets.delete(ACCOUNT_KEY_SECRET)
      this.settings.set(ACME_ISSUER_SETTINGS.accountUrl, '')
    }
    this.settings.set(ACME_ISSUER_SETTINGS.directoryUrl, directoryUrl)
    this.settings.set(ACME_ISSUER_SETTINGS.eabKid, eabKid ?? '')
    this.settings.set(ACME_ISSUER_SETTINGS.caBundle, caBundle ?? '')
  }

  /** Back to the local CA for new orders; the keychain entries stay for a later `configure`. */
  disable(): void {
    this.settings.set(ACME_ISSUER_SETTINGS.directoryUrl, '')
  }

  /** What the admin sees: never the HMAC key, only whether the keychain holds one. */
  summary(): {
    enabled: boolean
    directory_url: string | null
    eab_kid: string | null
    eab_hmac_key_in_keychain: boolean
    account_url: string | null
  } {
    const get = (k: string) => this.settings.get(k) || null
    return {
      enabled: this.enabled(),
      directory_url: get(ACME_ISSUER_SETTINGS.directoryUrl),
      eab_kid: get(ACME_ISSUER_SETTINGS.eabKid),
      eab_hmac_key_in_keychain: this.ctx.secrets.get(EAB_SECRET) !== null,
      account_url: get(ACME_ISSUER_SETTINGS.accountUrl)
    }
  }

  enabled(): boolean {
    return Boolean(this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl))
  }

  handles(orderId: number): boolean {
    return this.enabled() && this.row(orderId) !== null
  }

  async begin(orderId: number, names: string[], methods: Map<string, DcvMethod>): Promise<void> {
    if (!this.enabled()) return
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
    const client = await this.client()
    const order = await this.call('create the ACME order', () =>
      client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) })
    )
    const authzs = await this.call('read the ACME authorizations', () => client.getAuthorizations(order))
    const challenges: ChallengeState[] = []
    for (const authz of authzs) {
      const name = authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value
      if (authz.status === 'valid') continue // §7.1.3: the CA reused a valid authorization
      const type = types.get(name) ?? 'dns-01'
      const [state] = await this.challengesFor(client, authz, name, type)
      if (state?.delegated) this.delegation.publish(authz.identifier.value, state.value, orderId)
      if (!state)
        throw new ServiceError(
          'unavailable',
          `could not validate ${name}: the ACME CA offers no ${type} challenge for it`
        )
      challenges.push(state)
    }
    this.ctx.db
      .prepare(
        `INSERT INTO acme_issuer_orders (order_id, directory_url, order_url, challenges, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET directory_url = excluded.directory_url, order_url = excluded.order_url,
           challenges = excluded.challenges, created_at = excluded.created_at`
      )
      .run(orderId, this.directoryUrl(), order.url, JSON.stringify(challenges), isoTimestamp(this.ctx.clock()))
  }

  instructions(orderId: number, name: string): ExternalInstructions | null {
    const ch = this.challenge(orderId, name)
    if (!ch) return null
    const domain = baseDomain(name)
    if (ch.type === 'dns-persist-01') {
      // Published once: later renewals at this CA, for this account, need nothing new.
      return {
        method: 'dns',
        recordName: persistOwner(domain),
        recordType: 'TXT',
        recordValue: ch.value,
        txtAlternative: ch.value
      }
    }
    if (ch.delegated) {
      // Set once; CertDesk's responder serves the TXT value (txtAlternative) under the target.
      return {
        method: 'dns',
        recordName: `_acme-challenge.${domain}`,
        recordType: 'CNAME',
        recordValue: this.delegation.target(domain),
        txtAlternative: ch.value
      }
    }
    if (ch.type === 'http-01') {
      return {
        method: 'http',
        url: `http://${domain}/.well-known/acme-challenge/${ch.token}`,
        fileName: ch.token,
        fileContent: ch.value
      }
    }
    return {
      method: 'dns',
      recordName: `_acme-challenge.${domain}`,
      recordType: 'TXT',
      recordValue: ch.value,
      txtAlternative: ch.value
    }
  }

  /** Asks the CA to validate one name (§7.5.1) and waits for its answer. */
  async check(orderId: number, name: string): Promise<CheckResult> {
    const ch = this.challenge(orderId, name)
    // No challenge stored: the CA reused a valid authorization for this name.
    if (!ch) return { ok: true, detail: 'the ACME CA already holds a valid authorization for this name' }
    // Look first, as certbot and acme-client do: asking the CA before the answer is published
    // would spend the challenge (§8.2: a failed challenge invalidates the authorization).
    const net = this.netSettings()
    const client = await this.client()
    try {
      await this.lookFirst(client, ch, orderId, net)
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
    if (!this.enabled() || req.profile !== 'tls') return this.fallback.issue(req)
    const client = await this.client()
    const row = req.orderId !== undefined ? this.row(req.orderId) : null
    let order = row
      ? await this.call('read the ACME order', () => client.getOrder({ url: row.order_url } as never))
      : await this.renewalOrder(client, req.names, req.orderId)
    if (order.status === 'pending') {
      // A renewal: validated without the customer when a dns-persist-01 record or the delegated
      // zone allows it; otherwise only while the CA reuses its authorizations.
      await this.validateUnattended(client, order, req.orderId ?? null)
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
    if (req.orderId !== undefined) {
      this.ctx.db.prepare('DELETE FROM acme_issuer_orders WHERE order_id = ?').run(req.orderId)
      this.delegation.unpublish(req.orderId)
      await this.trackRenewal(req.orderId, leafPem, info.notAfter)
    }
    return {
      certificatePem: `${leafPem}\n`,
      chainPem: certs
        .slice(1)
        .map((c) => `${c}\n`)
        .join(''),
      serial: leaf.serialNumber.toUpperCase(),
      validFrom: info.notBefore,
      validTill: info.notAfter,
      issuer: `acme:${this.directoryUrl()}`
    }
  }

  /**
   * RFC 8555 §7.6: revokes a certificate this CA issued, signed by CertDesk's account key (the
   * account that ordered it), with its RFC 5280 reason code. Only at the CA configured now: a
   * certificate from a CA CertDesk no longer uses is revoked there, by whoever holds its account.
   */
  async revoke(directoryUrl: string, certificatePem: string, reasonCode: number): Promise<void> {
    if (!this.enabled() || this.directoryUrl() !== directoryUrl) {
      throw conflict(
        `could not revoke the certificate at ${directoryUrl}: CertDesk no longer uses that ACME CA; revoke it there with the account that ordered it`
      )
    }
    const client = await this.client()
    await this.call('revoke the certificate', async () => {
      try {
        await client.revokeCertificate(certificatePem, { reason: reasonCode })
      } catch (err) {
        // urn:ietf:params:acme:error:alreadyRevoked (§6.7): the CA holds it revoked, as asked.
        if (!/already revoked/i.test(err instanceof Error ? err.message : String(err))) throw err
      }
    })
  }

  /**
   * The challenges CertDesk can answer for one authorization, best first: http-01 for http; for
   * dns, dns-01 in the delegated zone when one is set, then dns-persist-01 when the CA offers it
   * (one record for every renewal), then plain dns-01. Empty when the CA offers none of these.
   */
  private async challengesFor(
    client: acme.Client,
    authz: acme.Authorization,
    name: string,
    type: 'http-01' | 'dns-01'
  ): Promise<ChallengeState[]> {
    const offered = authz.challenges as unknown as OfferedChallenge[]
    const base = { name, authzUrl: authz.url }
    const out: ChallengeState[] = []
    const dns01 = offered.find((c) => c.type === 'dns-01')
    if (type === 'dns-01' && dns01 && this.delegation.enabled()) {
      const value = await client.getChallengeKeyAuthorization(dns01 as never)
      out.push({ ...base, challengeUrl: dns01.url, type: 'dns-01', token: tokenOf(dns01), value, delegated: true })
    }
    const persist = offered.find((c) => c.type === 'dns-persist-01')
    const issuers = (Array.isArray(persist?.['issuer-domain-names']) ? persist['issuer-domain-names'] : []).filter(
      (d): d is string => typeof d === 'string' && d.length > 0
    )
    if (type === 'dns-01' && persist && issuers.length > 0) {
      if (this.settings.get(ACME_ISSUER_SETTINGS.persistIssuer) !== issuers[0])
        this.settings.set(ACME_ISSUER_SETTINGS.persistIssuer, issuers[0])
      const value = persistRecordValue({
        issuerDomain: issuers[0],
        accountUri: client.getAccountUrl(),
        wildcard: authz.wildcard === true
      })
      out.push({ ...base, challengeUrl: persist.url, type: 'dns-persist-01', token: '', value, issuerDomains: issuers })
    }
    const ch = offered.find((c) => c.type === type)
    // acme-client returns the dns-01 record value (the digest) and the http-01 file content.
    if (ch)
      out.push({
        ...base,
        challengeUrl: ch.url,
        type,
        token: tokenOf(ch),
        value: await client.getChallengeKeyAuthorization(ch as never)
      })
    return out
  }

  /**
   * What CertDesk checks before asking the CA: the CA's check spends the challenge (RFC 8555
   * §8.2), so it is asked only once the answer is visible. Throws a ChallengeFailure otherwise.
   */
  private async lookFirst(
    client: acme.Client,
    ch: ChallengeState,
    orderId: number | null,
    net: Parameters<typeof checkHttp01>[3]
  ): Promise<void> {
    const domain = baseDomain(ch.name)
    if (ch.type === 'http-01') return checkHttp01(domain, ch.token, ch.value, net)
    if (ch.type === 'dns-persist-01') {
      const verdict = await checkPersistRecord(domain, net.resolver, {
        issuerDomains: ch.issuerDomains ?? [],
        accountUri: client.getAccountUrl(),
        wildcard: ch.name.startsWith('*.'),
        now: this.ctx.clock()
      })
      if (!verdict.ok)
        throw new ChallengeFailure(verdict.type, `the record at ${persistOwner(domain)} does not do: ${verdict.reason}`)
      return
    }
    if (ch.delegated) {
      // CertDesk serves the value itself; what must be in place is the customer's CNAME.
      this.delegation.publish(domain, ch.value, orderId)
      const [st] = await this.delegation.status([domain])
      if (!st?.in_place) throw new ChallengeFailure('dns', st?.detail ?? `no CNAME at _acme-challenge.${domain}`)
      return
    }
    return checkDns01(domain, { digest: ch.value }, net)
  }

  private netSettings(): Parameters<typeof checkHttp01>[3] {
    return {
      resolver: this.settings.get(DCV_SETTINGS.resolver) || null,
      http01Port: Number(this.settings.get(DCV_SETTINGS.httpPort) || 80),
      allowPrivateAddresses: this.settings.flag(DCV_SETTINGS.allowPrivateAddresses),
      timeoutMs: 5000
    }
  }

  /**
   * A renewal's new CA order. RFC 9773 §5: it names the certificate it replaces, so the CA can
   * keep the renewal out of rate limits and revocation; a CA that refuses `replaces` (it
   * replaced that certificate already, or does not know it) gets the order again without it.
   */
  private async renewalOrder(client: acme.Client, names: string[], orderId: number | undefined): Promise<acme.Order> {
    const identifiers = names.map((value) => ({ type: 'dns', value }))
    const prior = orderId !== undefined ? this.windows.get(orderId) : null
    // Only towards the CA that issued it, and only when that CA speaks ARI (§5 names the
    // certificate by its renewalInfo CertID).
    if (prior && prior.source === 'ari' && prior.directory_url === this.directoryUrl()) {
      try {
        return await client.createOrder({ identifiers, replaces: prior.cert_id } as never)
      } catch (err) {
        this.replacesRefused.set(
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
   */
  private async validateUnattended(client: acme.Client, order: acme.Order, orderId: number | null): Promise<void> {
    const authzs = await this.call('read the ACME authorizations', () => client.getAuthorizations(order))
    const net = this.netSettings()
    for (const authz of authzs) {
      if (authz.status === 'valid') continue
      const name = authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value
      const why: string[] = []
      let done = false
      for (const ch of await this.unattendedChoices(client, authz, name)) {
        try {
          await this.lookFirst(client, ch, orderId, net)
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
      if (!done)
        throw new ServiceError(
          'conflict',
          `could not issue certificate: the ACME CA wants ${name} validated again and nothing answers it without the customer` +
            (why.length ? ` (${why.join('; ')})` : '') +
            '; publish a dns-persist-01 record or delegate _acme-challenge to CertDesk, or use POST /ssl/change-dcv'
        )
    }
  }

  /** Challenges that need nothing from the customer: delegated dns-01 and dns-persist-01. */
  private async unattendedChoices(
    client: acme.Client,
    authz: acme.Authorization,
    name: string
  ): Promise<ChallengeState[]> {
    return (await this.challengesFor(client, authz, name, 'dns-01')).filter(
      (c) => c.delegated || c.type === 'dns-persist-01'
    )
  }

  /** The CA's renewalInfo URL (RFC 9773 §3), or null when its directory has none. */
  private async renewalInfoUrl(): Promise<string | null> {
    const body = await fetchDirectory(this.directoryUrl(), this.agent())
    const url = (body as { renewalInfo?: unknown }).renewalInfo
    return typeof url === 'string' ? url : null
  }

  /** After each issuance: the certificate's renewal window (RFC 9773 §4), or the 14-day rule. */
  private async trackRenewal(orderId: number, leafPem: string, notAfter: Date): Promise<void> {
    let certId: string
    try {
      certId = certIdOfPem(leafPem)
    } catch {
      return // no authority key identifier: RFC 9773 §4.1 cannot name it, the 14-day rule stays
    }
    let info: RenewalInfo | null = null
    let error: string | null = null
    try {
      const base = await onceMore(() => this.renewalInfoUrl())
      if (base) info = await onceMore(() => fetchRenewalInfo(base, certId, this.agent(), this.ctx.clock()))
    } catch (err) {
      error = `could not read the renewal information: ${(err as Error).message}`
    }
    const refused = this.replacesRefused.get(orderId) ?? null
    this.replacesRefused.delete(orderId)
    this.windows.store(orderId, certId, this.directoryUrl(), info, notAfter, error ?? refused)
  }

  /**
   * A scheduler look at windows whose Retry-After has passed (RFC 9773 §4.3). Returns the looks
   * that failed, so the pass reports them; a failed look keeps the window and is asked again
   * later. A look that fails on the network is tried once more at once (§4.3.3 leaves the retry
   * of a failed look to the client): one dropped connection must not hold back a renewal the
   * CA asked for by six hours.
   */
  async refreshWindows(now: Date): Promise<{ order_id: number; error: string }[]> {
    const due = this.windows.dueChecks(now)
    if (due.length === 0 || !this.enabled()) return []
    const failed: { order_id: number; error: string }[] = []
    const fail = (r: AriRow, error: string): void => {
      this.windows.failed(r, error)
      failed.push({ order_id: r.order_id, error })
    }
    let base: string | null
    try {
      base = await onceMore(() => this.renewalInfoUrl())
    } catch (err) {
      for (const r of due) fail(r, `could not read the directory: ${(err as Error).message}`)
      return failed
    }
    for (const r of due) {
      if (!base || r.directory_url !== this.directoryUrl()) {
        fail(r, 'the configured CA offers no renewal information for this certificate')
        continue
      }
      try {
        this.windows.update(r, await onceMore(() => fetchRenewalInfo(base, r.cert_id, this.agent(), now)))
      } catch (err) {
        fail(r, `could not read the renewal information: ${(err as Error).message}`)
      }
    }
    return failed
  }

  /** TLS to the CA: the system roots plus the configured bundle (a private or test CA). */
  private agent(): Agent | undefined {
    const bundle = this.settings.get(ACME_ISSUER_SETTINGS.caBundle)
    return bundle ? new Agent({ ca: [...rootCertificates, readFileSync(bundle, 'utf8')] }) : undefined
  }

  private directoryUrl(): string {
    return this.settings.get(ACME_ISSUER_SETTINGS.directoryUrl) ?? ''
  }

  private row(orderId: number): OrderRow | null {
    return (
      (this.ctx.db.prepare('SELECT * FROM acme_issuer_orders WHERE order_id = ?').get(orderId) as
        OrderRow | undefined) ?? null
    )
  }

  private challenge(orderId: number, name: string): ChallengeState | null {
    const row = this.row(orderId)
    if (!row) return null
    return (JSON.parse(row.challenges) as ChallengeState[]).find((c) => c.name === name) ?? null
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof ServiceError) throw err
      const why = err instanceof Error ? err.message : String(err)
      throw new ServiceError('unavailable', `could not ${what} at ${this.directoryUrl()}: ${why}`)
    }
  }

  /** An acme-client for the configured CA, its account created (or found) with EAB. */
  private async client(): Promise<acme.Client> {
    const directoryUrl = this.directoryUrl()
    const bundle = this.settings.get(ACME_ISSUER_SETTINGS.caBundle)
    if (bundle) {
      // acme-client talks through its own axios instance; extra roots are added there.
      acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, readFileSync(bundle, 'utf8')] })
    }
    let accountKey = this.ctx.secrets.get(ACCOUNT_KEY_SECRET)
    if (!accountKey) {
      accountKey = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString()
      this.ctx.secrets.set(ACCOUNT_KEY_SECRET, accountKey)
    }
    const kid = this.settings.get(ACME_ISSUER_SETTINGS.eabKid)
    const hmacKey = kid ? this.ctx.secrets.get(EAB_SECRET) : null
    if (kid && !hmacKey)
      throw new ServiceError(
        'unavailable',
        'could not reach the ACME CA: its EAB HMAC key is missing from the OS keychain'
      )
    const accountUrl = this.settings.get(ACME_ISSUER_SETTINGS.accountUrl) || undefined
    const client = new acme.Client({
      directoryUrl,
      accountKey,
      accountUrl,
      ...(kid && hmacKey ? { externalAccountBinding: { kid, hmacKey } } : {}),
      backoffAttempts: POLL.attempts,
      backoffMin: POLL.minMs,
      backoffMax: POLL.maxMs
    })
    if (!accountUrl) {
      await this.call('register the ACME account', () => client.createAccount({ termsOfServiceAgreed: true }))
      this.settings.set(ACME_ISSUER_SETTINGS.accountUrl, client.getAccountUrl())
    }
    return client
  }
}

const tokenOf = (c: { token?: unknown }): string => (typeof c.token === 'string' ? c.token : '')
