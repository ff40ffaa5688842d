/**
 * How many approval messages CertDesk sends, one of its own limits (../rate-limits.ts). Each
 * message goes through the admin's SMTP relay to a mailbox such as admin@ a domain (BR
 * §3.2.2.4.4), and the names of an order are whatever its CSR says, so a script repeating
 * resend-validation, change-dcv or configure must not turn the relay into a mailer to strangers'
 * admin@ boxes. Two limits, both checked before anything changes and counted in the same write
 * transaction as the change that asks for the messages, so concurrent requests cannot slip past:
 *
 * - per order, in sends (one request that mails the order's pending names, however many);
 * - per reseller, in messages, so a reseller cannot spread sends over many orders or names.
 *
 * Messages kept in the outbox (no SMTP relay set) count too: the limit must not depend on a
 * setting, and the outbox is stored.
 */
import type { Order } from '../orders/orders'
import { DAY_MS, HOUR_MS, limitHit, rateLimited, type Counted, type LimitWindow } from '../rate-limits'
import { isoTimestamp, parseDate } from '../time'
import type { Store } from '../store'

/**
 * Sends per order within any 60 minutes. A person needs the first message, a resend or two when
 * it did not arrive, and a change of approver: five.
 */
export const APPROVAL_SENDS_PER_ORDER_HOUR = 5
/** Sends per order within any 24 hours: twice the hour's allowance. */
export const APPROVAL_SENDS_PER_ORDER_DAY = 10
/**
 * Messages per reseller within any 60 minutes: one configure of the largest multi-domain order
 * the catalogue sells (252 names) fits, and so do a few hundred single-name orders an hour.
 */
export const APPROVAL_MESSAGES_PER_RESELLER_HOUR = 300
/** Messages per reseller within any 24 hours. */
export const APPROVAL_MESSAGES_PER_RESELLER_DAY = 1000

const PER_ORDER: LimitWindow[] = [
  { limit: APPROVAL_SENDS_PER_ORDER_HOUR, ms: HOUR_MS, label: 'an hour' },
  { limit: APPROVAL_SENDS_PER_ORDER_DAY, ms: DAY_MS, label: '24 hours' }
]
const PER_RESELLER: LimitWindow[] = [
  { limit: APPROVAL_MESSAGES_PER_RESELLER_HOUR, ms: HOUR_MS, label: 'an hour' },
  { limit: APPROVAL_MESSAGES_PER_RESELLER_DAY, ms: DAY_MS, label: '24 hours' }
]

/**
 * Counts a send of `messages` approval messages for `order` at `now`, or throws a 429 (with
 * Retry-After) when it would pass a limit. Call it inside the write transaction of the change
 * that asks for the messages, before they are sent: a refusal then rolls the change back, and
 * the count is written before any message leaves.
 */
export async function countApprovalSend(db: Store, order: Order, messages: number, now: Date): Promise<void> {
  if (messages <= 0) return
  const since = isoTimestamp(new Date(now.getTime() - DAY_MS))
  // Rows past every window never count again.
  await db.run('DELETE FROM approval_mail_sends WHERE reseller_id = ? AND sent_at <= ?', order.resellerId, since)
  const rows = (await db.all(
    'SELECT order_id, messages, sent_at FROM approval_mail_sends WHERE reseller_id = ? AND sent_at > ?',
    order.resellerId,
    since
  )) as { order_id: number; messages: number; sent_at: string }[]
  const at = (r: { sent_at: string }): number => parseDate(r.sent_at).getTime()
  const sends: Counted[] = rows.filter((r) => r.order_id === order.id).map((r) => ({ at: at(r) }))
  const what = `could not send the approval email for order ${order.orderNumber}`
  const perOrder = limitHit(sends, PER_ORDER, now)
  if (perOrder) {
    throw rateLimited(
      `${what}: approval email was sent for it ${perOrder.window.limit} times within ${perOrder.window.label}, the most allowed`,
      perOrder,
      now
    )
  }
  const sent: Counted[] = rows.map((r) => ({ at: at(r), units: r.messages }))
  const perReseller = limitHit(sent, PER_RESELLER, now, messages)
  if (perReseller) {
    throw rateLimited(
      `${what}: this account sent ${perReseller.used} approval messages within ${perReseller.window.label} and ${messages} more would pass the ${perReseller.window.limit} allowed`,
      perReseller,
      now
    )
  }
  await db.run(
    'INSERT INTO approval_mail_sends (reseller_id, order_id, messages, sent_at) VALUES (?, ?, ?, ?)',
    order.resellerId,
    order.id,
    messages,
    isoTimestamp(now)
  )
}
