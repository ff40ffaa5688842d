/**
 * The certificate's files: PEM pieces straight from the store, and the key and PFX exports that
 * the main process builds (the password-based encryption never runs in the page).
 */
import { useState } from 'react'
import type { CertificateView, OrderView, PfxEncryption } from '../../src-preload/contract'
import { download } from '../lib/format'
import { useStore } from '../store'
import { KeyExport } from './key-export'
import { Can } from '../ui'

/** Runs one export with a progress label; a thrown error is shown under the downloads. */
export type RunExport = (label: string, work: () => Promise<void>) => void

/** File names follow the order's domain; a wildcard's `*` is not a file-name character everywhere. */
export const exportFileName = (order: OrderView): string => order.domain.replace(/^\*\./, 'wildcard.')

export function CertificateDownloads({
  order,
  cert,
  password,
  setPassword,
  busy,
  run
}: {
  order: OrderView
  cert: CertificateView
  /** The export password, held by the card: one typed before the certificate arrived is kept. */
  password: string
  setPassword: (p: string) => void
  busy: string | null
  run: RunExport
}): React.JSX.Element {
  const exportPfx = useStore((s) => s.exportPfx)
  const [encryption, setEncryption] = useState<PfxEncryption>('aes-256')
  const file = exportFileName(order)
  return (
    <>
      <div className="actions wrap">
        <button
          className="btn"
          onClick={() => download(`${file}.crt.pem`, cert.certificatePem, 'application/x-pem-file')}
        >
          Certificate
        </button>
        <button className="btn" onClick={() => download(`${file}.chain.pem`, cert.chainPem, 'application/x-pem-file')}>
          Chain
        </button>
        <button
          className="btn"
          onClick={() =>
            download(
              `${file}.fullchain.pem`,
              cert.certificatePem.trim() + '\n' + cert.chainPem,
              'application/x-pem-file'
            )
          }
        >
          Full chain
        </button>
      </div>
      <KeyExport
        order={order}
        file={file}
        password={password}
        setPassword={setPassword}
        busy={busy}
        run={run}
        withPfxNote
      />
      <Can m="exportPfx">
        <fieldset className="radio-row" disabled={!order.hasStoredKey}>
          <legend>PFX encryption</legend>
          <label>
            <input
              type="radio"
              name={`pfx-encryption-${order.id}`}
              checked={encryption === 'aes-256'}
              onChange={() => setEncryption('aes-256')}
            />{' '}
            AES-256 (recommended; Windows Server 2019 and later, current OpenSSL and Java)
          </label>
          <label>
            <input
              type="radio"
              name={`pfx-encryption-${order.id}`}
              checked={encryption === 'legacy-3des'}
              onChange={() => setEncryption('legacy-3des')}
            />{' '}
            Legacy 3DES/SHA-1 (compatibility for Windows Server 2016 and older)
          </label>
        </fieldset>
        {encryption === 'legacy-3des' ? (
          <p className="warn small" role="note">
            Legacy encryption is weaker: use it only for a server that cannot import the AES-256 file, and delete the
            file once it is imported.
          </p>
        ) : null}
        <div className="row">
          <button
            type="button"
            className="btn primary"
            disabled={!order.hasStoredKey || !password || busy !== null}
            onClick={() =>
              run('Building the PFX…', async () => {
                const r = await exportPfx(order.id, password, encryption)
                if ('error' in r) throw new Error(r.error)
                download(`${file}${encryption === 'legacy-3des' ? '.legacy' : ''}.pfx`, r.pfx, 'application/x-pkcs12')
              })
            }
          >
            PFX / PKCS#12
          </button>
        </div>
      </Can>
      {busy ? (
        <div className="progress" role="status">
          <span className="spinner" /> {busy}
        </div>
      ) : null}
      <Can m="exportPfx">
        {!order.hasStoredKey ? (
          <p className="muted small">
            No private key is kept for this order (its CSR was made elsewhere), so the key and PFX exports are off.
          </p>
        ) : null}
      </Can>
    </>
  )
}
