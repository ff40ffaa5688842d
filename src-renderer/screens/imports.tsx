/**
 * Certificates bought elsewhere (files, a folder, live endpoints), each with its renewal offer
 * here, and the expiry report of everything the reseller has, issued here or imported.
 */
import { useEffect, useState } from 'react'
import type { UploadedFile } from '../../src-preload/contract'
import { usd } from '../lib/format'
import { useSearch } from 'wouter'
import { href, setQuery } from '../routes'
import { useStore } from '../store'
import { Can } from '../ui'

async function readFiles(list: FileList | null): Promise<UploadedFile[]> {
  const out: UploadedFile[] = []
  for (const f of Array.from(list ?? [])) {
    const bytes = new Uint8Array(await f.arrayBuffer())
    let binary = ''
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
    out.push({ name: f.name, base64: btoa(binary) })
  }
  return out
}

export function Imports(): React.JSX.Element {
  const resellerId = useStore((s) => s.resellerId)
  const imported = useStore((s) => s.imported)
  const outcome = useStore((s) => s.importOutcome)
  const busy = useStore((s) => s.importBusy)
  const replacement = useStore((s) => s.replacement)
  const load = useStore((s) => s.loadImported)
  const uploads = useStore((s) => s.importUploads)
  const folderImport = useStore((s) => s.importFolder)
  const endpointImport = useStore((s) => s.importEndpoints)
  const quote = useStore((s) => s.quoteReplacement)
  const renew = useStore((s) => s.renewImported)
  const [password, setPassword] = useState('')
  const [withKeys, setWithKeys] = useState(false)
  const [followLinks, setFollowLinks] = useState(false)
  const [folder, setFolder] = useState('')
  const [endpoints, setEndpoints] = useState('')
  const [files, setFiles] = useState<FileList | null>(null)
  useEffect(() => {
    if (resellerId !== null) void load()
  }, [resellerId, load])
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Imported certificates</h1>
      </header>
      <Can m="importUploads">
        <section className="card">
          <h2>Bring certificates in</h2>
          <p className="muted">
            PEM, DER and PFX files, a folder on this machine (scanned with its subfolders), or what servers serve.
            Private keys found with a certificate (in its file, or a key file beside it such as site.key or privkey.pem)
            stay where they are unless you choose to keep them.
          </p>
          <div className="row">
            <label>
              PFX password
              <input
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="off"
              />
            </label>
            <label className="check">
              <input type="checkbox" checked={withKeys} onChange={(e) => setWithKeys(e.target.checked)} />
              Keep the private keys found (encrypted, key in the OS keychain)
            </label>
          </div>
          <form
            className="form inline-form"
            onSubmit={(e) => {
              e.preventDefault()
              void readFiles(files).then((picked) => uploads(picked, password, withKeys))
            }}
          >
            <div className="row">
              <label className="grow">
                Certificate files
                <input
                  type="file"
                  multiple
                  accept=".pem,.crt,.cer,.cert,.der,.pfx,.p12"
                  onChange={(e) => setFiles(e.target.files)}
                />
              </label>
              <button className="btn" type="submit" disabled={busy || !files?.length}>
                Import files
              </button>
            </div>
          </form>
          <Can m="importFolder">
            <form
              className="form inline-form"
              onSubmit={(e) => {
                e.preventDefault()
                void folderImport(folder, password, withKeys, followLinks)
              }}
            >
              <div className="row">
                <label className="grow">
                  Folder on this machine
                  <input value={folder} onChange={(e) => setFolder(e.target.value)} placeholder="/etc/ssl/sites" />
                </label>
                <button className="btn" type="submit" disabled={busy || !folder.trim()}>
                  Scan folder
                </button>
              </div>
              <label className="check">
                <input type="checkbox" checked={followLinks} onChange={(e) => setFollowLinks(e.target.checked)} />
                Follow links inside the folder (Let&apos;s Encrypt: choose /etc/letsencrypt; links out of it are never
                followed)
              </label>
            </form>
          </Can>
          <form
            className="form inline-form"
            onSubmit={(e) => {
              e.preventDefault()
              void endpointImport(endpoints.split(/[\s,]+/).filter(Boolean))
            }}
          >
            <div className="row">
              <label className="grow">
                Servers (host:port, or a local range such as 192.168.1.0/24:443)
                <input
                  value={endpoints}
                  onChange={(e) => setEndpoints(e.target.value)}
                  placeholder="shop.example.com:443"
                />
              </label>
              <button className="btn" type="submit" disabled={busy || !endpoints.trim()}>
                {busy ? 'Working…' : 'Scan servers'}
              </button>
            </div>
          </form>
          {outcome ? (
            <div role="status" data-testid="import-outcome">
              <p>
                Imported {outcome.imported.length}, already known {outcome.duplicates.length}, skipped{' '}
                {outcome.skipped.length}.
                {outcome.imported.some((c) => c.keyKept)
                  ? ` Private keys kept: ${outcome.imported.filter((c) => c.keyKept).length}.`
                  : ''}
              </p>
              {outcome.skipped.length > 0 ? (
                <ul className="plain-list small">
                  {outcome.skipped.map((x, i) => (
                    <li key={`${i}:${x.source}`}>
                      <code>{x.source}</code>: {x.reason}
                    </li>
                  ))}
                </ul>
              ) : null}
              {outcome.keysLeftInPlace.length > 0 ? (
                <p className="small">Keys left where they are: {outcome.keysLeftInPlace.join(', ')}</p>
              ) : null}
            </div>
          ) : null}
        </section>
      </Can>
      {replacement ? (
        <section className="card highlight" aria-label="Renewal offer">
          <h2>Renew {replacement.input.domain} with CertDesk</h2>
          <p>
            {replacement.quote.productName}, 1 year: <strong>{usd(replacement.quote.total)}</strong>
            {replacement.quote.discountAmount > 0
              ? ` (your ${replacement.quote.discountRate}% discount saves ${usd(replacement.quote.discountAmount)})`
              : ''}
            . Balance {usd(replacement.quote.balance)}.
          </p>
          <Can m="renewImported">
            <div className="actions">
              <button
                className="btn primary"
                disabled={!replacement.quote.affordable}
                onClick={() => void renew(replacement.importedId, 'credit')}
              >
                Order and pay from credit
              </button>
              <button className="btn" onClick={() => void renew(replacement.importedId, 'invoice')}>
                Order on invoice
              </button>
            </div>
          </Can>
        </section>
      ) : null}
      <table className="table" aria-label="Imported certificates">
        <thead>
          <tr>
            <th>Domain</th>
            <th>Issuer</th>
            <th>Valid till</th>
            <th>Level</th>
            <th className="path-col">Source</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {imported.map((c) => (
            <tr key={c.id}>
              {/* Names and paths are single long tokens: they wrap inside their cell, never widen the table. */}
              <td className="break name-cell">
                {c.domain}
                {c.names.length > 1 ? <span className="muted small"> +{c.names.length - 1}</span> : null}
              </td>
              <td className="small">{c.issuer}</td>
              <td className="nowrap">{c.validTill.slice(0, 10)}</td>
              <td>{c.validationLevel.toUpperCase()}</td>
              <td className="small">
                <code className="break">{c.source}</code>
              </td>
              <td>
                {c.replacementOrderId ? (
                  <span className="muted small">renewal ordered</span>
                ) : (
                  <Can m="renewImported">
                    <button
                      className="btn small"
                      onClick={() => void quote(c.id)}
                      // WCAG 2.5.3 "Label in Name": the name starts with the words shown.
                      aria-label={`Renew with CertDesk: ${c.domain}`}
                    >
                      {/* Two lines at most where the table is narrow ("Renew with" / "CertDesk"). */}
                      Renew{'\u00a0'}with CertDesk
                    </button>
                  </Can>
                )}
              </td>
            </tr>
          ))}
          {imported.length === 0 ? (
            <tr>
              <td colSpan={6} className="muted">
                Nothing imported yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  )
}

/** The report's window in the address (`#/reports/expiring?days=60`); 30 days when it names none. */
export const EXPIRING_DEFAULT_DAYS = 30
const daysFrom = (search: string): number => {
  const v = new URLSearchParams(search).get('days')
  return v !== null && /^\d{1,3}$/.test(v) ? Number(v) : EXPIRING_DEFAULT_DAYS
}

export function ExpiryReport(): React.JSX.Element {
  const resellerId = useStore((s) => s.resellerId)
  const rows = useStore((s) => s.expiring)
  const load = useStore((s) => s.loadExpiring)
  const csv = useStore((s) => s.downloadExpiringCsv)
  // The day count is the address's: a reload, Back and a pasted link keep it.
  const days = daysFrom(useSearch())
  const [windowDays, setWindowDays] = useState(String(days))
  useEffect(() => {
    setWindowDays(String(days))
    if (resellerId !== null) void load(days)
  }, [resellerId, load, days])
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Expiring certificates</h1>
        <div className="actions">
          <button className="btn" onClick={() => void csv()}>
            Download CSV
          </button>
        </div>
      </header>
      <form
        className="card form inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          const n = windowDays.trim()
          // What the report cannot take goes to the core as typed, which says why.
          if (/^\d{1,3}$/.test(n)) setQuery({ days: Number(n) === EXPIRING_DEFAULT_DAYS ? undefined : n })
          else void load(Number(n))
        }}
      >
        <div className="row">
          <label>
            Ending within (days)
            <input value={windowDays} onChange={(e) => setWindowDays(e.target.value)} inputMode="numeric" size={5} />
          </label>
          <button className="btn" type="submit">
            Show
          </button>
        </div>
      </form>
      <table className="table" aria-label="Certificates ending soon">
        <thead>
          <tr>
            <th>Domain</th>
            <th>Reference</th>
            <th>Ends</th>
            <th>Days left</th>
            <th>Renewal</th>
            <th>Contact</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.reference}>
              <td>{r.domain}</td>
              <td>
                {r.kind === 'issued' && r.orderId ? (
                  <a href={href({ name: 'order', id: r.orderId })}>{r.reference}</a>
                ) : (
                  r.reference
                )}
              </td>
              <td>{r.validTill.slice(0, 10)}</td>
              <td>{r.daysLeft.toLocaleString('en-US')}</td>
              <td>{r.renewalPlannedAt ? `planned ${r.renewalPlannedAt.slice(0, 10)}` : 'none planned'}</td>
              <td>
                <a href={`mailto:${r.contact}`}>{r.contact}</a>
              </td>
            </tr>
          ))}
          {rows.length === 0 ? (
            <tr>
              <td colSpan={6} className="muted">
                Nothing ends within {days} days.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  )
}
