import { useEffect, useState } from 'react'
import type { DcvSettingsView, SettingsProblems } from '../../src-preload/contract'
import { download } from '../lib/format'
import { useCan, useStore } from '../store'
import { Can, ErrorBox } from '../ui'
import { BackupCard } from './settings-backup'

function Resellers(): React.JSX.Element {
  const resellers = useStore((s) => s.resellers)
  const add = useStore((s) => s.addReseller)
  const [form, setForm] = useState({ name: '', email: '', company: '', discount: '0' })
  const [error, setError] = useState<string | null>(null)
  return (
    <section className="card">
      <h2>Reseller accounts</h2>
      <table className="table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Group</th>
            <th className="num">Discount</th>
            <th>API access</th>
          </tr>
        </thead>
        <tbody>
          {resellers.map((r) => (
            <tr key={r.id}>
              <td className="strong">{r.name}</td>
              <td>{r.email}</td>
              <td>{r.groupName ?? 'none'}</td>
              <td className="num">{r.discountRate}%</td>
              <td>{r.apiAccess ? 'on' : 'off'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Can m="createReseller">
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault()
            void add({
              name: form.name,
              email: form.email,
              company: form.company,
              discountRate: Number(form.discount)
            }).then((err) => {
              setError(err)
              if (!err) setForm({ name: '', email: '', company: '', discount: '0' })
            })
          }}
        >
          <div className="row">
            <label className="grow">
              Reseller name
              <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
            </label>
            <label className="grow">
              Reseller email
              <input value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
            </label>
            <label className="grow">
              Reseller company
              <input value={form.company} onChange={(e) => setForm({ ...form, company: e.target.value })} />
            </label>
            <label className="narrow-field">
              Reseller discount (%)
              <input
                inputMode="decimal"
                value={form.discount}
                onChange={(e) => setForm({ ...form, discount: e.target.value })}
              />
            </label>
            <button className="btn" type="submit">
              Add reseller
            </button>
          </div>
          <ErrorBox text={error} />
        </form>
      </Can>
    </section>
  )
}

export function Settings(): React.JSX.Element {
  const settings = useStore((s) => s.settings)
  const save = useStore((s) => s.saveSettings)
  // Kept here, not in the store: coming back to Settings shows the saved values, without old messages.
  const [problems, setProblems] = useState<SettingsProblems>({})
  const caRoot = useStore((s) => s.caRoot)
  const maySave = useCan('updateSettings')
  const [form, setForm] = useState<DcvSettingsView>({
    dcvResolver: '',
    dcvHttpPort: '',
    dcvHttpsPort: '',
    smtpUrl: '',
    smtpFrom: '',
    dcvAllowPrivateAddresses: false
  })
  useEffect(() => {
    if (settings)
      setForm({
        dcvResolver: settings.dcvResolver,
        dcvHttpPort: settings.dcvHttpPort,
        dcvHttpsPort: settings.dcvHttpsPort,
        smtpUrl: settings.smtpUrl,
        smtpFrom: settings.smtpFrom,
        dcvAllowPrivateAddresses: settings.dcvAllowPrivateAddresses
      })
  }, [settings])
  if (!settings) return <p className="muted">Loading…</p>
  // The core's reason sits under the field it is about, and the field is marked invalid.
  const field = (
    key: Exclude<keyof DcvSettingsView, 'dcvAllowPrivateAddresses'>,
    label: string,
    placeholder: string
  ): React.JSX.Element => (
    <label>
      {label}
      <input
        aria-label={label}
        value={form[key]}
        placeholder={placeholder}
        aria-invalid={problems[key] ? true : undefined}
        aria-describedby={problems[key] ? `setting-problem-${key}` : undefined}
        onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      />
      {problems[key] ? (
        <span className="field-error" role="alert" id={`setting-problem-${key}`} data-testid={`problem-${key}`}>
          {problems[key]}
        </span>
      ) : null}
    </label>
  )
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
        className="card form settings-form"
        onSubmit={(e) => {
          e.preventDefault()
          // On an error the form keeps what was typed; only the store's copy stays as saved.
          void save(form).then(setProblems)
        }}
      >
        <h2>Domain validation</h2>
        {/* Settings reach outside (mail relay, private addresses): only an owner changes them. */}
        <fieldset className="bare" disabled={!maySave}>
          {field('dcvResolver', 'DNS resolver', 'system resolver (or 127.0.0.1:5353)')}
          <div className="row">
            {field('dcvHttpPort', 'HTTP validation port', '80')}
            {field('dcvHttpsPort', 'HTTPS validation port', '443')}
          </div>
          <label className="check">
            <input
              type="checkbox"
              checked={form.dcvAllowPrivateAddresses}
              onChange={(e) => setForm({ ...form, dcvAllowPrivateAddresses: e.target.checked })}
            />
            Lab use: let validation reach loopback and private addresses
          </label>
          <p className="muted small">
            When off, HTTP and HTTPS checks and ACME http-01 checks refuse names that resolve to loopback, private,
            link-local or other special-purpose addresses, as public CAs do. Turn it on only when the sites being
            validated are test servers on this machine or its network.
          </p>
          <div className="row">
            {field('smtpUrl', 'SMTP relay', 'the outbox (or smtp://127.0.0.1:2525)')}
            {field('smtpFrom', 'Sender address', 'certdesk@localhost')}
          </div>
          <p className="muted small">
            No password in the SMTP URL: settings live in the database, secrets only in the OS keychain.
          </p>
        </fieldset>
        <Can m="updateSettings">
          <div className="actions">
            <button className="btn primary" type="submit">
              Save
            </button>
          </div>
        </Can>
      </form>
      <Resellers />
      <section className="card">
        <h2>Local CA</h2>
        <p>
          Certificates are issued by CertDesk&apos;s own CA. Add its root to a trust store to have browsers and tools
          accept them.
        </p>
        <button
          className="btn"
          onClick={() =>
            void caRoot().then((pem) => pem && download('certdesk-root-ca.pem', pem, 'application/x-pem-file'))
          }
        >
          Export root certificate
        </button>
      </section>
      <Can m="startBackup">
        <BackupCard />
      </Can>
    </div>
  )
}
