/**
 * The acting reseller's ACME subscriptions: what an ACME client needs to get certificates from
 * CertDesk's embedded server (EAB key id, directory URL, ready-to-paste commands), built by the
 * same core function as GET /orders/{id}/acme. The HMAC key is read only on an explicit click.
 */
import { useEffect } from 'react'
import type { AcmeSubscriptionView } from '../../src-preload/contract'
import { HMAC_KEY_PLACEHOLDER } from '../../src-preload/channels'
import { href } from '../routes'
import { useStore } from '../store'
import { Badge, Can, CopyButton, DomainNames, ErrorBox } from '../ui'

const CLIENTS = [
  ['certbot', 'certbot'],
  ['lego', 'lego'],
  ['acme.sh', 'acmeSh']
] as const

export function Subscription({ sub, page = false }: { sub: AcmeSubscriptionView; page?: boolean }): React.JSX.Element {
  const revealed = useStore((s) => s.acmeKeys[sub.orderId] ?? null)
  const reveal = useStore((s) => s.revealAcmeKey)
  const hmac = revealed?.eabHmacKey ?? null
  // Shown exactly as the core built and quoted them; the renderer never edits a command line.
  const commands = revealed?.commands ?? sub.commands
  return (
    <section className="card" data-testid="acme-subscription" data-order={sub.orderNumber}>
      <div className="card-head">
        <h2>
          {page ? 'Subscription' : <DomainNames names={sub.domains} />} <Badge status={sub.status} />
        </h2>
        {page ? null : (
          <a className="small" href={href({ name: 'acme-subscription', id: sub.orderId })}>
            Open {sub.orderNumber}
          </a>
        )}
      </div>
      <dl className="facts">
        <dt>Product</dt>
        <dd>
          {sub.productName} ({sub.category === 'ais' ? 'auto-install' : 'certificate as a service'})
        </dd>
        <dt>Began</dt>
        <dd>{sub.begin}</dd>
        <dt>End date</dt>
        <dd data-testid="acme-end">{sub.end ?? 'open end'}</dd>
        <dt>Next renewal</dt>
        <dd data-testid="acme-next-renewal">{sub.nextRenewal}</dd>
        <dt>Server URL</dt>
        <dd className="mono break" data-testid="acme-server-url">
          {sub.serverUrl} <CopyButton text={sub.serverUrl} />
        </dd>
        <dt>EAB key id</dt>
        <dd className="mono break" data-testid="acme-eab-kid">
          {sub.eabKid} <CopyButton text={sub.eabKid} />
        </dd>
        <dt>EAB HMAC key</dt>
        <dd className="mono break" data-testid="acme-hmac">
          {hmac ? (
            <>
              {hmac} <CopyButton text={hmac} />
            </>
          ) : (
            <Can m="acmeHmacKey">
              <button className="btn small" type="button" onClick={() => void reveal(sub.orderId)}>
                Reveal HMAC key
              </button>
            </Can>
          )}
        </dd>
        <dt>Accounts</dt>
        <dd className="break" data-testid="acme-accounts">
          {sub.accounts.length === 0 ? (
            <span className="muted">none bound yet (pending until a client registers with the EAB key)</span>
          ) : (
            sub.accounts.map((a) => (
              <div key={a.url} className="mono small">
                {a.url} <Badge status={a.status === 'valid' ? 'completed' : 'cancelled'} label={a.status} />
              </div>
            ))
          )}
        </dd>
        <dt>Root certificate</dt>
        <dd className="mono break small" data-testid="acme-command-rootCa">
          {sub.commands.rootCa} <CopyButton text={sub.commands.rootCa} />
        </dd>
        {sub.setupUrl ? (
          <>
            <dt>Set-up page</dt>
            <dd className="mono break small">
              {sub.setupUrl} <CopyButton text={sub.setupUrl} />
            </dd>
          </>
        ) : null}
      </dl>
      {!hmac ? (
        <p className="muted small">
          The commands show {HMAC_KEY_PLACEHOLDER} until the HMAC key is revealed; copy them afterwards to paste them as
          they are.
        </p>
      ) : null}
      {CLIENTS.map(([label, key]) => (
        <div key={key} data-testid={`acme-command-${key}`}>
          <div className="card-head">
            <h3>{label}</h3>
            <CopyButton text={commands[key]} label={`Copy ${label} command`} />
          </div>
          <pre className="pre mono small break">{commands[key]}</pre>
        </div>
      ))}
    </section>
  )
}

export function Acme(): React.JSX.Element {
  const subs = useStore((s) => s.acmeSubscriptions)
  const error = useStore((s) => s.acmeError)
  const resellerId = useStore((s) => s.resellerId)
  const load = useStore((s) => s.loadAcme)
  const loadProducts = useStore((s) => s.loadProducts)
  const filter = useStore((s) => s.productFilter)
  const go = useStore((s) => s.go)
  useEffect(() => {
    if (resellerId !== null) void load()
  }, [resellerId, load])
  const toCatalogue = (): void => {
    void loadProducts({ ...filter, includeAcme: true })
    go({ name: 'catalogue' })
  }
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>ACME subscriptions</h1>
        <Can m="createOrder">
          <button className="btn primary" onClick={toCatalogue}>
            Order an ACME subscription
          </button>
        </Can>
      </header>
      <section className="card">
        <p>
          An ACME subscription lets a customer&apos;s ACME client (certbot, lego, acme.sh) obtain and renew certificates
          from CertDesk&apos;s ACME server by itself for a year. To order one, open the{' '}
          <a href={href({ name: 'catalogue' })} onClick={toCatalogue}>
            catalogue with ACME subscriptions shown
          </a>
          , choose a PositiveSSL ACME product and enter the domain; the order completes at once and appears here with
          its EAB credentials.
        </p>
      </section>
      <ErrorBox text={error} />
      {subs.map((s) => (
        <Subscription key={s.orderId} sub={s} />
      ))}
      {subs.length === 0 && !error ? <p className="muted">No ACME subscriptions for this reseller yet.</p> : null}
    </div>
  )
}
