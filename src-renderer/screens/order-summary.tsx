/** What was bought and what it costs: payment, price breakdown, subscription end, reissue plan. */
import type { OrderView } from '../../src-preload/contract'
import { usd } from '../lib/format'
import { Badge } from '../ui'

/**
 * The payment as the invoice list says it: a cancelled order's invoice is cancelled, whatever
 * was paid (and then refunded) before; "unpaid" and "refunded" never stand beside "cancelled".
 */
function PaymentLine({ order }: { order: OrderView }): React.JSX.Element {
  const invoice = order.invoiceNumber ? `invoice ${order.invoiceNumber}` : ''
  if (order.status !== 'cancelled')
    return (
      <>
        <Badge status={order.paymentStatus} /> {invoice}
      </>
    )
  return (
    <>
      <Badge status="cancelled" /> {invoice ? `${invoice} cancelled; ` : ''}
      {order.paymentStatus === 'refunded' ? `${usd(order.total)} went back to the credit balance` : 'nothing was paid'}
    </>
  )
}

/** What renews the certificate: nothing once the order is cancelled or has ended. */
function reissueLine(order: OrderView): string {
  if (order.status === 'cancelled') return 'none: the order is cancelled'
  if (order.status === 'expired') return 'none: the subscription has ended'
  if (!order.autoReissue) return 'no (code signing)'
  // The schedule follows the certificate's lifetime, which the CA sets when it issues (an
  // external CA's may be shorter than the order's own): no date before the first certificate.
  if (!order.certValidTill) return 'yes, set by the first certificate'
  return order.nextReissueAt
    ? `yes, next ${order.nextReissueAt}`
    : `none: the subscription ends ${order.purchaseEndDate}`
}

export function OrderSummary({ order }: { order: OrderView }): React.JSX.Element {
  return (
    <section className="card">
      <h2>Order</h2>
      <dl className="facts">
        <dt>Payment</dt>
        <dd data-testid="payment-line">
          <PaymentLine order={order} />
        </dd>
        <dt>Price</dt>
        <dd>
          {usd(order.basePrice)} + SANs {usd(order.sanTotal)} − discount {usd(order.discountAmount)} ={' '}
          <b>{usd(order.total)}</b>
        </dd>
        <dt>Subscription ends</dt>
        <dd>{order.purchaseEndDate}</dd>
        <dt>Automatic reissue</dt>
        <dd data-testid="reissue-line">{reissueLine(order)}</dd>
        <dt>Max validity</dt>
        <dd>{order.maxValidityDays} days</dd>
        {order.statusNote ? (
          <>
            <dt>Note</dt>
            <dd>{order.statusNote}</dd>
          </>
        ) : null}
      </dl>
    </section>
  )
}
