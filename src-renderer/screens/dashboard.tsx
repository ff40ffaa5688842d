import { useEffect } from 'react'
import { BarChart, Donut } from '../charts'
import { statusLabel, usd } from '../lib/format'
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
  const { stats, expiring } = dashboard
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
        <section className="card" aria-labelledby="expiring-heading" data-testid="dashboard-expiring">
          <h2 id="expiring-heading">Expiring in {expiring.days} days</h2>
          <p>
            <a className="stat-value" href={href({ name: 'expiring' }, { days: expiring.days })}>
              {expiring.total.toLocaleString('en-US')}
            </a>{' '}
            <span className="muted">
              certificate{expiring.total === 1 ? '' : 's'}, issued here or imported;{' '}
              {expiring.withoutRenewal.toLocaleString('en-US')} with no renewal planned
            </span>
          </p>
          {expiring.soonest.length === 0 ? (
            <p className="muted">None ends without a renewal.</p>
          ) : (
            <ul className="plain-list">
              {expiring.soonest.map((c) => (
                <li key={c.reference}>
                  <a
                    href={
                      c.kind === 'issued' && c.orderId
                        ? href({ name: 'order', id: c.orderId })
                        : href({ name: 'imports' })
                    }
                  >
                    {c.domain ? <DomainName name={c.domain} /> : c.reference}
                  </a>
                  <span className="muted">
                    {' '}
                    {c.kind === 'imported' ? 'imported, ' : ''}
                    {c.daysLeft === 0 ? 'ends today' : `in ${c.daysLeft.toLocaleString('en-US')} days`}
                  </span>
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
