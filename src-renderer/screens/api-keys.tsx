import { useEffect, useState } from 'react'
import { useStore } from '../store'
import { Can, CopyButton } from '../ui'

export function ApiKeys(): React.JSX.Element {
  const keys = useStore((s) => s.apiKeys)
  const shown = useStore((s) => s.shownKey)
  const settings = useStore((s) => s.settings)
  const resellerId = useStore((s) => s.resellerId)
  const load = useStore((s) => s.loadKeys)
  const create = useStore((s) => s.createKey)
  const copy = useStore((s) => s.copyKey)
  const revoke = useStore((s) => s.revokeKey)
  const hide = useStore((s) => s.hideKey)
  const [label, setLabel] = useState('')
  useEffect(() => {
    if (resellerId !== null) void load()
  }, [resellerId, load])
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>API &amp; integrations</h1>
      </header>
      <section className="card">
        <h2>Reseller API v{settings?.apiVersion}</h2>
        <p>
          Scripts on this machine reach the reseller API at <code>{settings?.listenerUrl}</code> with a key in{' '}
          <code>X-API-Key</code> or <code>Authorization: Bearer</code>.{' '}
          {settings ? <CopyButton text={settings.listenerUrl} label="Copy URL" /> : null}
        </p>
      </section>
      {shown ? (
        <section className="card highlight" role="status">
          <h2>Your new API key</h2>
          <p>
            This is the only time the key is shown in full. CertDesk keeps it in the OS keychain; the database holds
            only its hash.
          </p>
          <div className="key-row">
            <code data-testid="new-api-key">{shown.key}</code>
            <CopyButton text={shown.key} />
            <button className="btn small" onClick={hide}>
              Done
            </button>
          </div>
        </section>
      ) : null}
      <Can m="createApiKey">
        <form
          className="card form inline-form"
          onSubmit={(e) => {
            e.preventDefault()
            void create(label).then(() => setLabel(''))
          }}
        >
          <div className="row">
            <label className="grow">
              Key label
              <input value={label} onChange={(e) => setLabel(e.target.value)} placeholder="deploy script" />
            </label>
            <button className="btn primary" type="submit">
              Create API key
            </button>
          </div>
        </form>
      </Can>
      <table className="table">
        <thead>
          <tr>
            <th>Key</th>
            <th>Label</th>
            <th>Created</th>
            <th>Status</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <td className="mono">{k.prefix}…</td>
              <td>{k.label || <span className="muted">—</span>}</td>
              <td className="muted">{k.createdAt}</td>
              <td>
                {k.revokedAt ? (
                  <span className="badge badge-cancelled">revoked {k.revokedAt.slice(0, 10)}</span>
                ) : (
                  <span className="badge badge-completed">active</span>
                )}
              </td>
              <td className="actions">
                {!k.revokedAt ? (
                  <>
                    <Can m="revealApiKey">
                      <button className="btn small" onClick={() => void copy(k.id)}>
                        Copy
                      </button>
                    </Can>
                    <Can m="revokeApiKey">
                      <button className="btn small danger" onClick={() => void revoke(k.id)}>
                        Revoke
                      </button>
                    </Can>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
          {keys.length === 0 ? (
            <tr>
              <td colSpan={5} className="muted">
                No API keys yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  )
}
