import { useEffect, useState } from 'react'
import type { OrderStatus, OrderView } from '../../src-preload/contract'
import type { OrderSort } from '../../src-shared/list-records'
import { ExportButton } from '../export-tray'
import { daysUntil, statusLabel, usd } from '../lib/format'
import { href } from '../routes'
import { InstallationTag } from './order-installation'
import { useStore } from '../store'
import { Can, Badge, DomainName } from '../ui'
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

/** The direction each sort reads first: newest orders, A to Z, soonest expiry. */
const FIRST_DIR: Record<OrderSort, 'asc' | 'desc'> = { date: 'desc', domain: 'asc', status: 'asc', expiry: 'asc' }

/** Days until the certificate ends: "—" without one, "ended" once past. */
export function daysLeft(o: Pick<OrderView, 'certValidTill'>, now = new Date()): string {
  if (!o.certValidTill) return '—'
  const d = daysUntil(o.certValidTill, now)
  return d < 0 ? 'ended' : d.toLocaleString('en-US')
}

export function Orders(): React.JSX.Element {
  const list = useStore((s) => s.orders)
  const { filter } = list
  const sort = list.sort ?? 'date'
  const dir = list.dir ?? FIRST_DIR[sort]
  const setFilter = useStore((s) => s.setListFilter)
  const resellerId = useStore((s) => s.resellerId)
  const go = useStore((s) => s.go)
  const [search, setSearch] = useState(filter.search ?? '')
  useEffect(() => {
    if (resellerId !== null) void setFilter('orders', useStore.getState().orders.filter)
  }, [resellerId, setFilter])
  // Server-side search, a moment after the last keystroke.
  useEffect(() => {
    const t = setTimeout(() => {
      if ((filter.search ?? '') !== search.trim())
        void setFilter('orders', { ...filter, search: search.trim() || undefined })
    }, 250)
    return () => clearTimeout(t)
  }, [search, filter, setFilter])
  const sortBy = (s: OrderSort) => {
    const next = s === sort ? (dir === 'asc' ? 'desc' : 'asc') : FIRST_DIR[s]
    void setFilter('orders', filter, { sort: s, dir: next })
  }
  const head = (s: OrderSort, text: string, className?: string) => (
    // The header sits outside the grid, so the order shows in the button (▲/▼), not in aria-sort.
    <span className={className}>
      <button className="sort" onClick={() => sortBy(s)}>
        {text}
        {s === sort ? (dir === 'asc' ? ' ▲' : ' ▼') : ''}
      </button>
    </span>
  )
  return (
    <div className="screen fill">
      <header className="screen-head">
        <h1>Orders</h1>
        <div className="filters">
          <input
            aria-label="Search order number or domain"
            placeholder="ORD-… or domain"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <select
            aria-label="Status"
            value={filter.status ?? ''}
            onChange={(e) =>
              void setFilter('orders', { ...filter, status: (e.target.value || undefined) as OrderStatus | undefined })
            }
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
          <label className="check">
            <input
              type="checkbox"
              checked={filter.unpaid ?? false}
              onChange={(e) => void setFilter('orders', { ...filter, unpaid: e.target.checked || undefined })}
            />
            Unpaid only
          </label>
          <ExportButton list="orders" file="orders.csv" filter={filter} sort={sort} dir={dir} />
          <Can m="createOrder">
            <button className="btn primary" onClick={() => go({ name: 'catalogue' })}>
              New order
            </button>
          </Can>
        </div>
      </header>
      <VirtualList<OrderView>
        name="orders"
        label="Orders"
        header={
          <div className="cols orders-cols">
            <span>Order</span>
            {head('domain', 'Domain')}
            <span className="col-product">Product</span>
            {head('status', 'Status')}
            <span className="num">Total</span>
            {head('date', 'Created')}
            {head('expiry', 'Days left', 'num')}
          </div>
        }
        row={(o) => (
          <a className="cols orders-cols row-link" href={href({ name: 'order', id: o.id })} data-order={o.orderNumber}>
            <span className="mono">{o.orderNumber}</span>
            <span className="strong">{o.domain ? <DomainName name={o.domain} /> : '—'}</span>
            <span className="col-product" title={o.productName}>
              {o.productName}
            </span>
            <span title={statusLabel(o.status) + (o.paymentStatus === 'unpaid' ? ', unpaid' : '')}>
              <Badge status={o.status} />
              {o.certificateRevoked ? <Badge status="revoked" label="certificate revoked" /> : null}
              {o.paymentStatus === 'unpaid' ? <span className="tag warn">unpaid</span> : null}
              {o.status === 'completed' ? <InstallationTag orderId={o.id} /> : null}
            </span>
            <span className="num">{usd(o.total)}</span>
            <span className="muted">{o.createdAt.slice(0, 10)}</span>
            <span className="num">{daysLeft(o)}</span>
          </a>
        )}
      />
    </div>
  )
}
