/**
 * The audit log, for owners: who did what, when and from where, newest first, filtered by
 * admin, action, outcome and day. It only reads: the log has no way to change an entry.
 */
import { useEffect, useState } from 'react'
import type { AuditEntry, AuditFilter, AuditOutcome } from '../../src-preload/contract'
import { Pager } from '../pager'
import { AUDIT_PAGE, useStore } from '../store'
import { ErrorBox } from '../ui'

const OUTCOMES: AuditOutcome[] = ['ok', 'denied', 'refused', 'failed']

/** The ids and names an action named, as `order id 7, reseller id 1`. */
const targetsText = (t: AuditEntry['targets']): string =>
  Object.entries(t)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(', ') : v}`)
    .join(' · ') || '—'

function Outcome({ e }: { e: AuditEntry }): React.JSX.Element {
  if (e.outcome === null)
    return (
      <span className="badge badge-pending" title="CertDesk stopped while the action ran, or it is still running">
        no outcome
      </span>
    )
  const kind = e.outcome === 'ok' ? 'completed' : e.outcome === 'failed' ? 'cancelled' : 'unpaid'
  return (
    <span className={`badge badge-${kind}`} title={`HTTP status ${e.status}`}>
      {e.outcome} {e.status}
    </span>
  )
}

export function AuditLog(): React.JSX.Element {
  const log = useStore((s) => s.auditLog)
  const load = useStore((s) => s.loadAudit)
  const [draft, setDraft] = useState<{ actor: string; action: string; outcome: string; since: string }>({
    actor: log.filter.actor ?? '',
    action: log.filter.action ?? '',
    outcome: log.filter.outcome ?? '',
    since: log.filter.since ?? ''
  })
  useEffect(() => {
    void load(useStore.getState().auditLog.filter, 0)
  }, [load])
  const apply = (d: typeof draft): void => {
    setDraft(d)
    const f: AuditFilter = {}
    if (d.actor.trim()) f.actor = d.actor.trim()
    if (d.action.trim()) f.action = d.action.trim()
    if (d.outcome) f.outcome = d.outcome as AuditOutcome
    if (d.since) f.since = d.since
    void load(f, 0)
  }
  const first = log.total === 0 ? 0 : log.offset + 1
  const last = Math.min(log.offset + AUDIT_PAGE, log.total)
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Audit log</h1>
        <p className="muted">
          Every admin action on this book: kept before it runs, with its outcome once it ended. Entries cannot be
          changed or removed.
        </p>
      </header>
      <form
        className="card filters"
        aria-label="Audit filters"
        onSubmit={(e) => {
          e.preventDefault()
          apply(draft)
        }}
      >
        <label>
          Admin
          <input
            value={draft.actor}
            placeholder="alice, desktop, cli:root"
            onChange={(e) => setDraft({ ...draft, actor: e.target.value })}
            autoComplete="off"
          />
        </label>
        <label>
          Action
          <input
            value={draft.action}
            placeholder="topUp, signIn"
            onChange={(e) => setDraft({ ...draft, action: e.target.value })}
            autoComplete="off"
          />
        </label>
        <label>
          Outcome
          <select
            aria-label="Outcome"
            value={draft.outcome}
            onChange={(e) => apply({ ...draft, outcome: e.target.value })}
          >
            <option value="">Any outcome</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label>
          From day
          <input type="date" value={draft.since} onChange={(e) => apply({ ...draft, since: e.target.value })} />
        </label>
        <button className="btn" type="submit">
          Apply filters
        </button>
        <button className="btn" type="button" onClick={() => apply({ actor: '', action: '', outcome: '', since: '' })}>
          Clear filters
        </button>
      </form>
      <ErrorBox text={log.error} />
      <div className="toolbar" role="status" aria-live="polite">
        <span className="muted" data-testid="audit-range">
          {log.total > 0 ? `Entries ${first}–${last} of ${log.total}, newest first` : 'No entries match.'}
        </span>
      </div>
      {log.items.length > 0 ? (
        <table className="table" data-testid="audit-table">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Admin</th>
              <th>From</th>
              <th>Action</th>
              <th>Targets</th>
              <th>Outcome</th>
            </tr>
          </thead>
          <tbody>
            {log.items.map((e) => (
              <tr key={e.id} data-action={e.action} data-actor={e.actor}>
                <td className="nowrap">{e.at}</td>
                <td>
                  <span className="strong">{e.actor}</span>
                  {e.role ? <span className="muted small"> {e.role}</span> : null}
                </td>
                <td className="muted small">{e.source}</td>
                <td className="mono">{e.action}</td>
                <td className="small">{targetsText(e.targets)}</td>
                <td>
                  <Outcome e={e} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager
        offset={log.offset}
        total={log.total}
        size={AUDIT_PAGE}
        go={(offset) => void load(log.filter, offset)}
        what="entries"
      />
    </div>
  )
}
