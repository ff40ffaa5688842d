import { useEffect } from 'react'
import { usd } from './lib/format'
import { ApiKeys } from './screens/api-keys'
import { Billing } from './screens/billing'
import { Catalogue } from './screens/catalogue'
import { Dashboard } from './screens/dashboard'
import { NewOrder } from './screens/new-order'
import { OrderDetail } from './screens/order-detail'
import { Orders } from './screens/orders'
import { Acme } from './screens/acme'
import { Settings } from './screens/settings'
import { useReseller, useStore, type Screen } from './store'

const NAV: { screen: Screen; label: string }[] = [
  { screen: { name: 'dashboard' }, label: 'Dashboard' },
  { screen: { name: 'catalogue' }, label: 'Catalogue' },
  { screen: { name: 'orders' }, label: 'Orders' },
  { screen: { name: 'billing' }, label: 'Billing' },
  { screen: { name: 'api' }, label: 'API & integrations' },
  { screen: { name: 'acme' }, label: 'ACME' },
  { screen: { name: 'settings' }, label: 'Settings' }
]

function Body(): React.JSX.Element {
  const screen = useStore((s) => s.screen)
  switch (screen.name) {
    case 'dashboard':
      return <Dashboard />
    case 'catalogue':
      return <Catalogue />
    case 'new-order':
      return <NewOrder />
    case 'orders':
      return <Orders />
    case 'order':
      return <OrderDetail id={screen.id} />
    case 'billing':
      return <Billing />
    case 'api':
      return <ApiKeys />
    case 'acme':
      return <Acme />
    case 'settings':
      return <Settings />
  }
}

function ResellerPicker(): React.JSX.Element {
  const resellers = useStore((s) => s.resellers)
  const resellerId = useStore((s) => s.resellerId)
  const select = useStore((s) => s.selectReseller)
  const reseller = useReseller()
  return (
    <div className="picker">
      <label className="muted small" htmlFor="acting-for">
        Acting for
      </label>
      <select id="acting-for" value={resellerId ?? ''} onChange={(e) => select(Number(e.target.value))}>
        {resellers.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name}
          </option>
        ))}
      </select>
      {reseller ? (
        <div className="balance" data-testid="balance">
          {usd(reseller.creditBalance)}
        </div>
      ) : null}
      {reseller ? (
        <div className="muted small">
          group {reseller.groupName ?? 'none'} · discount {reseller.discountRate}%
        </div>
      ) : null}
    </div>
  )
}

/** Browser mode, once the server has ended this tab's session: nothing else is shown or reachable. */
function SignInNeeded({ message }: { message: string }): React.JSX.Element {
  return (
    <div className="screen narrow">
      <section className="card" role="alert" data-testid="sign-in-needed">
        <h1>Sign-in needed</h1>
        <p>{message.charAt(0).toUpperCase() + message.slice(1)}</p>
        <p className="muted small">
          CertDesk prints a new one-time sign-in link in the terminal where it runs (npm start) whenever a browser
          session ends.
        </p>
      </section>
    </div>
  )
}

export function App(): React.JSX.Element {
  const signedOut = useStore((s) => s.signedOut)
  const canSignOut = useStore((s) => s.canSignOut)
  const signOut = useStore((s) => s.signOut)
  const screen = useStore((s) => s.screen)
  const go = useStore((s) => s.go)
  const toasts = useStore((s) => s.toasts)
  const loadSession = useStore((s) => s.loadSession)
  const resellerId = useStore((s) => s.resellerId)
  useEffect(() => {
    void loadSession()
  }, [loadSession])
  const active = screen.name === 'order' ? 'orders' : screen.name === 'new-order' ? 'catalogue' : screen.name
  return (
    <div className="shell">
      <nav className="sidebar">
        <div className="brand">
          <svg width={22} height={22} viewBox="0 0 24 24" aria-hidden="true">
            <path d="M12 2 4 5v6c0 5 3.4 9.4 8 11 4.6-1.6 8-6 8-11V5l-8-3Z" fill="#2563eb" />
            <path d="m8.5 12 2.5 2.5 4.5-5" stroke="#fff" strokeWidth={2} fill="none" />
          </svg>
          CertDesk
          {canSignOut && !signedOut ? (
            <button className="btn small sign-out" onClick={() => void signOut()}>
              Sign out
            </button>
          ) : null}
        </div>
        <ResellerPicker />
        <ul>
          {NAV.map((n) => (
            <li key={n.screen.name}>
              <a className={active === n.screen.name ? 'active' : ''} onClick={() => go(n.screen)}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content">
        {signedOut ? (
          <SignInNeeded message={signedOut} />
        ) : resellerId === null ? (
          <p className="muted">Loading…</p>
        ) : (
          <Body />
        )}
      </main>
      <div className="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
            {t.text}
          </div>
        ))}
      </div>
    </div>
  )
}
