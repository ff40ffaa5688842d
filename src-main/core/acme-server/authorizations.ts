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
    return await this.view(await this.owned(account, authzPublicId))
  }

  /** §7.5.2: a client may deactivate a pending or valid authorization it holds. */
  async deactivate(account: AcmeAccount, authzPublicId: string): Promise<AcmeAuthorization> {
    const db = this.ctx.store
    const id = await db.tx(async () => {
      const z = await this.owned(account, authzPublicId)
      if (z.status !== 'pending' && z.status !== 'valid')
        throw new AcmeError('malformed', `the authorization is ${z.status}`)
      await db.run(`UPDATE acme_authorizations SET status = 'deactivated' WHERE id = ?`, z.id)
      return z.id
    })
    return await this.view(await this.row(id))
  }

  /** The authorization of this account, or a 404: another account's ids are never confirmed. */
  async owned(account: AcmeAccount, authzPublicId: string): Promise<AuthzRow> {
    const a = (await this.ctx.store.get(
      'SELECT z.* FROM acme_authorizations z JOIN acme_orders o ON o.id = z.order_id WHERE z.public_id = ? AND o.account_id = ?',
      authzPublicId,
      account.id
    )) as AuthzRow | undefined
    if (!a) throw noSuch('authorization')
    return a
  }

  async row(id: number): Promise<AuthzRow> {
    return (await this.ctx.store.get('SELECT * FROM acme_authorizations WHERE id = ?', id)) as AuthzRow
  }

  private async view(a: AuthzRow): Promise<AcmeAuthorization> {
    const challenges = (await this.ctx.store.all(
      'SELECT * FROM acme_challenges WHERE authz_id = ? ORDER BY id',
      a.id
    )) as ChallengeRow[]
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
