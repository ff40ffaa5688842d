import { useEffect, useState } from 'react'
import type { DcvSettingsView, ResellerView, SettingsProblems } from '../../src-preload/contract'
import { download } from '../lib/format'
import { useCan, useStore } from '../store'
import { Can, ErrorBox } from '../ui'
import { BackupCard } from './settings-backup'

interface ResellerForm {
  name: string
  email: string
  company: string
  group: string
  discount: string
}

/** One reseller's row as a form: name, email, company, group and discount, saved together or not at all. */
function ResellerEditRow({ reseller, onDone }: { reseller: ResellerView; onDone: () => void }): React.JSX.Element {
  const update = useStore((s) => s.updateReseller)
  const groups = useStore((s) => s.groups)
  const [form, setForm] = useState<ResellerForm>({
    name: reseller.name,
    email: reseller.email,
    company: reseller.company,
    group: reseller.groupId === null ? '' : String(reseller.groupId),
    discount: String(reseller.discountRate)
  })
  const [error, setError] = useState<string | null>(null)
  const field = (key: keyof ResellerForm, label: string): React.JSX.Element => (
    <label>
      {label}
      <input value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  )
  return (
    <tr>
      <td colSpan={5}>
        <form
          className="form"
          aria-label={`Edit reseller ${reseller.name}`}
          onSubmit={(e) => {
            e.preventDefault()
            const discount = Number(form.discount.trim())
            if (form.discount.trim() === '' || !Number.isFinite(discount))
              return setError('Enter the discount as a number from 0 to 100, such as 10 or 12.5')
            void update(reseller.id, {
              name: form.name,
              email: form.email,
              company: form.company,
              groupId: form.group ? Number(form.group) : null,
              discountRate: discount
            }).then((err) => (err ? setError(err) : onDone()))
          }}
        >
          <div className="row">
            {field('name', 'Name')}
            {field('email', 'Email')}
            {field('company', 'Company')}
            <label>
              Group
              <select value={form.group} onChange={(e) => setForm({ ...form, group: e.target.value })}>
                <option value="">none (no catalogue)</option>
                {groups.map((g) => (
                  <option key={g.id} value={g.id}>
                    {g.name}
                  </option>
                ))}
              </select>
            </label>
            <label className="narrow-field">
              Discount (%)
              <input
                inputMode="decimal"
                value={form.discount}
                onChange={(e) => setForm({ ...form, discount: e.target.value })}
              />
            </label>
          </div>
          <p className="muted small">
            A new discount or group prices the orders placed from now on; placed orders keep their price.
          </p>
          <ErrorBox text={error} />
          <div className="actions">
            <button className="btn primary" type="submit">
              Update reseller
            </button>
            <button className="btn" type="button" onClick={onDone}>
              Cancel
            </button>
          </div>
        </form>
      </td>
    </tr>
  )
}

function Resellers(): React.JSX.Element {
  const resellers = useStore((s) => s.resellers)
  const add = useStore((s) => s.addReseller)
  const loadGroups = useStore((s) => s.loadGroups)
  const [form, setForm] = useState({ name: '', email: '', company: '', discount: '0' })
  const [error, setError] = useState<string | null>(null)
  const [editing, setEditing] = useState<number | null>(null)
  useEffect(() => {
    void loadGroups()
  }, [loadGroups])
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
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {resellers.map((r) =>
            editing === r.id ? (
              <ResellerEditRow key={r.id} reseller={r} onDone={() => setEditing(null)} />
            ) : (
              <tr key={r.id}>
                <td className="strong">
                  {r.name}
                  {r.company && r.company !== r.name ? <div className="muted small">{r.company}</div> : null}
                </td>
                <td>{r.email}</td>
                <td>{r.groupName ?? 'none'}</td>
                <td className="num">{r.discountRate}%</td>
                <td className="actions">
                  <Can m="updateReseller">
                    <button className="btn small" aria-label={`Edit ${r.name}`} onClick={() => setEditing(r.id)}>
                      Edit
                    </button>
                  </Can>
                </td>
              </tr>
            )
          )}
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

/** The seller block every invoice carries: the admin's business name and postal address. */
function InvoiceSeller(): React.JSX.Element {
  const settings = useStore((s) => s.settings)
  const save = useStore((s) => s.saveSettings)
  const [name, setName] = useState(settings?.sellerName ?? '')
  const [address, setAddress] = useState(settings?.sellerAddress ?? '')
  const [problems, setProblems] = useState<SettingsProblems>({})
  const maySave = useCan('updateSettings')
  return (
    <form
      className="card form settings-form"
      aria-labelledby="invoice-seller"
      onSubmit={(e) => {
        e.preventDefault()
        void save({ sellerName: name, sellerAddress: address }).then(setProblems)
      }}
    >
      <h2 id="invoice-seller">Invoices</h2>
      <p className="muted small">Your business as it bills its resellers: printed at the head of every invoice.</p>
      <fieldset className="bare" disabled={!maySave}>
        <label>
          Business name
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="Example Hosting Ltd"
            aria-invalid={problems.sellerName ? true : undefined}
          />
          {problems.sellerName ? (
            <span className="field-error" role="alert">
              {problems.sellerName}
            </span>
          ) : null}
        </label>
        <label>
          Business address
          <textarea
            rows={4}
            value={address}
            onChange={(e) => setAddress(e.target.value)}
            placeholder={'1 Example Street\n12345 Example City\nCountry'}
            aria-invalid={problems.sellerAddress ? true : undefined}
          />
          {problems.sellerAddress ? (
            <span className="field-error" role="alert">
              {problems.sellerAddress}
            </span>
          ) : null}
        </label>
      </fieldset>
      <Can m="updateSettings">
        <div className="actions">
          <button className="btn primary" type="submit">
            Update invoice details
          </button>
        </div>
      </Can>
    </form>
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
      <InvoiceSeller key={settings.sellerName + settings.sellerAddress} />
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
