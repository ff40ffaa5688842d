import { useEffect } from 'react'
import { BarChart, Donut } from '../charts'
import { daysUntil, statusLabel, usd } from '../lib/format'
import { href } from '../routes'
import { useStore } from '../store'
import { Badge, Can, DomainName, Stat } from '../ui'

export function Dashboard(): React.JSX.Element {
  const dashboard = useStore((s) => s.dashboard)
  const resellerId = useStore((s) => s.resellerId)
  const load = useStore((s) => s.loadDashboard)
  const go = useStore((s) => s.go)
  useEffect(() => {
    if (resellerId !== null) void load()
  }, [resellerId, load])
  if (!dashboard) return <p className="muted">Loading the dashboard…</p>
  const { stats } = dashboard
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Dashboard</h1>
        <Can m="createOrder">
          <button className="btn primary" onClick={() => go({ name: 'catalogue' })}>
            New order
          </button>
        </Can>
      </header>
      <div className="stats">
        <Stat label="Credit balance" value={usd(stats.creditBalance)} />
        <Stat
          label="Orders"
          value={stats.totalOrders.toLocaleString('en-US')}
          hint={`${stats.activeOrders.toLocaleString('en-US')} active, ${stats.pendingOrders.toLocaleString('en-US')} pending`}
        />
        <Stat label="Revenue this month" value={usd(stats.monthlyRevenue)} />
        <Stat label="Total revenue" value={usd(stats.totalRevenue)} />
      </div>
      <div className="grid-3">
        <section className="card span-2">
          <h2>Daily sales, last 30 days</h2>
          <BarChart data={stats.dailySales} label="Daily sales" />
        </section>
        <section className="card">
          <h2>Order statuses</h2>
          <Donut
            label="Order statuses"
            parts={Object.entries(stats.statusDistribution)
              .filter(([, n]) => n > 0)
              .map(([name, value]) => ({ name: statusLabel(name), value }))}
          />
        </section>
        <section className="card">
          <h2>Brands</h2>
          <Donut label="Brands" parts={stats.brandDistribution.map((b) => ({ name: b.brand, value: b.count }))} />
        </section>
        <section className="card">
          <h2>Expiring soon</h2>
          {dashboard.expiringSoon.length === 0 ? (
            <p className="muted">No certificate ends in the next 30 days without a renewal.</p>
          ) : (
            <ul className="plain-list">
              {dashboard.expiringSoon.map((o) => (
                <li key={o.id}>
                  <a href={href({ name: 'order', id: o.id })}>
                    <DomainName name={o.domain} />
                  </a>
                  <span className="muted"> in {daysUntil(o.certValidTill ?? '')} days</span>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="card">
          <h2>Waiting for CSR or validation</h2>
          {dashboard.waitingForValidation.length === 0 ? (
            <p className="muted">Nothing is waiting.</p>
          ) : (
            <ul className="plain-list">
              {dashboard.waitingForValidation.map((o) => (
                <li key={o.id}>
                  <a href={href({ name: 'order', id: o.id })}>{o.domain || o.orderNumber}</a>{' '}
                  <Badge status={o.status} />
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </div>
  )
}
