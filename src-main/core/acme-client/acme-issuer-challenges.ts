/**
 * The challenges of the external ACME CA that CertDesk answers (RFC 8555 §8; dns-persist-01,
 * draft-ietf-acme-dns-persist), the instructions each one gives the domain owner, and the look
 * CertDesk takes before asking the CA to validate (the CA's check spends the challenge, §8.2).
 * Delegated dns-01 and dns-persist-01 prove control for one reseller only: the CNAME's target
 * is that reseller's label (delegated-dns.ts), the record names that reseller's ACME account.
 */
import type * as acme from 'acme-client'
import { ACME_ISSUER_SETTINGS } from './acme-issuer-accounts'
import { ChallengeFailure, checkDns01, checkHttp01 } from '../dcv/acme-challenges'
import type { CoreContext } from '../context'
import { DCV_SETTINGS } from '../dcv/dcv'
import type { DelegatedDns } from '../dcv/delegated-dns'
import { checkPersistRecord, persistOwner, persistRecordValue } from '../dcv/dns-persist'
import { baseDomain } from '../dcv/domains'
import type { Settings } from '../settings/settings'

export type ExternalInstructions =
  | { method: 'http'; url: string; fileName: string; fileContent: string }
  | { method: 'dns'; recordName: string; recordType: 'TXT' | 'CNAME'; recordValue: string; txtAlternative: string }

export type ChallengeType = 'http-01' | 'dns-01' | 'dns-persist-01'

export interface ChallengeState {
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
export interface OfferedChallenge {
  type: string
  url: string
  status: string
  token?: unknown
  'issuer-domain-names'?: unknown
}

export const tokenOf = (c: { token?: unknown }): string => (typeof c.token === 'string' ? c.token : '')

export class IssuerChallenges {
  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly delegation: DelegatedDns,
    private readonly resellerOf: (orderId: number) => Promise<number>
  ) {}

  /** What the domain owner must do for one stored challenge of `resellerId`'s order. */
  async instructions(ch: ChallengeState, resellerId: number): Promise<ExternalInstructions> {
    const domain = baseDomain(ch.name)
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
        recordValue: await this.delegation.target(resellerId, domain),
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

  /**
   * The challenges CertDesk can answer for one authorization, best first: http-01 for http; for
   * dns, dns-01 in the delegated zone when one is set, then dns-persist-01 when the CA offers it
   * (one record for every renewal), then plain dns-01. Empty when the CA offers none of these.
   */
  async offered(
    client: acme.Client,
    authz: acme.Authorization,
    name: string,
    type: 'http-01' | 'dns-01'
  ): Promise<ChallengeState[]> {
    const offered = authz.challenges as unknown as OfferedChallenge[]
    const base = { name, authzUrl: authz.url }
    const out: ChallengeState[] = []
    const dns01 = offered.find((c) => c.type === 'dns-01')
    if (type === 'dns-01' && dns01 && (await this.delegation.enabled())) {
      const value = await client.getChallengeKeyAuthorization(dns01 as never)
      out.push({ ...base, challengeUrl: dns01.url, type: 'dns-01', token: tokenOf(dns01), value, delegated: true })
    }
    const persist = offered.find((c) => c.type === 'dns-persist-01')
    const issuers = (Array.isArray(persist?.['issuer-domain-names']) ? persist['issuer-domain-names'] : []).filter(
      (d): d is string => typeof d === 'string' && d.length > 0
    )
    if (type === 'dns-01' && persist && issuers.length > 0) {
      if ((await this.settings.get(ACME_ISSUER_SETTINGS.persistIssuer)) !== issuers[0])
        await this.settings.set(ACME_ISSUER_SETTINGS.persistIssuer, issuers[0])
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
  async lookFirst(client: acme.Client, ch: ChallengeState, orderId: number): Promise<void> {
    const net = await this.net()
    const domain = baseDomain(ch.name)
    if (ch.type === 'http-01') return checkHttp01(domain, ch.token, ch.value, net)
    if (ch.type === 'dns-persist-01') {
      const verdict = await checkPersistRecord(domain, net.resolver, {
        issuerDomains: ch.issuerDomains ?? [],
        accountUri: client.getAccountUrl(),
        wildcard: ch.name.startsWith('*.'),
        now: this.ctx.clock()
      })
      // The record names one ACME account, and this reseller's is the only one its orders use:
      // a record published for another reseller never validates here, the customer must add this one.
      if (!verdict.ok)
        throw new ChallengeFailure(
          verdict.type,
          `the record at ${persistOwner(domain)} does not do: ${verdict.reason}; the customer must add ${persistOwner(domain)} TXT "${ch.value}"`
        )
      return
    }
    if (ch.delegated) {
      // CertDesk serves the value itself; what must be in place is the customer's CNAME.
      const resellerId = await this.resellerOf(orderId)
      await this.delegation.publish(resellerId, domain, ch.value, orderId)
      const [st] = await this.delegation.status(resellerId, [domain])
      if (!st?.in_place) throw new ChallengeFailure('dns', st?.detail ?? `no CNAME at _acme-challenge.${domain}`)
      return
    }
    return checkDns01(domain, { digest: ch.value }, net)
  }

  private async net(): Promise<Parameters<typeof checkHttp01>[3]> {
    return {
      resolver: (await this.settings.get(DCV_SETTINGS.resolver)) || null,
      http01Port: Number((await this.settings.get(DCV_SETTINGS.httpPort)) || 80),
      allowPrivateAddresses: await this.settings.flag(DCV_SETTINGS.allowPrivateAddresses),
      timeoutMs: 5000
    }
  }

  /** Challenges that need nothing from the customer: delegated dns-01 and dns-persist-01. */
  async unattended(client: acme.Client, authz: acme.Authorization, name: string): Promise<ChallengeState[]> {
    return (await this.offered(client, authz, name, 'dns-01')).filter((c) => c.delegated || c.type === 'dns-persist-01')
  }
}
