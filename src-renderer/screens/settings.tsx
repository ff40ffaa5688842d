import { useEffect, useState } from 'react'
import { useStore } from '../store'

export function Acme(): React.JSX.Element {
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>ACME subscriptions</h1>
      </header>
      <section className="card">
        <p>
          ACME subscriptions (an ACME client or an auto-install tool obtaining and renewing certificates by themselves) arrive with CertDesk&apos;s ACME
          support. Until then, ordering a subscription product answers with the API&apos;s message that subscriptions are not available yet.
        </p>
      </section>
    </div>
  )
}

export function Settings(): React.JSX.Element {
  const settings = useStore((s) => s.settings)
  const save = useStore((s) => s.saveSettings)
  const [resolver, setResolver] = useState('')
  const [port, setPort] = useState('80')
  const [smtp, setSmtp] = useState('')
  useEffect(() => {
    if (!settings) return
    setResolver(settings.dcvResolver)
    setPort(String(settings.dcvHttpPort))
    setSmtp(settings.smtpUrl)
  }, [settings])
  if (!settings) return <p className="muted">Loading…</p>
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>Settings</h1>
      </header>
      <section className="card">
        <h2>This installation</h2>
        <dl className="facts">
          <dt>Data folder</dt>
          <dd className="mono">{settings.dataDir}</dd>
          <dt>Reseller API</dt>
          <dd className="mono">{settings.listenerUrl}</dd>
          <dt>Running as</dt>
          <dd>{settings.transport === 'electron' ? 'desktop window' : 'browser mode'}</dd>
        </dl>
      </section>
      <form
        className="card form"
        onSubmit={(e) => {
          e.preventDefault()
          void save({ dcvResolver: resolver, dcvHttpPort: Number(port), smtpUrl: smtp })
        }}
      >
        <h2>Domain validation</h2>
        <label>
          DNS resolver (empty: the system resolver)
          <input aria-label="DNS resolver" value={resolver} onChange={(e) => setResolver(e.target.value)} placeholder="127.0.0.1:5353" />
        </label>
        <label>
          HTTP validation port
          <input aria-label="HTTP validation port" value={port} onChange={(e) => setPort(e.target.value)} inputMode="numeric" />
        </label>
        <label>
          SMTP relay for validation email (no password in the URL)
          <input aria-label="SMTP relay" value={smtp} onChange={(e) => setSmtp(e.target.value)} placeholder="smtp://127.0.0.1:2525" />
        </label>
        <div className="actions">
          <button className="btn primary" type="submit">
            Save
          </button>
        </div>
      </form>
      <section className="card">
        <h2>Local CA</h2>
        <p className="muted">The root of the built-in certificate authority can be exported here once certificate issuance is part of this build.</p>
      </section>
    </div>
  )
}
