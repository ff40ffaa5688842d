import { useEffect, useRef } from 'react'
import { Route, Router, Switch, useLocation, useParams } from 'wouter'
import { usd } from './lib/format'
import { focusHeading, usePageFocus } from './page-focus'
import { href, idFrom, useHashPath, useHashSearch, type Screen } from './routes'
import { AcmeSubscriptionPage } from './screens/acme-subscription'
import { Alerts } from './screens/alerts'
import { ApiKeys } from './screens/api-keys'
import { Billing } from './screens/billing'
import { Catalogue } from './screens/catalogue'
import { Dashboard } from './screens/dashboard'
import { EventLog } from './screens/event-log'
import { ExpiryReport, Imports } from './screens/imports'
import { InvoicePage } from './screens/invoice'
import { NewOrder } from './screens/new-order'
import { NotFound } from './screens/not-found'
import { OrderDetail } from './screens/order-detail'
import { Orders } from './screens/orders'
import { Acme } from './screens/acme'
import { Settings } from './screens/settings'
import { Admins } from './screens/admins'
import { AuditLog } from './screens/audit-log'
import { MyAccount } from './screens/my-account'
import { SignInScreen } from './screens/sign-in'
import { TeamConnect } from './screens/team'
import { BookIndicator } from './book'
import type { AppMethod } from '../src-preload/contract'
import { useReseller, useStore } from './store'

/** The screens in the sidebar; one with `needs` shows only to a session that may call that method. */
const NAV: { screen: Screen; label: string; paths: RegExp; needs?: AppMethod }[] = [
  { screen: { name: 'dashboard' }, label: 'Dashboard', paths: /^\/$/ },
  { screen: { name: 'catalogue' }, label: 'Catalogue', paths: /^\/catalogue(\/|$)/ },
  { screen: { name: 'orders' }, label: 'Orders', paths: /^\/orders(\/|$)/ },
  { screen: { name: 'billing' }, label: 'Billing', paths: /^\/(billing|invoices)(\/|$)/ },
  { screen: { name: 'events' }, label: 'Event log', paths: /^\/events$/ },
  { screen: { name: 'imports' }, label: 'Imported certificates', paths: /^\/imports$/ },
  { screen: { name: 'expiring' }, label: 'Expiring', paths: /^\/reports\/expiring$/ },
  { screen: { name: 'alerts' }, label: 'Alerts', paths: /^\/alerts$/ },
  { screen: { name: 'api' }, label: 'API & integrations', paths: /^\/api$/ },
  { screen: { name: 'acme' }, label: 'ACME', paths: /^\/acme(\/|$)/ },
  { screen: { name: 'settings' }, label: 'Settings', paths: /^\/settings$/ },
  { screen: { name: 'admins' }, label: 'Admins', paths: /^\/admins$/, needs: 'listAdmins' },
  { screen: { name: 'audit' }, label: 'Audit log', paths: /^\/audit$/, needs: 'auditLog' },
  { screen: { name: 'account' }, label: 'My account', paths: /^\/account$/, needs: 'changePassword' }
]

/** A page about one record: its id from the address, or "not found" for anything that is not an id. */
function ById({ render, what }: { render: (id: number) => React.JSX.Element; what: string }): React.JSX.Element {
  const { id } = useParams<{ id: string }>()
  const n = idFrom(id)
  return n === null ? <NotFound what={what} /> : render(n)
}

function Body(): React.JSX.Element {
  return (
    <Switch>
      <Route path="/" component={Dashboard} />
      <Route path="/catalogue" component={Catalogue} />
      <Route path="/catalogue/new-order" component={NewOrder} />
      <Route path="/orders" component={Orders} />
      <Route path="/orders/:id">
        {/* Keyed by id: nothing typed on one order's page stays on another's. */}
        <ById what="order" render={(id) => <OrderDetail key={id} id={id} />} />
      </Route>
      <Route path="/billing" component={Billing} />
      <Route path="/invoices/:id">
        <ById what="invoice" render={(id) => <InvoicePage key={id} id={id} />} />
      </Route>
      <Route path="/events" component={EventLog} />
      <Route path="/imports" component={Imports} />
      <Route path="/reports/expiring" component={ExpiryReport} />
      <Route path="/alerts" component={Alerts} />
      <Route path="/api" component={ApiKeys} />
      <Route path="/acme" component={Acme} />
      <Route path="/acme/:id">
        <ById what="ACME subscription" render={(id) => <AcmeSubscriptionPage key={id} id={id} />} />
      </Route>
      <Route path="/settings" component={Settings} />
      <Route path="/team" component={TeamConnect} />
      <Route path="/admins" component={Admins} />
      <Route path="/audit" component={AuditLog} />
      <Route path="/account" component={MyAccount} />
      <Route>
        <NotFound what="page" />
      </Route>
    </Switch>
  )
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

export function App(): React.JSX.Element {
  return (
    <Router hook={useHashPath}>
      <Shell />
    </Router>
  )
}

function Shell(): React.JSX.Element {
  const [location] = useLocation()
  const signedOut = useStore((s) => s.signedOut)
  const canSignOut = useStore((s) => s.canSignOut)
  const signOut = useStore((s) => s.signOut)
  const toasts = useStore((s) => s.toasts)
  const loadSession = useStore((s) => s.loadSession)
  const resellerId = useStore((s) => s.resellerId)
  const allowed = useStore((s) => s.allowed)
  const isAccount = useStore((s) => s.account?.account ?? false)
  const main = useRef<HTMLElement>(null)
  // Each screen's link leads back to the screen as it was last shown (its view, filters, tab):
  // the address still says it all, so a reload or a pasted link shows the same.
  const search = useHashSearch()
  const lastQuery = useRef<Record<string, string>>({})
  lastQuery.current[location] = search ? `?${search}` : ''
  useEffect(() => {
    void loadSession()
  }, [loadSession])
  usePageFocus(main, location, NAV.find((n) => n.paths.test(location))?.label ?? 'Not found')
  return (
    <div className="shell">
      {/* WCAG 2.4.1 "Bypass Blocks": the first stop of Tab skips the sidebar. A button-like link,
          since a fragment link would be an address of this app. */}
      <a
        className="skip-link"
        href={`#${location}`}
        onClick={(e) => {
          e.preventDefault()
          if (!focusHeading(main.current)) main.current?.focus()
        }}
      >
        Skip to main content
      </a>
      <nav className="sidebar" aria-label="CertDesk">
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
        {/* Until signed in, nothing of the book is shown or reachable, not even its resellers. */}
        {signedOut ? null : <BookIndicator />}
        {signedOut ? null : <ResellerPicker />}
        {signedOut ? null : (
          <ul>
            {NAV.filter((n) => !n.needs || (allowed.has(n.needs) && (n.screen.name !== 'account' || isAccount))).map(
              (n) => {
                const here = n.paths.test(location)
                const to = href(n.screen)
                return (
                  <li key={n.screen.name}>
                    <a
                      href={`${to}${lastQuery.current[to.slice(1)] ?? ''}`}
                      className={here ? 'active' : ''}
                      aria-current={here ? 'page' : undefined}
                    >
                      {n.label}
                    </a>
                  </li>
                )
              }
            )}
          </ul>
        )}
        {/* In the sidebar's own flow, below the links: a message never lies over a link or a button. */}
        <div className="toasts" aria-live="polite">
          {toasts.map((t) => (
            <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
              {t.text}
            </div>
          ))}
        </div>
      </nav>
      <main className="content" ref={main} tabIndex={-1}>
        {signedOut ? (
          <SignInScreen need={signedOut.need} message={signedOut.message} />
        ) : resellerId === null ? (
          <p className="muted">Loading…</p>
        ) : (
          <Body />
        )}
      </main>
    </div>
  )
}
