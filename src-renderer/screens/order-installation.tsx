/**
 * An order's "Installed where" panel: what each server presents compared with the certificate
 * issued last, the endpoints beyond the order's names, and a check on demand.
 */
import { useEffect, useState } from 'react'
import type { StartTls } from '../../src-preload/contract'
import { useStore } from '../store'
import { Can } from '../ui'

const STARTTLS: (StartTls | '')[] = ['', 'smtp', 'imap', 'pop3']

export function OrderInstallation({ orderId }: { orderId: number }): React.JSX.Element {
  const report = useStore((s) => s.installations[orderId])
  const checking = useStore((s) => s.checking.includes(orderId))
  const load = useStore((s) => s.loadInstallation)
  const check = useStore((s) => s.checkInstallation)
  const add = useStore((s) => s.addEndpoint)
  const remove = useStore((s) => s.removeEndpoint)
  const [host, setHost] = useState('')
  const [port, setPort] = useState('443')
  const [address, setAddress] = useState('')
  const [starttls, setStarttls] = useState<StartTls | ''>('')
  useEffect(() => {
    void load(orderId)
  }, [orderId, load])
  return (
    <section className="card" aria-labelledby={`installation-${orderId}`}>
      <div className="row spread">
        <h2 id={`installation-${orderId}`}>Installed where</h2>
        <Can m="checkInstallation">
          <button className="btn" disabled={checking} onClick={() => void check(orderId)}>
            {checking ? 'Checking…' : 'Check now'}
          </button>
        </Can>
      </div>
      {report ? (
        <p>
          <span className={`badge badge-install-${report.verdict ?? 'unchecked'}`} data-testid="installation-badge">
            {report.label}
          </span>{' '}
          {report.checkedAt ? <span className="muted small">checked {report.checkedAt} UTC</span> : null}
        </p>
      ) : null}
      {report && report.results.length > 0 ? (
        <table className="table" aria-label="What each server presents">
          <thead>
            <tr>
              <th>Endpoint</th>
              <th>Verdict</th>
              <th>Details</th>
            </tr>
          </thead>
          <tbody>
            {report.results.map((r) => (
              <tr key={`${r.host}:${r.port}`}>
                <td>
                  <code>
                    {r.host}:{r.port}
                  </code>
                </td>
                <td>
                  <span className={`badge badge-install-${r.verdict}`}>{r.label}</span>
                </td>
                <td className="small">{r.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">
          Each name of the certificate is checked on port 443. Add endpoints for other ports, mail servers or one server
          of several.
        </p>
      )}
      <h3>Endpoints</h3>
      {report && report.endpoints.length > 0 ? (
        <ul className="plain-list">
          {report.endpoints.map((e) => (
            <li key={e.id}>
              <code>
                {e.host}:{e.port}
              </code>
              {e.address ? <span className="muted"> at {e.address}</span> : null}
              {e.starttls ? <span className="muted"> ({e.starttls.toUpperCase()} STARTTLS)</span> : null}{' '}
              <Can m="removeInstallationEndpoint">
                <button
                  className="btn small"
                  aria-label={`Remove endpoint ${e.host}:${e.port}`}
                  onClick={() => void remove(orderId, e.id)}
                >
                  Remove
                </button>
              </Can>
            </li>
          ))}
        </ul>
      ) : null}
      <Can m="addInstallationEndpoint">
        <form
          className="form inline-form"
          onSubmit={(e) => {
            e.preventDefault()
            void add(orderId, {
              host,
              port: Number(port),
              address: address.trim() || null,
              starttls: starttls || null
            }).then((ok) => {
              if (ok) {
                setHost('')
                setAddress('')
              }
            })
          }}
        >
          <div className="row">
            <label className="grow">
              Host name
              <input value={host} onChange={(e) => setHost(e.target.value)} placeholder="mail.example.com" required />
            </label>
            <label>
              Port
              <input value={port} onChange={(e) => setPort(e.target.value)} inputMode="numeric" size={6} />
            </label>
            <label>
              Address (optional)
              <input value={address} onChange={(e) => setAddress(e.target.value)} placeholder="203.0.113.8" />
            </label>
            <label>
              STARTTLS
              <select value={starttls} onChange={(e) => setStarttls(e.target.value as StartTls | '')}>
                {STARTTLS.map((p) => (
                  <option key={p} value={p}>
                    {p ? p.toUpperCase() : 'none (TLS at once)'}
                  </option>
                ))}
              </select>
            </label>
            <button className="btn" type="submit">
              Add endpoint
            </button>
          </div>
        </form>
      </Can>
    </section>
  )
}
