/**
 * What needs the admin's attention: certificates ending soon that no automatic reissue will
 * replace, and orders waiting for a CSR or domain validation. Feeds the dashboard and the
 * desktop notifications.
 */
import type { CoreContext } from '../context'
import type { Order, Orders } from '../orders/orders'
import { inOrder } from '../pool'
import { addDays, isoDate, isoTimestamp } from '../time'

/** A certificate ending within this many days without a planned reissue is "expiring soon". */
export const EXPIRING_WITHIN_DAYS = 30
/** A validation untouched for this long is reported as stuck. */
export const STUCK_VALIDATION_DAYS = 3

const WAITING = ['pending', 'pending_configuration', 'validation_pending']

export class Watchlist {
  constructor(
    private readonly ctx: CoreContext,
    private readonly orders: Orders
  ) {}

  /** Issued, not renewed by the scheduler (subscription ends or code signing), ending soon. */
  async expiringSoon(resellerId: number, limit = 10): Promise<Order[]> {
    const now = this.ctx.clock()
    const ids = (await this.ctx.store.all(
      `SELECT id FROM orders WHERE reseller_id = ? AND status = 'completed' AND next_reissue_at IS NULL
           AND cert_valid_till IS NOT NULL AND cert_valid_till >= ? AND cert_valid_till <= ?
         ORDER BY cert_valid_till LIMIT ?`,
      resellerId,
      isoDate(now),
      isoDate(addDays(now, EXPIRING_WITHIN_DAYS)),
      limit
    )) as { id: number }[]
    return inOrder(ids, (r) => this.orders.get(resellerId, r.id))
  }

  async waitingForValidation(resellerId: number, limit = 10): Promise<Order[]> {
    const ids = (await this.ctx.store.all(
      `SELECT id FROM orders WHERE reseller_id = ? AND status IN (${WAITING.map(() => '?').join(',')})
         ORDER BY id LIMIT ?`,
      resellerId,
      ...WAITING,
      limit
    )) as { id: number }[]
    return inOrder(ids, (r) => this.orders.get(resellerId, r.id))
  }

  /** Every reseller's validations untouched for STUCK_VALIDATION_DAYS, for notifications. */
  async stuckValidations(limit = 20): Promise<Order[]> {
    const before = isoTimestamp(addDays(this.ctx.clock(), -STUCK_VALIDATION_DAYS))
    const rows = (await this.ctx.store.all(
      `SELECT id, reseller_id AS resellerId FROM orders WHERE status = 'validation_pending' AND updated_at <= ?
         ORDER BY updated_at LIMIT ?`,
      before,
      limit
    )) as { id: number; resellerId: number }[]
    return inOrder(rows, (r) => this.orders.get(r.resellerId, r.id))
  }

  /** Every reseller's certificates expiring without renewal, for notifications. */
  async expiringAll(limit = 20): Promise<Order[]> {
    const now = this.ctx.clock()
    const rows = (await this.ctx.store.all(
      `SELECT id, reseller_id AS resellerId FROM orders WHERE status = 'completed' AND next_reissue_at IS NULL
           AND cert_valid_till IS NOT NULL AND cert_valid_till >= ? AND cert_valid_till <= ?
         ORDER BY cert_valid_till LIMIT ?`,
      isoDate(now),
      isoDate(addDays(now, EXPIRING_WITHIN_DAYS)),
      limit
    )) as { id: number; resellerId: number }[]
    return inOrder(rows, (r) => this.orders.get(r.resellerId, r.id))
  }
}
