/**
 * How the order renews without the customer: the renewal window and where it came from (the
 * CA's RFC 9773 renewal information, or 14 days before the certificate ends), each name's
 * `_acme-challenge` CNAME into the zone delegated to CertDesk and whether it is in place, the
 * dns-persist-01 record to publish once, checked read-only, with its persistUntil warning, and
 * whether the order renews with nobody at all: when its method needs the customer at every
 * renewal (http-01, a dns-01 TXT record), the methods that do not, and the switch to them.
 */
import { useEffect } from 'react'
import type { OrderView } from '../../src-preload/contract'
import { useStore } from '../store'
import { Badge, CopyButton, ErrorBox } from '../ui'

const METHOD_LABELS: Record<string, string> = {
  'http-01': 'http-01 (a file on the web server)',
  'dns-01': 'dns-01 (a TXT record)',
  'delegated-dns': 'delegated DNS (a CNAME to CertDesk)',
  'dns-persist-01': 'dns-persist-01 (a standing TXT record)'
}

export function OrderRenewal({ order }: { order: OrderView }): React.JSX.Element | null {
  const renewal = useStore((s) => (s.renewalOrderId === order.id ? s.renewal : null))
  const error = useStore((s) => (s.renewalOrderId === order.id ? s.renewalError : null))
  const load = useStore((s) => s.loadRenewal)
  const switchRenewal = useStore((s) => s.switchRenewal)
  useEffect(() => {
    void load(order.id)
  }, [order.id, order.status, load])
  if (error) return <ErrorBox text={error} />
  if (!renewal || (!renewal.window && !renewal.delegation && renewal.dns_persist.length === 0 && !renewal.unattended))
    return null
  const w = renewal.window
  const u = renewal.unattended
  return (
    <section className="card" aria-label="Renewal">
      <h2>Renewal</h2>
      {u ? (
        <div data-testid="renewal-unattended">
          <p>
            <Badge
              status={u.unattended ? 'valid' : 'pending'}
              label={u.unattended ? 'unattended' : 'needs the customer'}
            />{' '}
            Renews over <strong>{METHOD_LABELS[u.method]}</strong>: {u.detail}
          </p>
          {u.alternatives.length > 0 ? (
            <>
              <p className="muted small">These renew with nobody once the customer sets the record once:</p>
              <table className="table" data-testid="renewal-alternatives">
                <tbody>
                  {u.alternatives.flatMap((a) =>
                    a.records.map((r) => (
                      <tr key={`${a.method} ${r.name}`}>
                        <td>{METHOD_LABELS[a.method]}</td>
                        <td>
                          <code>{r.name}</code> {r.type} <code>{r.type === 'TXT' ? `"${r.value}"` : r.value}</code>{' '}
                          <CopyButton text={r.value} />
                        </td>
                      </tr>
                    ))
                  )}
                </tbody>
              </table>
              <button className="btn primary" onClick={() => void switchRenewal(order.id, 'dns')}>
                Renew over DNS instead
              </button>
            </>
          ) : null}
        </div>
      ) : null}
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
