/**
 * Alerts: the rules that raise them, the channels they go to (each with a test button), the
 * alerts raised and the last deliveries. The admin's screen, the same whichever reseller is picked.
 */
import { useEffect, useState } from 'react'
import type { AlertChannelInput, AlertRuleView } from '../../src-preload/contract'
import { useCan, useStore } from '../store'
import { Can, Badge, CopyButton } from '../ui'

const KIND_LABELS: Record<string, string> = {
  smtp: 'Email (SMTP)',
  slack: 'Slack',
  teams: 'Microsoft Teams',
  webhook: 'Signed JSON webhook'
}

/** When each rule without a setting fires. */
const WHEN: Record<string, string> = {
  expiring: 'one third of the lifetime left, checked daily',
  renewal_failed: 'at the failure',
  deploy_failed: 'after the last attempt',
  installation_problem: 'when a check finds it',
  renewal_needs_customer: 'a week before the renewal, once per certificate'
}

function RuleRow({ rule }: { rule: AlertRuleView }): React.JSX.Element {
  const save = useStore((s) => s.setAlertRule)
  const canSave = useCan('updateAlertRule')
  const [hours, setHours] = useState(String(rule.thresholdHours ?? ''))
  return (
    <tr>
      <td>{rule.label}</td>
      <td>
        <input
          type="checkbox"
          aria-label={`Rule on: ${rule.label}`}
          checked={rule.enabled}
          disabled={!canSave}
          onChange={(e) => void save(rule.rule, { enabled: e.target.checked })}
        />
      </td>
      <td>
        {rule.thresholdHours !== null ? (
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault()
              void save(rule.rule, { thresholdHours: Number(hours) })
            }}
          >
            <input
              aria-label="Validation wait in hours"
              inputMode="numeric"
              size={5}
              value={hours}
              disabled={!canSave}
              onChange={(e) => setHours(e.target.value)}
            />{' '}
            hours{' '}
            {canSave ? (
              <button className="btn small" type="submit">
                Save
              </button>
            ) : null}
          </form>
        ) : (
          <span className="muted">{WHEN[rule.rule]}</span>
        )}
      </td>
    </tr>
  )
}

const EMPTY = {
  kind: 'smtp',
  name: '',
  host: '',
  port: '',
  security: 'starttls',
  username: '',
  password: '',
  from: '',
  to: '',
  digest: true,
  url: ''
}

function AddChannel(): React.JSX.Element {
  const add = useStore((s) => s.addAlertChannel)
  const [f, setF] = useState(EMPTY)
  const put = (k: keyof typeof EMPTY) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) =>
    setF({ ...f, [k]: e.target.type === 'checkbox' ? (e.target as HTMLInputElement).checked : e.target.value })
  const submit = async (): Promise<void> => {
    const input: AlertChannelInput =
      f.kind === 'smtp'
        ? {
            kind: 'smtp',
            name: f.name,
            host: f.host,
            port: f.port.trim() ? Number(f.port) : undefined,
            security: f.security as 'starttls' | 'tls' | 'none',
            username: f.username || undefined,
            password: f.password || undefined,
            from: f.from,
            to: f.to
              .split(',')
              .map((a) => a.trim())
              .filter(Boolean),
            digest: f.digest
          }
        : { kind: f.kind as 'slack' | 'teams' | 'webhook', name: f.name, url: f.url }
    if (await add(input)) setF({ ...EMPTY, kind: f.kind })
  }
  return (
    <form
      className="card form"
      aria-label="Add a channel"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <h2>Add a channel</h2>
      <label>
        Kind
        <select value={f.kind} onChange={put('kind')}>
          {Object.entries(KIND_LABELS).map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Channel name
        <input value={f.name} onChange={put('name')} placeholder="Ops mail" autoComplete="off" />
      </label>
      {f.kind === 'smtp' ? (
        <>
          <label>
            SMTP host
            <input value={f.host} onChange={put('host')} placeholder="smtp.reseller.example" autoComplete="off" />
          </label>
          <label>
            Port (empty: 587, or 465 with TLS)
            <input value={f.port} onChange={put('port')} inputMode="numeric" autoComplete="off" />
          </label>
          <label>
            Security
            <select value={f.security} onChange={put('security')}>
              <option value="starttls">STARTTLS (required)</option>
              <option value="tls">Implicit TLS (port 465)</option>
              <option value="none">None (a relay on this machine only)</option>
            </select>
          </label>
          <label>
            User name
            <input value={f.username} onChange={put('username')} autoComplete="off" />
          </label>
          <label>
            Password (kept in the OS keychain)
            <input type="password" value={f.password} onChange={put('password')} autoComplete="new-password" />
          </label>
          <label>
            From
            <input value={f.from} onChange={put('from')} placeholder="CertDesk <certdesk@reseller.example>" />
          </label>
          <label>
            To (comma-separated)
            <input value={f.to} onChange={put('to')} placeholder="ops@reseller.example" />
          </label>
          <label className="check">
            <input type="checkbox" checked={f.digest} onChange={put('digest')} /> Weekly digest to these addresses
          </label>
        </>
      ) : (
        <label>
          {f.kind === 'webhook' ? 'Webhook URL' : `${KIND_LABELS[f.kind]} webhook URL (kept in the OS keychain)`}
          <input value={f.url} onChange={put('url')} placeholder="https://" autoComplete="off" />
        </label>
      )}
      <div className="actions">
        <button className="btn" type="submit">
          Add channel
        </button>
      </div>
    </form>
  )
}

export function Alerts(): React.JSX.Element {
  const load = useStore((s) => s.loadAlerts)
  const rules = useStore((s) => s.alertRules)
  const channels = useStore((s) => s.alertChannels)
  const deliveries = useStore((s) => s.alertDeliveries)
  const alerts = useStore((s) => s.raisedAlerts)
  const secret = useStore((s) => s.alertSecret)
  const dismiss = useStore((s) => s.dismissAlertSecret)
  const test = useStore((s) => s.testAlertChannel)
  const remove = useStore((s) => s.removeAlertChannel)
  useEffect(() => {
    void load()
  }, [load])
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Alerts</h1>
      </header>
      <section className="card">
        <h2>Rules</h2>
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Raise an alert when</th>
              <th scope="col">On</th>
              <th scope="col">Threshold</th>
            </tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <RuleRow key={`${r.rule}:${r.thresholdHours}`} rule={r} />
            ))}
          </tbody>
        </table>
      </section>
      <section className="card">
        <h2>Channels</h2>
        {secret ? (
          <div className="ok-box" role="status">
            Signing secret of {secret.channel} (shown once; the receiver checks each delivery with it):{' '}
            <code className="mono">{secret.secret}</code> <CopyButton text={secret.secret} />{' '}
            <button className="btn small" onClick={dismiss}>
              Done
            </button>
          </div>
        ) : null}
        {channels.length === 0 ? (
          <p className="muted">No channel yet: alerts are recorded below but sent nowhere.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Sends to</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {channels.map((c) => (
                <tr key={c.id}>
                  <td>{c.name}</td>
                  <td>
                    {KIND_LABELS[c.kind]}
                    {c.digest ? ' + weekly digest' : ''}
                  </td>
                  <td className="mono">{c.target}</td>
                  <td className="nowrap">
                    <Can m="testAlertChannel">
                      <button className="btn small" onClick={() => void test(c.id)}>
                        Send test
                      </button>{' '}
                    </Can>
                    <Can m="removeAlertChannel">
                      <button className="btn small danger" onClick={() => void remove(c.id)}>
                        Remove
                      </button>
                    </Can>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <Can m="addAlertChannel">
        <AddChannel />
      </Can>
      <section className="card">
        <h2>Last deliveries</h2>
        {deliveries.length === 0 ? (
          <p className="muted">Nothing sent yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Created (UTC)</th>
                <th scope="col">Channel</th>
                <th scope="col">Message</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error or next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td className="nowrap">{d.createdAt}</td>
                  <td>{d.channelName}</td>
                  <td>{d.subject}</td>
                  <td>
                    <Badge
                      status={d.status === 'sent' ? 'completed' : d.status === 'failed' ? 'cancelled' : 'pending'}
                      label={d.status}
                    />
                  </td>
                  <td>{d.attempts}</td>
                  <td>
                    {d.lastError ?? ''}
                    {d.nextAttemptAt ? ` (next ${d.nextAttemptAt})` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card">
        <h2>Alerts raised</h2>
        {alerts.length === 0 ? (
          <p className="muted">No alert so far.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Raised (UTC)</th>
                <th scope="col">Alert</th>
                <th scope="col">Cleared (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {alerts.map((a) => (
                <tr key={a.id}>
                  <td className="nowrap">{a.raisedAt}</td>
                  <td>{a.subject}</td>
                  <td className="nowrap">{a.clearedAt ?? 'open'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  )
}
