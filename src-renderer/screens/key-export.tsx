/**
 * Exporting the kept private key. A key file on disk is as good as the certificate's identity to
 * whoever copies it, so the export encrypts it with a password by default (PKCS#8
 * EncryptedPrivateKeyInfo, RFC 5958 §3, built in the main process); a plain PKCS#8 file needs
 * its own explicit choice, with the reason to avoid it next to it.
 */
import { useState } from 'react'
import type { OrderView } from '../../src-preload/contract'
import { download } from '../lib/format'
import { useCan, useStore } from '../store'
import type { RunExport } from './order-downloads'

export function KeyExport({
  order,
  file,
  password,
  setPassword,
  busy,
  run,
  withPfxNote
}: {
  order: OrderView
  file: string
  password: string
  setPassword: (p: string) => void
  busy: string | null
  run: RunExport
  withPfxNote: boolean
}): React.JSX.Element | null {
  const exportKeyFile = useStore((s) => s.exportKeyFile)
  const [plain, setPlain] = useState(false)
  // Keys leave the book only through an owner (docs/security.md, "Admins and roles").
  const mayExport = useCan('exportPrivateKey')
  const radio = `key-protection-${order.id}`
  if (!mayExport) return null
  return (
    <div className="key-export">
      <fieldset className="radio-row" disabled={!order.hasStoredKey}>
        <legend>Private key file</legend>
        <label>
          <input type="radio" name={radio} checked={!plain} onChange={() => setPlain(false)} /> Encrypted with a
          password (recommended)
        </label>
        <label>
          <input type="radio" name={radio} checked={plain} onChange={() => setPlain(true)} /> Without a password
        </label>
      </fieldset>
      {plain ? (
        <p className="warn small" role="note">
          Without a password, anyone who gets hold of the file can use the key. Keep it only where the web server reads
          it.
        </p>
      ) : null}
      <div className="row">
        {!plain || withPfxNote ? (
          <label className="grow">
            {withPfxNote ? 'Export password (for the key or the PFX)' : 'Export password'}
            <input
              type="password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoComplete="new-password"
              disabled={!order.hasStoredKey}
            />
          </label>
        ) : null}
        {plain ? (
          <button
            type="button"
            className="btn"
            disabled={!order.hasStoredKey || busy !== null}
            onClick={() =>
              run('Exporting the key…', async () => {
                const r = await exportKeyFile(order.id, '')
                if ('error' in r) throw new Error(r.error)
                download(`${file}.key.pem`, r.pem, 'application/x-pem-file')
              })
            }
          >
            Private key (unencrypted)
          </button>
        ) : (
          <button
            type="button"
            className="btn"
            disabled={!order.hasStoredKey || !password || busy !== null}
            onClick={() =>
              run('Encrypting the key…', async () => {
                const r = await exportKeyFile(order.id, password)
                if ('error' in r) throw new Error(r.error)
                download(`${file}.key.pem`, r.pem, 'application/x-pem-file')
              })
            }
          >
            Private key (encrypted)
          </button>
        )}
      </div>
    </div>
  )
}
