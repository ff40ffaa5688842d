/**
 * How the order renews without the customer: the renewal window and where it came from (the
 * CA's RFC 9773 renewal information, or 14 days before the certificate ends), each name's
 * `_acme-challenge` CNAME into the zone delegated to CertDesk and whether it is in place, and
 * the dns-persist-01 record to publish once, checked read-only, with its persistUntil warning.
 */
import { useEffect } from 'react'
import type { OrderView } from '../../src-preload/contract'
import { useStore } from '../store'
import { Badge, CopyButton, ErrorBox } from '../ui'

export function OrderRenewal({ order }: { order: OrderView }): React.JSX.Element | null {
  const renewal = useStore((s) => (s.renewalOrderId === order.id ? s.renewal : null))
  const error = useStore((s) => (s.renewalOrderId === order.id ? s.renewalError : null))
  const load = useStore((s) => s.loadRenewal)
  useEffect(() => {
    void load(order.id)
  }, [order.id, order.status, load])
  if (error) return <ErrorBox text={error} />
  if (!renewal || (!renewal.window && !renewal.delegation && renewal.dns_persist.length === 0)) return null
  const w = renewal.window
  return (
    <section className="card" aria-label="Renewal">
      <h2>Renewal</h2>
      {w ? (
        <dl className="facts" data-testid="renewal-window">
          <dt>Window</dt>
          <dd>
            {w.window_start} – {w.window_end} UTC
          </dd>
          <dt>Renews at</dt>
          <dd>{w.renew_at} UTC</dd>
          <dt>Source</dt>
          <dd>
            <Badge
              status={w.source === 'ari' ? 'valid' : 'pending'}
              label={w.source === 'ari' ? 'ARI' : '14-day rule'}
            />{' '}
            {w.source_detail}
          </dd>
          {w.last_error ? (
            <>
              <dt>Note</dt>
              <dd>{w.last_error}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {renewal.delegation ? (
        <>
          <h3>DNS delegation to {renewal.delegation.zone}</h3>
          <p className="muted small">
            Set once at the domain&apos;s DNS host; CertDesk answers every dns-01 check itself.
          </p>
          <table className="table" data-testid="renewal-delegation">
            <tbody>
              {renewal.delegation.domains.map((d) => (
                <tr key={d.domain}>
                  <td>
                    <code>{d.cname.name}</code> CNAME <code>{d.cname.value}</code> <CopyButton text={d.cname.value} />
                  </td>
                  <td>
                    <Badge status={d.in_place ? 'valid' : 'pending'} label={d.in_place ? 'in place' : 'missing'} />{' '}
                    <span className="muted small">{d.in_place ? '' : d.detail}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {renewal.dns_persist.length > 0 ? (
        <>
          <h3>dns-persist-01 records</h3>
          <table className="table" data-testid="renewal-persist">
            <tbody>
              {renewal.dns_persist.map((r) => (
                <tr key={`${r.record_name} ${r.account_url}`}>
                  <td>
                    <code>{r.record_name}</code> TXT <code>&quot;{r.record_value}&quot;</code>{' '}
                    <CopyButton text={r.record_value} />
                    {r.warning ? <div className="warn small">{r.warning}</div> : null}
                  </td>
                  <td>
                    <Badge status={r.in_place ? 'valid' : 'pending'} label={r.in_place ? 'in place' : 'missing'} />{' '}
                    <span className="muted small">{r.in_place ? '' : r.detail}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <button className="btn" onClick={() => void load(order.id)}>
        Check again
      </button>
    </section>
  )
}
