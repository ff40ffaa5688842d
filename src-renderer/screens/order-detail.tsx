/**
 * An order's page: its header with pay and cancel, the timeline, and one component per step
 * (CSR, validation, certificate and downloads, deploy targets), each in its own file.
 */
import { useEffect, useState } from 'react'
import { navigate } from 'wouter/use-hash-location'
import { usd, years } from '../lib/format'
import { href, pathOf } from '../routes'
import { useStore } from '../store'
import { Can, Badge, CopyButton, DomainName, ErrorBox } from '../ui'
import { NotFound } from './not-found'
import { OrderEventsCard } from './order-events'
import { DeployTargets } from './deploy-targets'
import { OrderCertificate } from './order-certificate'
import { OrderInstallation } from './order-installation'
import { OrderRenewal } from './order-renewal'
import { CsrStep } from './order-csr-step'
import { OrderSummary } from './order-summary'
import { OrderTimeline } from './order-timeline'
import { ValidationStep } from './order-validation'

export function OrderDetail({ id }: { id: number }): React.JSX.Element {
  const order = useStore((s) => s.order)
  const error = useStore((s) => s.orderError)
  const lastRefund = useStore((s) => s.lastRefund)
  const load = useStore((s) => s.loadOrder)
  const loadSsl = useStore((s) => s.loadSsl)
  const cancel = useStore((s) => s.cancelOrder)
  const pay = useStore((s) => s.payOrder)
  const loadAcmePage = useStore((s) => s.loadAcmePage)
  const [confirming, setConfirming] = useState(false)
  const resellerId = useStore((s) => s.resellerId)
  // Again when the acting reseller changes: the same address may name no order of the new one.
  useEffect(() => {
    if (resellerId !== null) void load(id)
  }, [id, resellerId, load])
  const status = order?.id === id ? order.status : null
  // Orders past the CSR step have a live validation status and maybe a certificate.
  useEffect(() => {
    if (status && !['pending', 'cancelled'].includes(status)) void loadSsl(id)
  }, [id, status, loadSsl])
  // An ACME subscription has its own page; the address of its order leads there.
  useEffect(() => {
    if (status !== 'completed' && status !== 'cancelled' && status !== 'expired') return
    void loadAcmePage(id).then((sub) => {
      if (sub && useStore.getState().orderId === id)
        navigate(pathOf({ name: 'acme-subscription', id }), { replace: true })
    })
  }, [id, status, loadAcmePage])
  // Another reseller's order and an id that names no order read alike (the core answers 404 for both).
  if (error) return /not found/i.test(error) ? <NotFound what="order" /> : <ErrorBox text={error} />
  if (!order || order.id !== id) return <p className="muted">Loading the order…</p>
  const cancellable = order.status === 'pending' || order.status === 'processing'
  return (
    <div className="screen">
      <header className="screen-head">
        <div>
          <a className="muted small" href={href({ name: 'orders' })}>
            ← Orders
          </a>
          <h1>
            {order.domain ? <DomainName name={order.domain} full /> : order.productName} <Badge status={order.status} />
            {order.certificateRevoked ? <Badge status="revoked" label="certificate revoked" /> : null}
          </h1>
          <div className="muted">
            <span data-testid="order-number">{order.orderNumber}</span>{' '}
            <CopyButton text={order.orderNumber} label="Copy number" /> · {order.brand} {order.productName} ·{' '}
            {years(order.periodMonths)}
          </div>
        </div>
        <div className="actions">
          <Can m="payOrder">
            {order.paymentStatus === 'unpaid' && order.status !== 'cancelled' ? (
              <button className="btn" type="button" onClick={() => void pay(order.id)}>
                Pay {usd(order.total)} from credit
              </button>
            ) : null}
          </Can>
          <Can m="cancelOrder">
            {cancellable && !confirming ? (
              <button className="btn danger" onClick={() => setConfirming(true)}>
                Cancel order
              </button>
            ) : null}
          </Can>
        </div>
      </header>
      {confirming && cancellable ? (
        <div className="confirm" role="dialog" aria-label="Cancel order">
          <p>
            Cancel {order.orderNumber}?{' '}
            {order.paymentStatus === 'paid'
              ? `${usd(order.total)} goes back to the credit balance.`
              : 'Its unpaid invoice is cancelled.'}
          </p>
          <button className="btn danger" onClick={() => void cancel(order.id).then(() => setConfirming(false))}>
            Yes, cancel and refund
          </button>
          <button className="btn" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      ) : null}
      {order.status === 'cancelled' && lastRefund ? (
        <div className="ok-box" role="status">
          {lastRefund.refunded > 0
            ? `Refunded ${usd(lastRefund.refunded)}; the balance is now ${usd(lastRefund.newBalance)}.`
            : 'Cancelled; its invoice is cancelled, and as nothing was paid nothing was refunded.'}
        </div>
      ) : null}
      <OrderTimeline order={order} />
      <div className="grid-2">
        <OrderSummary order={order} />
        {/* Keyed by order: a typed export password or an error never carries over to another order. */}
        <OrderCertificate key={order.id} order={order} />
      </div>
      {order.status === 'pending' || order.status === 'pending_configuration' ? (
        <Can m="configureOrder" otherwise={<p className="muted card">Waiting for its CSR.</p>}>
          <CsrStep key={`csr-${order.id}`} order={order} />
        </Can>
      ) : null}
      {order.status === 'validation_pending' || order.status === 'processing' || order.status === 'completed' ? (
        <ValidationStep key={`validation-${order.id}`} order={order} />
      ) : null}
      {order.status !== 'cancelled' ? <DeployTargets key={`deploy-${order.id}`} order={order} /> : null}
      {order.status !== 'cancelled' && order.status !== 'pending' ? <OrderRenewal order={order} /> : null}
      {order.status === 'completed' ? <OrderInstallation key={`installation-${order.id}`} orderId={order.id} /> : null}
      <OrderEventsCard orderId={order.id} />
    </div>
  )
}
