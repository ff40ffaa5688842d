import { useEffect, useState } from 'react'
import type { OrderStatus, OrderView } from '../../src-preload/contract'
import { statusLabel, usd } from '../lib/format'
import { href } from '../routes'
import { useStore } from '../store'
import { Badge } from '../ui'
import { VirtualList } from '../virtual-list'

const STATUSES: OrderStatus[] = [
  'pending',
  'pending_configuration',
  'validation_pending',
  'processing',
  'completed',
  'cancelled',
  'expired'
]

export function Orders(): React.JSX.Element {
  const filter = useStore((s) => s.orders.filter)
  const setFilter = useStore((s) => s.setListFilter)
  const resellerId = useStore((s) => s.resellerId)
  const go = useStore((s) => s.go)
  const [domain, setDomain] = useState(filter.domain ?? '')
  useEffect(() => {
    if (resellerId !== null) void setFilter('orders', useStore.getState().orders.filter)
  }, [resellerId, setFilter])
  // Server-side search, a moment after the last keystroke.
  useEffect(() => {
    const t = setTimeout(() => {
      if ((filter.domain ?? '') !== domain) void setFilter('orders', { ...filter, domain: domain || undefined })
    }, 250)
    return () => clearTimeout(t)
  }, [domain, filter, setFilter])
  return (
    <div className="screen fill">
      <header className="screen-head">
        <h1>Orders</h1>
        <div className="filters">
          <input
            aria-label="Search domain"
            placeholder="Search domain…"
            value={domain}
            onChange={(e) => setDomain(e.target.value)}
          />
          <select
            aria-label="Status"
            value={filter.status ?? ''}
            onChange={(e) => void setFilter('orders', { ...filter, status: e.target.value || undefined })}
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
          <button className="btn primary" onClick={() => go({ name: 'catalogue' })}>
            New order
          </button>
        </div>
      </header>
      <VirtualList<OrderView>
        name="orders"
        header={
          <div className="cols orders-cols">
            <span>Order</span>
            <span>Domain</span>
            <span>Product</span>
            <span>Status</span>
            <span className="num">Total</span>
            <span>Created</span>
          </div>
        }
        row={(o) => (
          <a className="cols orders-cols row-link" href={href({ name: 'order', id: o.id })} data-order={o.orderNumber}>
            <span className="mono">{o.orderNumber}</span>
            <span className="strong">{o.domain || '—'}</span>
            <span>{o.productName}</span>
            <span>
              <Badge status={o.status} />
            </span>
            <span className="num">{usd(o.total)}</span>
            <span className="muted">{o.createdAt.slice(0, 10)}</span>
          </a>
        )}
      />
    </div>
  )
}
