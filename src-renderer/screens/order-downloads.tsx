/**
 * The certificate's files: PEM pieces straight from the store, and the key and PFX exports that
 * the main process builds (the password-based encryption never runs in the page).
 */
import type { CertificateView, OrderView } from '../../src-preload/contract'
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
        <div className="row">
          <button
            type="button"
            className="btn primary"
            disabled={!order.hasStoredKey || !password || busy !== null}
            onClick={() =>
              run('Building the PFX…', async () => {
                const r = await exportPfx(order.id, password)
                if ('error' in r) throw new Error(r.error)
                download(`${file}.pfx`, r.pfx, 'application/x-pkcs12')
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
