/** The CSR step of an order waiting for one: a key and CSR generated here and kept, or a pasted CSR, and the DCV choice. */
import { useEffect, useState } from 'react'
import type { OrderView } from '../../src-preload/contract'
import type { DecodedCsr } from '../lib/csr'
import { KEY_TYPES, type KeyType } from '../lib/key-types'
import { useStore } from '../store'
import { DomainNames, ErrorBox } from '../ui'
import { DcvChoices, dcvRequest, freshPicks, useApproverChoices } from './dcv-choices'

export function CsrStep({ order }: { order: OrderView }): React.JSX.Element {
  const configure = useStore((s) => s.configure)
  const loadDraft = useStore((s) => s.loadCsrDraft)
  const keepDraft = useStore((s) => s.keepCsrDraft)
  const discardDraft = useStore((s) => s.discardCsrDraft)
  // A CSR generated here lives in the main process with its key until submitted or discarded,
  // so leaving the page or reloading brings it back; a pasted one is only typed text.
  const draft = useStore((s) => (s.csrDraft?.orderId === order.id ? s.csrDraft : null))
  const [mode, setMode] = useState<'generate' | 'paste'>('generate')
  const [keyType, setKeyType] = useState<KeyType>('ECDSA-P256')
  const [names, setNames] = useState(order.domain)
  const [pasted, setPasted] = useState('')
  const [discarding, setDiscarding] = useState(false)
  const csr = draft?.csrPem ?? pasted
  const [decoded, setDecoded] = useState<DecodedCsr | null>(null)
  const [decodeError, setDecodeError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [elapsed, setElapsed] = useState(0)
  const [picks, setPicks] = useState(freshPicks)
  const [error, setError] = useState<string | null>(null)
  const approverChoices = useApproverChoices(decoded?.names ?? [])

  useEffect(() => {
    void loadDraft(order.id)
  }, [order.id, loadDraft])

  // Decoded and checked as you type (or as soon as one is generated).
  useEffect(() => {
    if (!csr.trim()) return void (setDecoded(null), setDecodeError(null))
    let live = true
    // The x509 code loads on the first CSR, not with the app (lib/csr.ts pulls in ASN.1).
    import('../lib/csr')
      .then((m) => m.decodeCsr(csr))
      .then(
        (d) => live && (setDecoded(d), setDecodeError(d.signatureValid ? null : 'the CSR signature does not verify'))
      )
      .catch((e: unknown) => live && (setDecoded(null), setDecodeError((e as Error).message)))
    return () => {
      live = false
    }
  }, [csr])

  const generate = async (): Promise<void> => {
    setError(null)
    const list = names
      .split(/[\s,]+/)
      .map((n) => n.trim().toLowerCase())
      .filter(Boolean)
    const started = performance.now()
    setBusy(`Generating a ${keyType} key pair${keyType === 'RSA-4096' ? ' (RSA 4096 can take several seconds)' : ''}…`)
    const tick = setInterval(() => setElapsed(Math.round((performance.now() - started) / 1000)), 250)
    try {
      const { generateCsr } = await import('../lib/csr')
      const g = await generateCsr(keyType, list)
      // Key and CSR are kept together (the key encrypted) before the CSR is shown: a CSR whose
      // key could be lost is never offered for submission.
      const refused = await keepDraft(order.id, g.privateKeyPem, g.csrPem)
      if (refused) setError(refused)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      clearInterval(tick)
      setBusy(null)
      setElapsed(0)
    }
  }

  return (
    <section className="card">
      <h2>Certificate request</h2>
      <div className="tabs">
        <button
          type="button"
          className={mode === 'generate' ? 'tab active' : 'tab'}
          onClick={() => setMode('generate')}
        >
          Generate here
        </button>
        <button type="button" className={mode === 'paste' ? 'tab active' : 'tab'} onClick={() => setMode('paste')}>
          Paste a CSR
        </button>
      </div>
      {mode === 'generate' ? (
        <div className="form">
          <div className="row">
            <label>
              Key type
              <select aria-label="Key type" value={keyType} onChange={(e) => setKeyType(e.target.value as KeyType)}>
                {KEY_TYPES.map((k) => (
                  <option key={k}>{k}</option>
                ))}
              </select>
            </label>
            <div className="grow field-with-hint">
              <label>
                Names
                <input value={names} aria-describedby="csr-names-hint" onChange={(e) => setNames(e.target.value)} />
              </label>
              <span id="csr-names-hint" className="muted small">
                The first is the common name
              </span>
            </div>
          </div>
          <div className="actions">
            <button type="button" className="btn" disabled={busy !== null} onClick={() => void generate()}>
              Generate key and CSR
            </button>
          </div>
          {busy ? (
            <div className="progress" role="status">
              <span className="spinner" /> {busy} {elapsed > 0 ? `${elapsed} s` : ''}
            </div>
          ) : null}
        </div>
      ) : null}
      {order.hasStoredKey ? (
        <div className="kept-key" data-testid="kept-key">
          {draft ? (
            <p className="ok-text">
              The private key is kept on this machine, encrypted with a key from the OS keychain, together with the CSR
              generated {draft.createdAt} UTC, until you submit or discard them.
            </p>
          ) : (
            <p className="muted">
              A private key from an earlier attempt is kept for this order, without its CSR. Generating a new key and
              CSR replaces it.
            </p>
          )}
          {discarding ? (
            <div className="confirm" role="dialog" aria-label="Discard the generated key">
              <p>Discard the kept private key{draft ? ' and its CSR' : ''}? It cannot be recovered.</p>
              <button
                type="button"
                className="btn danger"
                onClick={() => void discardDraft(order.id).then(() => setDiscarding(false))}
              >
                Yes, discard
              </button>
              <button type="button" className="btn" onClick={() => setDiscarding(false)}>
                Keep them
              </button>
            </div>
          ) : (
            <button
              type="button"
              className="btn small danger"
              disabled={busy !== null}
              onClick={() => setDiscarding(true)}
            >
              Discard
            </button>
          )}
        </div>
      ) : null}
      <label className="block">
        CSR (PEM)
        <textarea
          rows={mode === 'paste' ? 8 : 4}
          value={csr}
          readOnly={draft !== null}
          onChange={(e) => setPasted(e.target.value)}
          className="mono"
        />
      </label>
      {draft && mode === 'paste' ? (
        <p className="muted small">Discard the key and CSR generated here to paste another CSR.</p>
      ) : null}
      {decoded ? (
        <dl className="facts" data-testid="csr-decoded">
          <dt>Common name</dt>
          <dd>{decoded.commonName}</dd>
          <dt>Names</dt>
          <dd>
            <DomainNames names={decoded.names} />
          </dd>
          <dt>Key</dt>
          <dd>{decoded.keyAlgorithm}</dd>
          {decoded.organization ? (
            <>
              <dt>Organization</dt>
              <dd>{decoded.organization}</dd>
            </>
          ) : null}
          <dt>Signature</dt>
          <dd>{decoded.signatureValid ? 'valid' : 'invalid'}</dd>
        </dl>
      ) : null}
      {decodeError ? <p className="warn">{decodeError}</p> : null}
      {decoded && decoded.unusable.length > 0 ? (
        <p className="warn" data-testid="csr-name-warning">
          {decoded.unusable
            .map(
              (u) =>
                `The CSR names ${JSON.stringify(u.name)} in characters a certificate cannot carry` +
                (u.aLabel ? `: make it with the A-label ${u.aLabel} instead.` : '.')
            )
            .join(' ')}{' '}
          CertDesk refuses it rather than issue a certificate without that name.
        </p>
      ) : null}
      <DcvChoices names={decoded?.names ?? []} choices={approverChoices} picks={picks} onPick={setPicks} />
      <ErrorBox text={error} />
      <div className="actions">
        <button
          type="button"
          className="btn primary"
          disabled={!decoded || !decoded.signatureValid || busy !== null}
          onClick={() => {
            setError(null)
            setBusy('Submitting…')
            void configure({
              orderId: order.id,
              csr,
              ...dcvRequest(picks, decoded?.names ?? [], approverChoices)
            }).then((e) => {
              setBusy(null)
              setError(e)
            })
          }}
        >
          Submit CSR
        </button>
      </div>
    </section>
  )
}
