/**
 * An ACME subscription order's own page: the subscription (status, end, next renewal), its EAB
 * credentials with the HMAC key read only on request, the bound accounts, the certificates ACME
 * clients obtained through it, and the client commands. There is no CSR or validation step: the
 * customer's ACME client proves control of each name itself (RFC 8555 §8).
 */
import { useEffect } from 'react'
import { download } from '../lib/format'
import { href } from '../routes'
import { useStore } from '../store'
import { Badge, CopyButton, DomainNames } from '../ui'
import { Subscription } from './acme'
import { NotFound } from './not-found'
import { OrderEventsCard } from './order-events'

export function AcmeSubscriptionPage({ id }: { id: number }): React.JSX.Element {
  const page = useStore((s) => (s.acmePage?.orderId === id ? s.acmePage : null))
  const load = useStore((s) => s.loadAcmePage)
  const resellerId = useStore((s) => s.resellerId)
  useEffect(() => {
    if (resellerId !== null) void load(id)
  }, [id, resellerId, load])
  // An order of another reseller, an order that is not a subscription, or no order at all.
  if (page?.loaded && page.view === null) return <NotFound what="ACME subscription" />
  if (!page?.view) return <p className="muted">Loading the subscription…</p>
  const { subscription: sub, certificates } = page.view
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <div>
          <a className="muted small" href={href({ name: 'acme' })}>
            ← ACME subscriptions
          </a>
          <h1>
            <DomainNames names={sub.domains} /> <Badge status="completed" />
          </h1>
          <div className="muted">
            <span data-testid="order-number">{sub.orderNumber}</span>{' '}
            <CopyButton text={sub.orderNumber} label="Copy number" /> · {sub.productName}
          </div>
        </div>
      </header>
      <Subscription sub={sub} page />
      <section className="card" aria-labelledby="acme-certs">
        <h2 id="acme-certs">Certificates issued through it</h2>
        {certificates.length === 0 ? (
          <p className="muted" data-testid="acme-no-certificates">
            None yet. A certificate appears here once an ACME client bound to this subscription obtains one.
          </p>
        ) : (
          <table className="table" data-testid="acme-certificates">
            <thead>
              <tr>
                <th scope="col">Serial</th>
                <th scope="col">Names</th>
                <th scope="col">Expires (UTC)</th>
                <th scope="col">
                  <span className="sr-only">Download</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {certificates.map((c) => (
                <tr key={c.serial} data-serial={c.serial}>
                  <td className="mono break">{c.serial}</td>
                  <td>
                    <DomainNames names={c.names} />
                  </td>
                  <td className="nowrap">
                    {c.notAfter} {c.revoked ? <Badge status="cancelled" label="revoked" /> : null}
                  </td>
                  <td>
                    <button
                      type="button"
                      className="btn small"
                      aria-label={`Download certificate ${c.serial}`}
                      onClick={() =>
                        download(`${c.names[0] ?? c.serial}.fullchain.pem`, c.chainPem, 'application/x-pem-file')
                      }
                    >
                      Download
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <OrderEventsCard orderId={sub.orderId} />
    </div>
  )
}
