/** What was bought and what it costs: payment, price breakdown, subscription end, reissue plan. */
import type { OrderView } from '../../src-preload/contract'
import { usd } from '../lib/format'
import { Badge } from '../ui'

export function OrderSummary({ order }: { order: OrderView }): React.JSX.Element {
  return (
    <section className="card">
      <h2>Order</h2>
      <dl className="facts">
        <dt>Payment</dt>
        <dd>
          <Badge status={order.paymentStatus} /> {order.invoiceNumber ? `invoice ${order.invoiceNumber}` : ''}
        </dd>
        <dt>Price</dt>
        <dd>
          {usd(order.basePrice)} + SANs {usd(order.sanTotal)} − discount {usd(order.discountAmount)} ={' '}
          <b>{usd(order.total)}</b>
        </dd>
        <dt>Subscription ends</dt>
        <dd>{order.purchaseEndDate}</dd>
        <dt>Automatic reissue</dt>
        <dd>
          {order.autoReissue
            ? `yes, next ${order.nextReissueAt ?? (order.certValidTill ? '—' : 'set by the first certificate')}`
            : 'no (code signing)'}
        </dd>
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
