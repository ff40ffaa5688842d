import { useState } from 'react'
import { useStore } from '../store'

/** Settings: a consistent copy of the store while the app runs, with its progress. */
export function BackupCard(): React.JSX.Element {
  const backup = useStore((s) => s.backup)
  const start = useStore((s) => s.startBackup)
  const [folder, setFolder] = useState('')
  const running = backup.state === 'running'
  return (
    <section className="card form">
      <h2>Backup</h2>
      <p>
        A copy of the store (orders, ledger, invoices, certificates) taken while CertDesk runs, sealed with a key kept
        in this machine&apos;s OS keychain: a restore refuses a file changed in any byte. API keys, EAB keys and the
        keys that protect private keys stay in the OS keychain: export them with{' '}
        <code>certdesk admin secrets export</code> and keep both together; that export also restores the backup on
        another machine (<code>certdesk admin restore --secrets</code>).
      </p>
      <label>
        Backup folder (absolute path; empty: backups in the data folder)
        <input value={folder} onChange={(e) => setFolder(e.target.value)} disabled={running} />
      </label>
      <div className="actions">
        <button className="btn" disabled={running} onClick={() => void start(folder)}>
          Back up now
        </button>
      </div>
      {backup.state !== 'idle' ? (
        <div className="progress" role="status">
          <progress max={100} value={backup.percent} aria-label="backup progress" />
          {backup.state === 'running' ? `${backup.percent}%` : null}
          {backup.state === 'done' ? <span className="mono">{backup.file}</span> : null}
          {backup.state === 'failed' ? backup.error : null}
        </div>
      ) : null}
    </section>
  )
}
