/**
 * ACME authorizations (RFC 8555 §7.5): what an account must prove for one name of an order,
 * read with their challenges, and deactivated by the client that holds them (§7.5.2).
 */
import type { CoreContext } from '../context'
import { AcmeError, noSuch } from './errors'
import {
  challengeOf,
  storedTime,
  type AcmeAccount,
  type AcmeAuthorization,
  type AuthzRow,
  type ChallengeRow
} from './records'

export class AcmeAuthorizations {
  constructor(private readonly ctx: CoreContext) {}

  async get(account: AcmeAccount, authzPublicId: string): Promise<AcmeAuthorization> {
    return this.view(this.owned(account, authzPublicId))
  }

  /** §7.5.2: a client may deactivate a pending or valid authorization it holds. */
  async deactivate(account: AcmeAccount, authzPublicId: string): Promise<AcmeAuthorization> {
    const db = this.ctx.db
    const id = db.transaction(() => {
      const z = this.owned(account, authzPublicId)
      if (z.status !== 'pending' && z.status !== 'valid')
        throw new AcmeError('malformed', `the authorization is ${z.status}`)
      db.prepare(`UPDATE acme_authorizations SET status = 'deactivated' WHERE id = ?`).run(z.id)
      return z.id
    })()
    return this.view(this.row(id))
  }

  /** The authorization of this account, or a 404: another account's ids are never confirmed. */
  owned(account: AcmeAccount, authzPublicId: string): AuthzRow {
    const a = this.ctx.db
      .prepare(
        'SELECT z.* FROM acme_authorizations z JOIN acme_orders o ON o.id = z.order_id WHERE z.public_id = ? AND o.account_id = ?'
      )
      .get(authzPublicId, account.id) as AuthzRow | undefined
    if (!a) throw noSuch('authorization')
    return a
  }

  row(id: number): AuthzRow {
    return this.ctx.db.prepare('SELECT * FROM acme_authorizations WHERE id = ?').get(id) as AuthzRow
  }

  private view(a: AuthzRow): AcmeAuthorization {
    const challenges = this.ctx.db
      .prepare('SELECT * FROM acme_challenges WHERE authz_id = ? ORDER BY id')
      .all(a.id) as ChallengeRow[]
    return {
      id: a.id,
      publicId: a.public_id,
      orderId: a.order_id,
      identifier: a.identifier,
      wildcard: a.wildcard === 1,
      status: a.status,
      expiresAt: storedTime(a.expires_at),
      challenges: challenges.map(challengeOf)
    }
  }
}
