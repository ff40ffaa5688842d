/**
 * The order's deploy targets: where every issued and reissued certificate goes (a
 * folder, a command, a webhook), the last run of each, "Deploy now" and the recent runs.
 */
import { useEffect, useState } from 'react'
import type {
  CreatedDeployTargetView,
  DeployLayout,
  DeployRunView,
  DeployTargetInput,
  DeployTargetKind,
  DeployTargetView,
  OrderView
} from '../../src-preload/contract'
import { useStore } from '../store'
import { Can, Badge, CopyButton, ErrorBox } from '../ui'

const LAYOUTS: DeployLayout[] = ['nginx', 'apache', 'haproxy', 'iis']
/**
 * Runs change on their own (a deploy started by an issuance, a retry the scheduler makes), so
 * while one is not settled the page looks again: often while one is running, now and then
 * while one waits for its next attempt. It stops once every run has its outcome.
 */
const RUNNING_POLL_MS = 1500
const PENDING_POLL_MS = 15_000
const when = (t: string | null): string => (t ? t.slice(0, 16).replace('T', ' ') : '—')

function describe(t: DeployTargetView): string {
  if (t.kind === 'folder')
    return `${t.path} (${t.layout}${t.pfx ? ', PFX' : ''}${t.keyFile ? `, key file ${t.keyFile}` : ''})`
  if (t.kind === 'command')
    return `${t.command} (timeout ${t.timeoutSeconds}s${t.verify.length ? `, verify ${t.verify.join(', ')}` : ''})`
  return t.url ?? ''
}

function RunOutcome({ run }: { run: DeployRunView | null }): React.JSX.Element {
  if (!run) return <span className="muted">not run yet</span>
  return (
    <span>
      <Badge status={run.status} /> <span className="muted small">{when(run.updatedAt)}</span>
      {run.summary || run.lastError ? <div className="small break">{run.lastError ?? run.summary}</div> : null}
    </span>
  )
}

interface FormState {
  kind: DeployTargetKind
  path: string
  layout: DeployLayout
  pfx: boolean
  keyFile: string
  command: string
  timeout: string
  verify: string
  url: string
}
const emptyForm: FormState = {
  kind: 'folder',
  path: '',
  layout: 'nginx',
  pfx: false,
  keyFile: '',
  command: '',
  timeout: '60',
  verify: '',
  url: ''
}

function AddTarget({ orderId }: { orderId: number }): React.JSX.Element {
  const add = useStore((s) => s.addDeployTarget)
  const [form, setForm] = useState<FormState>(emptyForm)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<CreatedDeployTargetView | null>(null)
  const patch = (p: Partial<FormState>): void => setForm((f) => ({ ...f, ...p }))
  const input = (): DeployTargetInput => {
    if (form.kind === 'folder')
      return {
        kind: 'folder',
        path: form.path,
        layout: form.layout,
        pfx: form.pfx,
        ...(form.keyFile.trim() ? { keyFile: form.keyFile.trim() } : {})
      }
    if (form.kind === 'command') {
      const t = Number(form.timeout)
      const verify = form.verify
        .split(/[\s,]+/)
        .map((v) => v.trim())
        .filter(Boolean)
      return {
        kind: 'command',
        command: form.command,
        timeoutSeconds: form.timeout.trim() === '' ? undefined : t,
        ...(verify.length ? { verify } : {})
      }
    }
    return { kind: 'webhook', url: form.url }
  }
  const submit = async (): Promise<void> => {
    setError(null)
    setBusy(true)
    const r = await add(orderId, input())
    setBusy(false)
    // On failure the typed values stay in the form; on success only the kind is kept.
    if (typeof r === 'string') return setError(r)
    setCreated(r)
    setForm({ ...emptyForm, kind: form.kind, layout: form.layout })
  }
  return (
    <>
      {created?.secret ? (
        <div className="card highlight" role="status" data-testid="deploy-secret">
          <h3>{created.secret.name === 'webhook_secret' ? 'Webhook secret' : 'PFX password'}</h3>
          <p>
            Shown once: CertDesk keeps it in the OS keychain.{' '}
            {created.secret.name === 'webhook_secret'
              ? 'The receiver checks the X-CertDesk-Signature header with it.'
              : 'certificate.pfx in the folder is protected with it.'}
          </p>
          <div className="key-row">
            <code>{created.secret.value}</code>
            <CopyButton text={created.secret.value} />
            <button className="btn small" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      <form
        className="form"
        aria-label="Add deploy target"
        onSubmit={(e) => {
          e.preventDefault()
          void submit()
        }}
      >
        <div className="row">
          <label>
            Target kind
            <select
              aria-label="Target kind"
              value={form.kind}
              onChange={(e) => patch({ kind: e.target.value as DeployTargetKind })}
            >
              <option value="folder">Folder</option>
              <option value="command">Command</option>
              <option value="webhook">Webhook</option>
            </select>
          </label>
          {form.kind === 'folder' ? (
            <>
              <label className="grow">
                Folder path
                <input
                  value={form.path}
                  placeholder="/etc/ssl/example.com"
                  onChange={(e) => patch({ path: e.target.value })}
                />
              </label>
              <label>
                Layout
                <select
                  aria-label="Layout"
                  value={form.layout}
                  onChange={(e) => patch({ layout: e.target.value as DeployLayout })}
                >
                  {LAYOUTS.map((l) => (
                    <option key={l}>{l}</option>
                  ))}
                </select>
              </label>
              <label className="check">
                <input
                  type="checkbox"
                  aria-label="Also write a PFX"
                  checked={form.pfx || form.layout === 'iis'}
                  disabled={form.layout === 'iis'}
                  onChange={(e) => patch({ pfx: e.target.checked })}
                />{' '}
                PFX
              </label>
              <label className="grow">
                Key file
                <input
                  aria-label="Key file"
                  value={form.keyFile}
                  placeholder={
                    form.layout === 'haproxy'
                      ? `${form.path || '/etc/ssl/example.com'}/haproxy.pem.key`
                      : 'empty: the key CertDesk keeps'
                  }
                  title="For a key the customer keeps: the file the server reads. CertDesk checks it belongs to each certificate before writing, and never stores it."
                  onChange={(e) => patch({ keyFile: e.target.value })}
                />
              </label>
            </>
          ) : null}
          {form.kind === 'command' ? (
            <>
              <label className="grow">
                Command
                <input
                  value={form.command}
                  placeholder="systemctl reload nginx"
                  onChange={(e) => patch({ command: e.target.value })}
                />
              </label>
              <label className="narrow-field">
                Timeout seconds
                <input inputMode="numeric" value={form.timeout} onChange={(e) => patch({ timeout: e.target.value })} />
              </label>
              <label className="grow">
                Verify at
                <input
                  aria-label="Verify at"
                  value={form.verify}
                  placeholder="127.0.0.1:443, www.example.com:443"
                  title="After the command, CertDesk connects over TLS to each host:port and checks the new certificate is served."
                  onChange={(e) => patch({ verify: e.target.value })}
                />
              </label>
            </>
          ) : null}
          {form.kind === 'webhook' ? (
            <label className="grow">
              Webhook URL
              <input
                value={form.url}
                placeholder="https://deploy.example.com/hook"
                onChange={(e) => patch({ url: e.target.value })}
              />
            </label>
          ) : null}
          <button className="btn primary" type="submit" disabled={busy}>
            {busy ? 'Adding…' : 'Add target'}
          </button>
        </div>
        <ErrorBox text={error} />
      </form>
    </>
  )
}

export function DeployTargets({ order }: { order: OrderView }): React.JSX.Element {
  const orderId = useStore((s) => s.deployOrderId)
  const targets = useStore((s) => s.deployTargets)
  const runs = useStore((s) => s.deployRuns)
  const error = useStore((s) => s.deployError)
  const deploying = useStore((s) => s.deploying.includes(order.id))
  const load = useStore((s) => s.loadDeploys)
  const remove = useStore((s) => s.removeDeployTarget)
  const deployNow = useStore((s) => s.deployNow)
  const [removing, setRemoving] = useState<number | null>(null)
  useEffect(() => {
    void load(order.id)
  }, [order.id, order.status, order.updatedAt, load])
  const mine = orderId === order.id
  const shown = mine ? targets : []
  const recent = mine ? runs : []
  const unsettled = [...recent, ...shown.map((t) => t.lastRun)].map((r) => r?.status)
  const pollMs =
    deploying || unsettled.includes('running')
      ? RUNNING_POLL_MS
      : unsettled.includes('pending')
        ? PENDING_POLL_MS
        : null
  useEffect(() => {
    if (pollMs === null) return
    const timer = setInterval(() => void load(order.id), pollMs)
    return () => clearInterval(timer)
  }, [pollMs, order.id, load])
  const kindOf = new Map(shown.map((t) => [t.id, describe(t)]))
  return (
    <section className="card" data-testid="deploy-targets">
      <div className="card-head">
        <h2>Deploy targets</h2>
        <Can m="deployNow">
          <button
            className="btn primary"
            disabled={deploying || shown.length === 0 || order.certValidTill === null}
            title={order.certValidTill === null ? 'No certificate yet' : undefined}
            onClick={() => void deployNow(order.id)}
          >
            {deploying ? 'Deploying…' : 'Deploy now'}
          </button>
        </Can>
      </div>
      <p className="muted small">
        Every issued and reissued certificate goes to these targets; a failed deploy is retried and shown in the event
        log.
      </p>
      <ErrorBox text={mine ? error : null} />
      <table className="table">
        <thead>
          <tr>
            <th>Kind</th>
            <th>Target</th>
            <th>Last run</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {shown.map((t) => (
            <tr key={t.id} data-target={t.kind}>
              <td>{t.kind}</td>
              <td className="mono break">{describe(t)}</td>
              <td data-testid="last-run">
                <RunOutcome run={t.lastRun} />
              </td>
              <td>
                <Can m="removeDeployTarget">
                  <div className="actions">
                    {removing === t.id ? (
                      <>
                        <button
                          className="btn small danger"
                          onClick={() => void remove(order.id, t.id).then(() => setRemoving(null))}
                        >
                          Yes, remove
                        </button>
                        <button className="btn small" onClick={() => setRemoving(null)}>
                          Keep
                        </button>
                      </>
                    ) : (
                      <button className="btn small" onClick={() => setRemoving(t.id)}>
                        Remove
                      </button>
                    )}
                  </div>
                </Can>
              </td>
            </tr>
          ))}
          {shown.length === 0 ? (
            <tr>
              <td colSpan={4} className="muted">
                No deploy targets yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <Can m="addDeployTarget">
        <AddTarget orderId={order.id} />
      </Can>
      {recent.length > 0 ? (
        <>
          <h3>Recent runs</h3>
          <table className="table" data-testid="deploy-runs">
            <thead>
              <tr>
                <th>When</th>
                <th>Target</th>
                <th>Trigger</th>
                <th>Outcome</th>
                <th className="num">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {recent.map((r) => (
                <tr key={r.id}>
                  <td className="muted">{when(r.updatedAt)}</td>
                  <td className="break small">{kindOf.get(r.targetId) ?? `${r.kind} (removed)`}</td>
                  <td>{r.trigger.replace('_', ' ')}</td>
                  <td>
                    <Badge status={r.status} /> <span className="small">{r.lastError ?? r.summary ?? ''}</span>
                  </td>
                  <td className="num">{r.attempts}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  )
}
