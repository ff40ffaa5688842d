/**
 * ACME challenges (RFC 8555 §7.5.1, §8): a client asks for its challenge to be checked; the
 * check (../acme-challenges.ts) runs in the background and its outcome decides the challenge and
 * its authorization. The same resolver and HTTP port settings serve the order DCV checks: both
 * are "how this machine reaches a domain".
 */
import { ChallengeFailure, checkDns01, checkHttp01, type CheckSettings } from '../dcv/acme-challenges'
import type { CoreContext } from '../context'
import { DCV_SETTINGS } from '../dcv/dcv'
import { checkPersistRecord } from '../dcv/dns-persist'
import { DELEGATED_DNS_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { shownDirectoryUrl } from './client-setup'
import { isoTimestamp } from '../time'
import type { AcmeAuthorizations } from './authorizations'
import { acmeErrorDocument, noSuch } from './errors'
import { challengeOf, type AcmeAccount, type AcmeChallenge, type AuthzRow, type ChallengeRow } from './records'

/** The issuer domain name dns-persist-01 records must name; the shown directory's host unless set. */
export const PERSIST_ISSUER_SETTING = DELEGATED_DNS_SETTINGS.persistIssuer

/** draft-ietf-acme-dns-persist §3: the name this CA is known by in `_validation-persist` records. */
export async function persistIssuerDomain(settings: Settings): Promise<string> {
  const set = await settings.get(PERSIST_ISSUER_SETTING)
  if (set) return set.toLowerCase()
  return new URL(await shownDirectoryUrl(settings)).hostname.toLowerCase()
}

/** How long the http-01 check waits for the site to answer. */
const HTTP01_TIMEOUT_MS = 10_000

export interface ChallengeResponse {
  challenge: AcmeChallenge
  /** Public id of the authorization the challenge belongs to (§7.5.1 `up` link). */
  authorizationId: string
  /** The check started by this request, settled once its outcome is stored; null when none started. */
  validation: Promise<void> | null
}

export class AcmeChallenges {
  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly authorizations: AcmeAuthorizations
  ) {}

  /**
   * §7.5.1: `answered` (a POST with a JSON object) asks the server to check a pending challenge
   * of a pending authorization; a POST-as-GET only reads it.
   */
  async respond(account: AcmeAccount, challengePublicId: string, answered: boolean): Promise<ChallengeResponse> {
    const db = this.ctx.store
    const c = (await db.get(
      `SELECT c.* FROM acme_challenges c JOIN acme_authorizations z ON z.id = c.authz_id JOIN acme_orders o ON o.id = z.order_id
                WHERE c.public_id = ? AND o.account_id = ?`,
      challengePublicId,
      account.id
    )) as ChallengeRow | undefined
    if (!c) throw noSuch('challenge')
    const z = await this.authorizations.row(c.authz_id)
    let validation: Promise<void> | null = null
    if (answered && c.status === 'pending' && z.status === 'pending') {
      // Only the request that moves the challenge out of `pending` starts a check.
      const claimed = await db.run(
        `UPDATE acme_challenges SET status = 'processing' WHERE id = ? AND status = 'pending'`,
        c.id
      )
      if (claimed.changes === 1) validation = this.validate(c, z, `${c.token}.${account.thumbprint}`, account)
    }
    const now = (await db.get('SELECT * FROM acme_challenges WHERE id = ?', c.id)) as ChallengeRow
    return { challenge: challengeOf(now), authorizationId: z.public_id, validation }
  }

  private async checkSettings(): Promise<CheckSettings> {
    return {
      resolver: await this.settings.get(DCV_SETTINGS.resolver),
      http01Port: Number((await this.settings.get(DCV_SETTINGS.httpPort)) ?? 80),
      allowPrivateAddresses: await this.settings.flag(DCV_SETTINGS.allowPrivateAddresses),
      timeoutMs: HTTP01_TIMEOUT_MS
    }
  }

  /**
   * dns-persist-01 (draft-ietf-acme-dns-persist §4, BR §3.2.2.4.22): the record names this CA
   * and this account, has not passed its persistUntil, and allows wildcards for a wildcard name.
   */
  private async checkPersist(c: ChallengeRow, z: AuthzRow, account: AcmeAccount): Promise<void> {
    // The account URL as clients know it: under the public base URL when one is set.
    const directory = await shownDirectoryUrl(this.settings)
    const accountUri = directory.replace(/\/directory$/, `/acct/${account.id}`)
    const verdict = await checkPersistRecord(z.identifier, await this.settings.get(DCV_SETTINGS.resolver), {
      issuerDomains: [c.token],
      accountUri,
      wildcard: z.wildcard === 1,
      now: this.ctx.clock()
    })
    if (!verdict.ok)
      throw new ChallengeFailure(
        verdict.type,
        `could not validate ${z.identifier} over dns-persist-01: ${verdict.reason}`
      )
  }

  /** §8.3/§8.4 check, then the challenge and its authorization become valid or invalid together. */
  private async validate(c: ChallengeRow, z: AuthzRow, keyAuthorization: string, account: AcmeAccount): Promise<void> {
    let error: Record<string, unknown> | null = null
    try {
      if (c.type === 'http-01') await checkHttp01(z.identifier, c.token, keyAuthorization, await this.checkSettings())
      else if (c.type === 'dns-01') await checkDns01(z.identifier, keyAuthorization, await this.checkSettings())
      else await this.checkPersist(c, z, account)
    } catch (err) {
      error =
        err instanceof ChallengeFailure
          ? acmeErrorDocument(err.type, err.message)
          : acmeErrorDocument('serverInternal', `could not check the challenge: ${(err as Error).message}`)
    }
    const ts = isoTimestamp(this.ctx.clock())
    const db = this.ctx.store
    await db.tx(async () => {
      if (error) {
        await db.run(
          `UPDATE acme_challenges SET status = 'invalid', error = ? WHERE id = ?`,
          JSON.stringify(error),
          c.id
        )
        await db.run(`UPDATE acme_authorizations SET status = 'invalid' WHERE id = ?`, z.id)
      } else {
        await db.run(`UPDATE acme_challenges SET status = 'valid', validated_at = ? WHERE id = ?`, ts, c.id)
        await db.run(`UPDATE acme_authorizations SET status = 'valid' WHERE id = ?`, z.id)
      }
    })
  }
}
