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
import { DCV_SETTINGS, type CheckResult, type DcvMethod } from './dcv'
import { baseDomain } from './domains'
import { invalid, ServiceError } from './errors'
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
  accountUrl: 'issuer.acme.account_url'
} as const

const EAB_SECRET = 'issuer.acme/eab-hmac'
const ACCOUNT_KEY_SECRET = 'issuer.acme/account-key'

/** Polling the CA after a challenge answer: RFC 8555 §7.5.1 leaves the pace to the client. */
const POLL = { attempts: 12, minMs: 250, maxMs: 2000 }

export interface ExternalValidation {
  /** True when this order's names are validated by the external CA. */
  handles(orderId: number): boolean
  /** Starts the CA order for these names and method (throws a clear 400 for email). */
  begin(orderId: number, names: string[], method: DcvMethod): Promise<void>
  instructions(orderId: number, name: string): ExternalInstructions | null
  check(orderId: number, name: string): Promise<CheckResult>
}

export type ExternalInstructions =
  | { method: 'http'; url: string; fileName: string; fileContent: string }
  | { method: 'dns'; recordName: string; recordType: 'TXT'; recordValue: string; txtAlternative: string }

interface ChallengeState {
  name: string
  authzUrl: string
  challengeUrl: string
  type: 'http-01' | 'dns-01'
  token: string
  /** http-01: the key authorization; dns-01: base64url(SHA-256(key authorization)). Public by design. */
  value: string
}

interface OrderRow {
  order_id: number
  directory_url: string
  order_url: string
  challenges: string
}

export class AcmeIssuer implements Issuer, ExternalValidation {
  readonly name = 'acme'

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly fallback: Issuer
  ) {}

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

  async begin(orderId: number, names: string[], method: DcvMethod): Promise<void> {
    if (!this.enabled()) return
    const type = method === 'http' ? 'http-01' : method === 'dns' ? 'dns-01' : null
    if (!type) {
      throw invalid(
        `${method} validation is not available for certificates from the external ACME CA: ` +
          'RFC 8555 validates with http-01 (dcv_method http) or dns-01 (dcv_method dns); choose one of those'
      )
    }
    const wild = names.find((n) => n.startsWith('*.'))
    if (wild && type === 'http-01')
      throw invalid(`http validation cannot validate the wildcard name ${wild} (RFC 8555 §7.1.3); use dns`)
    const client = await this.client()
    const order = await this.call('create the ACME order', () =>
      client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) })
    )
    const authzs = await this.call('read the ACME authorizations', () => client.getAuthorizations(order))
    const challenges: ChallengeState[] = []
    for (const authz of authzs) {
      const name = authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value
      if (authz.status === 'valid') continue // §7.1.3: the CA reused a valid authorization
      const ch = authz.challenges.find((c) => c.type === type)
      if (!ch)
        throw new ServiceError(
          'unavailable',
          `could not validate ${name}: the ACME CA offers no ${type} challenge for it`
        )
      // acme-client returns the dns-01 record value (the digest) and the http-01 file content.
      const value = await client.getChallengeKeyAuthorization(ch)
      challenges.push({
        name,
        authzUrl: authz.url,
        challengeUrl: ch.url,
        type,
        token: (ch as { token: string }).token,
        value
      })
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
    const domain = baseDomain(name)
    const net = {
      resolver: this.settings.get(DCV_SETTINGS.resolver) || null,
      http01Port: Number(this.settings.get(DCV_SETTINGS.httpPort) || 80),
      allowPrivateAddresses: this.settings.flag(DCV_SETTINGS.allowPrivateAddresses),
      timeoutMs: 5000
    }
    try {
      if (ch.type === 'http-01') await checkHttp01(domain, ch.token, ch.value, net)
      else await checkDns01(domain, { digest: ch.value }, net)
    } catch (err) {
      const why = err instanceof ChallengeFailure ? err.message : String(err)
      return { ok: false, detail: `not published yet, the ACME CA was not asked: ${why}` }
    }
    const client = await this.client()
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
      : await this.call('create the ACME order', () =>
          client.createOrder({ identifiers: req.names.map((value) => ({ type: 'dns', value })) })
        )
    if (order.status === 'pending') {
      // A reissue without new validation: only works while the CA reuses its authorizations.
      throw new ServiceError(
        'conflict',
        'could not issue certificate: the ACME CA wants the names validated again; use POST /ssl/change-dcv'
      )
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
    if (req.orderId !== undefined)
      this.ctx.db.prepare('DELETE FROM acme_issuer_orders WHERE order_id = ?').run(req.orderId)
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
