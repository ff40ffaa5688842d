/**
 * The team's admins, for owners: add one with a first password, change a role, disable or
 * enable. A change of role or a disabled account ends that admin's sessions at once.
 */
import { useEffect, useState } from 'react'
import type { AdminRole } from '../../src-preload/contract'
import { href } from '../routes'
import { useStore } from '../store'
import { ErrorBox } from '../ui'

const ROLES: { role: AdminRole; what: string }[] = [
  { role: 'viewer', what: 'reads everything, changes nothing' },
  { role: 'operator', what: 'also works on orders, certificates and deploys; no money, no keys' },
  { role: 'owner', what: 'everything: money, keys and secrets, backups, settings, admins' }
]

function AddAdmin(): React.JSX.Element {
  const add = useStore((s) => s.addAdmin)
  const [form, setForm] = useState<{ name: string; role: AdminRole; password: string }>({
    name: '',
    role: 'viewer',
    password: ''
  })
  const [error, setError] = useState<string | null>(null)
  return (
    <form
      className="form card"
      aria-label="Add an admin"
      onSubmit={(e) => {
        e.preventDefault()
        void add(form).then((err) => {
          setError(err)
          if (!err) setForm({ name: '', role: 'viewer', password: '' })
        })
      }}
    >
      <h2>Add an admin</h2>
      <div className="row">
        <label className="grow">
          Admin name
          <input value={form.name} autoComplete="off" onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label>
          Role
          <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as AdminRole })}>
            {ROLES.map((r) => (
              <option key={r.role} value={r.role}>
                {r.role}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          First password
          <input
            type="password"
            autoComplete="new-password"
            value={form.password}
            onChange={(e) => setForm({ ...form, password: e.target.value })}
          />
        </label>
        <button className="btn" type="submit">
          Add admin
        </button>
      </div>
      <p className="muted small">
        At least 15 characters. Give it to the admin in person; they change it under My account.
      </p>
      <ErrorBox text={error} />
    </form>
  )
}

export function Admins(): React.JSX.Element {
  const admins = useStore((s) => s.admins)
  const load = useStore((s) => s.loadAdmins)
  const setRole = useStore((s) => s.setAdminRole)
  const setEnabled = useStore((s) => s.setAdminEnabled)
  const me = useStore((s) => s.account?.actor)
  useEffect(() => {
    void load()
  }, [load])
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Admins</h1>
        <p className="muted">
          Who signs in to this book and what each may do. Every action they take is in the{' '}
          <a href={href({ name: 'audit' })}>audit log</a>.
        </p>
      </header>
      <section className="card">
        <table className="table" data-testid="admins-table">
          <thead>
            <tr>
              <th>Admin</th>
              <th>Role</th>
              <th>Two-step sign-in</th>
              <th>Last sign-in (UTC)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {admins.map((a) => (
              <tr key={a.id} data-admin={a.name}>
                <td className="strong">
                  {a.name}
                  {a.name === me ? <span className="muted small"> (you)</span> : null}
                  {a.enabled ? null : <span className="badge badge-cancelled">disabled</span>}
                </td>
                <td>
                  <select
                    aria-label={`Role of ${a.name}`}
                    value={a.role}
                    onChange={(e) => void setRole(a.name, e.target.value as AdminRole)}
                  >
                    {ROLES.map((r) => (
                      <option key={r.role} value={r.role}>
                        {r.role}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{a.totpEnabled ? 'on' : 'off'}</td>
                <td className="muted">{a.lastSignInAt ?? 'never'}</td>
                <td className="num">
                  <button
                    className={a.enabled ? 'btn small danger' : 'btn small'}
                    onClick={() => void setEnabled(a.name, !a.enabled)}
                  >
                    {a.enabled ? 'Disable' : 'Enable'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <ul className="muted small">
          {ROLES.map((r) => (
            <li key={r.role}>
              <span className="strong">{r.role}</span>: {r.what}
            </li>
          ))}
        </ul>
      </section>
      <AddAdmin />
    </div>
  )
}
