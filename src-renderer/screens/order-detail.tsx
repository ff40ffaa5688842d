import { useEffect, useState } from 'react'
import type { DcvMethod, NameValidationView, OrderView } from '../../src-preload/contract'
import { decodeCsr, generateCsr, KEY_TYPES, type DecodedCsr, type KeyType } from '../lib/csr'
import { certificateFacts, pfx, privateKeyPem, type CertificateFacts } from '../lib/export'
import { download, statusLabel, usd, years } from '../lib/format'
import { useStore } from '../store'
import { Badge, CopyButton, ErrorBox } from '../ui'
import { DeployTargets } from './deploy-targets'
import { ApprovalMessages, ApproverChoices, approversFor, EmailNameApproval } from './email-approval'

/**
 * A name is "waiting" until its proof is found: a look that finds nothing (yet) is not a
 * failure, since the owner may not have published the file or record. Only a name that cannot
 * pass with its instructions shows "failed".
 */
const DCV_LABEL: Record<NameValidationView['status'], string> = {
  pending: 'waiting',
  valid: 'valid',
  failed: 'failed'
}

/** The path an order walks (pending → validation_pending → processing → completed), for the timeline. */
const STEPS = ['pending', 'validation_pending', 'processing', 'completed'] as const

function Timeline({ order }: { order: OrderView }): React.JSX.Element {
  const ended = order.status === 'cancelled' || order.status === 'expired'
  const at = STEPS.indexOf(order.status as (typeof STEPS)[number])
  return (
    <ol className="timeline">
      {STEPS.map((s, i) => (
        <li key={s} className={!ended && i < at ? 'done' : !ended && i === at ? 'current' : ''}>
          {s === 'pending' ? 'Ordered, waiting for CSR' : statusLabel(s).replace(/^./, (c) => c.toUpperCase())}
        </li>
      ))}
      {ended ? <li className="current bad">{order.status}</li> : null}
    </ol>
  )
}

function CsrStep({ order }: { order: OrderView }): React.JSX.Element {
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
  const [dcv, setDcv] = useState<DcvMethod>('http')
  const [approvers, setApprovers] = useState<Record<string, string>>({})
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    void loadDraft(order.id)
  }, [order.id, loadDraft])

  // Decoded and checked as you type (or as soon as one is generated).
  useEffect(() => {
    if (!csr.trim()) return void (setDecoded(null), setDecodeError(null))
    let live = true
    decodeCsr(csr)
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
            <label className="grow">
              Names (first is the common name)
              <input aria-label="Names" value={names} onChange={(e) => setNames(e.target.value)} />
            </label>
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
          aria-label="CSR"
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
          <dd>{decoded.names.join(', ')}</dd>
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
      <div className="row">
        <label>
          Validation method
          <select aria-label="Validation method" value={dcv} onChange={(e) => setDcv(e.target.value as DcvMethod)}>
            <option value="http">HTTP file</option>
            <option value="https">HTTPS file</option>
            <option value="dns">DNS CNAME</option>
            <option value="email">Email</option>
          </select>
        </label>
        {dcv === 'email' ? (
          <ApproverChoices names={decoded?.names ?? []} picked={approvers} onPick={setApprovers} />
        ) : null}
      </div>
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
              dcvMethod: dcv,
              approvers: dcv === 'email' ? approversFor(decoded?.names ?? [], approvers) : undefined
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

function Validation({ order }: { order: OrderView }): React.JSX.Element | null {
  const ssl = useStore((s) => s.ssl)
  const loadSsl = useStore((s) => s.loadSsl)
  const changeDcv = useStore((s) => s.changeDcv)
  const resend = useStore((s) => s.resendValidation)
  const [checking, setChecking] = useState(false)
  const [method, setMethod] = useState<DcvMethod>('http')
  const [error, setError] = useState<string | null>(null)
  if (!ssl || ssl.order.id !== order.id) return null
  return (
    <section className="card">
      <div className="card-head">
        <h2>Domain validation</h2>
        <div className="actions">
          <button
            className="btn primary"
            disabled={checking}
            onClick={() => {
              setChecking(true)
              void loadSsl(order.id).finally(() => setChecking(false))
            }}
          >
            {checking ? 'Checking…' : 'Re-check now'}
          </button>
          {ssl.dcvMethod === 'email' ? (
            <button className="btn" onClick={() => void resend(order.id)}>
              Resend email
            </button>
          ) : null}
        </div>
      </div>
      <div className="names">
        {ssl.validation.map((v) => (
          <div key={v.name} className="name-check" data-name={v.name}>
            <div className="name-head">
              <span className="strong">{v.name}</span> <Badge status={`dcv-${v.status}`} label={DCV_LABEL[v.status]} />
              <span className="muted small">
                {v.method.toUpperCase()}
                {v.status === 'valid' && v.validatedAt ? ` · validated ${v.validatedAt} UTC` : ''}
              </span>
            </div>
            {v.status === 'pending' ? (
              <p className="muted small" data-testid="dcv-last-check">
                {v.checkedAt
                  ? `Last checked ${v.checkedAt} UTC: ${v.detail ?? 'nothing found yet'}`
                  : (v.detail ?? 'Not checked yet.')}
              </p>
            ) : null}
            {v.status === 'failed' && v.detail ? <p className="warn small">{v.detail}</p> : null}
            {v.status !== 'valid' && (v.instructions.method === 'http' || v.instructions.method === 'https') ? (
              <dl className="facts compact">
                <dt>URL</dt>
                <dd className="mono break" data-testid="dcv-url">
                  {v.instructions.url} <CopyButton text={v.instructions.url} />
                </dd>
                <dt>File content</dt>
                <dd>
                  <pre className="mono pre" data-testid="dcv-content">
                    {v.instructions.fileContent}
                  </pre>
                  <CopyButton text={v.instructions.fileContent} />
                </dd>
              </dl>
            ) : null}
            {v.status !== 'valid' && v.instructions.method === 'dns' ? (
              <dl className="facts compact">
                <dt>CNAME name</dt>
                <dd className="mono break">
                  {v.instructions.recordName} <CopyButton text={v.instructions.recordName} />
                </dd>
                <dt>CNAME value</dt>
                <dd className="mono break">
                  {v.instructions.recordValue} <CopyButton text={v.instructions.recordValue} />
                </dd>
                <dt>or TXT</dt>
                <dd className="mono break">
                  {v.instructions.txtAlternative} <CopyButton text={v.instructions.txtAlternative} />
                </dd>
              </dl>
            ) : null}
            {v.instructions.method === 'email' ? <EmailNameApproval orderId={order.id} v={v} /> : null}
          </div>
        ))}
      </div>
      {ssl.validation.some((v) => v.method === 'email') ? <ApprovalMessages orderId={order.id} /> : null}
      {order.status === 'validation_pending' ? (
        <div className="row">
          <label>
            Change method
            <select aria-label="Change method" value={method} onChange={(e) => setMethod(e.target.value as DcvMethod)}>
              <option value="http">HTTP file</option>
              <option value="https">HTTPS file</option>
              <option value="dns">DNS CNAME</option>
              <option value="email">Email (admin@ each name; change per name above)</option>
            </select>
          </label>
          <button className="btn" onClick={() => void changeDcv(order.id, method).then(setError)}>
            Change
          </button>
        </div>
      ) : null}
      <ErrorBox text={error} />
    </section>
  )
}

function Certificate({ order }: { order: OrderView }): React.JSX.Element {
  // Only this order's certificate: the store may still hold nothing, never another order's.
  const detail = useStore((s) => (s.certDetail?.orderId === order.id ? s.certDetail : null))
  const exportKey = useStore((s) => s.exportKey)
  const reissue = useStore((s) => s.reissue)
  const [facts, setFacts] = useState<CertificateFacts | null>(null)
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const cert = detail?.certificate ?? null
  useEffect(() => {
    if (!cert) return setFacts(null)
    let live = true
    void certificateFacts(cert.certificatePem).then((f) => live && setFacts(f))
    return () => {
      live = false
    }
  }, [cert])
  const file = order.domain.replace(/^\*\./, 'wildcard.')
  const run = (label: string, work: () => Promise<void>): void => {
    setError(null)
    setBusy(label)
    work()
      .catch((e: unknown) => setError((e as Error).message))
      .finally(() => setBusy(null))
  }
  const key = async (forPfx = false): Promise<string> => {
    const kept = await exportKey(order.id)
    if (!kept) throw new Error('could not export: no private key is kept for this order')
    // A PFX pairs the key with the current certificate; after a reissue from another CSR the
    // kept key belongs to an earlier certificate, and such a PFX would not work on a server.
    if (forPfx && kept.matchesCertificate === false) {
      throw new Error(
        'could not build the PFX: the kept private key belongs to an earlier certificate of this order (it was reissued from another CSR)'
      )
    }
    return kept.pkcs8Pem
  }
  const days = facts ? Math.floor((facts.notAfter.getTime() - Date.now()) / 86_400_000) : null
  return (
    <section className="card">
      <h2>Certificate</h2>
      {cert && facts ? (
        <>
          <div className={`countdown ${days !== null && days < 15 ? 'soon' : ''}`} data-testid="expiry">
            {days !== null && days >= 0 ? `${days} days left` : 'expired'}
            <span className="muted small">
              {' '}
              until {facts.notAfter.toISOString().slice(0, 16).replace('T', ' ')} UTC
            </span>
          </div>
          <dl className="facts" data-testid="cert-facts">
            <dt>Subject</dt>
            <dd className="break">{facts.subject}</dd>
            <dt>Names</dt>
            <dd className="break">{facts.names.join(', ')}</dd>
            <dt>Issuer</dt>
            <dd className="break">{facts.issuer}</dd>
            <dt>Serial</dt>
            <dd className="mono break">{facts.serial}</dd>
            <dt>Key</dt>
            <dd>{facts.keyAlgorithm}</dd>
            <dt>Valid</dt>
            <dd>
              {facts.notBefore.toISOString().slice(0, 10)} – {facts.notAfter.toISOString().slice(0, 10)}
            </dd>
            <dt>SHA-256</dt>
            <dd className="mono break small">{facts.sha256}</dd>
          </dl>
          <div className="actions wrap">
            <button
              className="btn"
              onClick={() => download(`${file}.crt.pem`, cert.certificatePem, 'application/x-pem-file')}
            >
              Certificate
            </button>
            <button
              className="btn"
              onClick={() => download(`${file}.chain.pem`, cert.chainPem, 'application/x-pem-file')}
            >
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
          <div className="row">
            <label className="grow">
              Password for the key or PFX
              <input
                aria-label="Export password"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="new-password"
              />
            </label>
            <button
              className="btn"
              disabled={!order.hasStoredKey || busy !== null}
              onClick={() =>
                run('Encrypting the key…', async () =>
                  download(`${file}.key.pem`, await privateKeyPem(await key(), password), 'application/x-pem-file')
                )
              }
            >
              Private key{password ? ' (encrypted)' : ''}
            </button>
            <button
              className="btn primary"
              disabled={!order.hasStoredKey || !password || busy !== null}
              onClick={() =>
                run('Building the PFX…', async () =>
                  download(
                    `${file}.pfx`,
                    await pfx(await key(true), cert.certificatePem, cert.chainPem, password),
                    'application/x-pkcs12'
                  )
                )
              }
            >
              PFX / PKCS#12
            </button>
          </div>
          {busy ? (
            <div className="progress" role="status">
              <span className="spinner" /> {busy}
            </div>
          ) : null}
          {!order.hasStoredKey ? (
            <p className="muted small">
              No private key is kept for this order (its CSR was made elsewhere), so the key and PFX exports are off.
            </p>
          ) : null}
          <ErrorBox text={error} />
          {detail && detail.history.length > 0 ? (
            <>
              <h2 className="sub">Issued certificates</h2>
              <ul className="plain-list" data-testid="history">
                {detail.history.map((h) => (
                  <li key={h.id}>
                    <span className="mono small">{h.serial.slice(0, 16)}…</span> {h.validFrom} – {h.validTill}{' '}
                    <span className="badge">{h.reason.replace('_', ' ')}</span>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {order.status === 'completed' ? (
            <div className="actions wrap">
              <button
                className="btn"
                disabled={busy !== null}
                onClick={() => void reissue({ orderId: order.id }).then((e) => e && setError(e))}
              >
                Reissue with the same CSR
              </button>
              <button
                className="btn"
                disabled={busy !== null}
                onClick={() =>
                  run('Generating a new key and reissuing…', async () => {
                    const names = cert.names.length > 0 ? cert.names : [order.domain]
                    const g = await generateCsr('ECDSA-P256', names)
                    // The key goes with the request: the core keeps it together with the new
                    // certificate, before that certificate's deploys look for it.
                    const e = await reissue({ orderId: order.id, csr: g.csrPem, privateKeyPem: g.privateKeyPem })
                    if (e) throw new Error(e)
                  })
                }
              >
                Reissue with a new key (ECDSA P-256)
              </button>
            </div>
          ) : null}
        </>
      ) : (
        <>
          <p className="muted">Not issued yet. It is issued once the CSR is submitted and every name is validated.</p>
          <div className="actions wrap">
            <button
              className="btn"
              disabled={!order.hasStoredKey}
              onClick={() =>
                run('Exporting…', async () => download(`${file}.key.pem`, await key(), 'application/x-pem-file'))
              }
            >
              Private key (PKCS#8 PEM)
            </button>
          </div>
          <ErrorBox text={error} />
        </>
      )}
    </section>
  )
}

export function OrderDetail({ id }: { id: number }): React.JSX.Element {
  const order = useStore((s) => s.order)
  const error = useStore((s) => s.orderError)
  const lastRefund = useStore((s) => s.lastRefund)
  const load = useStore((s) => s.loadOrder)
  const loadSsl = useStore((s) => s.loadSsl)
  const cancel = useStore((s) => s.cancelOrder)
  const pay = useStore((s) => s.payOrder)
  const go = useStore((s) => s.go)
  const [confirming, setConfirming] = useState(false)
  useEffect(() => {
    void load(id)
  }, [id, load])
  const status = order?.id === id ? order.status : null
  // Orders past the CSR step have a live validation status and maybe a certificate.
  useEffect(() => {
    if (status && !['pending', 'cancelled'].includes(status)) void loadSsl(id)
  }, [id, status, loadSsl])
  if (error) return <ErrorBox text={error} />
  if (!order || order.id !== id) return <p className="muted">Loading the order…</p>
  const cancellable = order.status === 'pending' || order.status === 'processing'
  return (
    <div className="screen">
      <header className="screen-head">
        <div>
          <a className="muted small" onClick={() => go({ name: 'orders' })}>
            ← Orders
          </a>
          <h1>
            {order.domain || order.productName} <Badge status={order.status} />
          </h1>
          <div className="muted">
            <span data-testid="order-number">{order.orderNumber}</span>{' '}
            <CopyButton text={order.orderNumber} label="Copy number" /> · {order.brand} {order.productName} ·{' '}
            {years(order.periodMonths)}
          </div>
        </div>
        <div className="actions">
          {order.paymentStatus === 'unpaid' && order.status !== 'cancelled' ? (
            <button className="btn" onClick={() => void pay(order.id)}>
              Pay {usd(order.total)} from credit
            </button>
          ) : null}
          {cancellable && !confirming ? (
            <button className="btn danger" onClick={() => setConfirming(true)}>
              Cancel order
            </button>
          ) : null}
        </div>
      </header>
      {confirming && cancellable ? (
        <div className="confirm" role="dialog" aria-label="Cancel order">
          <p>
            Cancel {order.orderNumber}?{' '}
            {order.paymentStatus === 'paid'
              ? `${usd(order.total)} goes back to the credit balance.`
              : 'Its unpaid invoice is cancelled.'}
          </p>
          <button className="btn danger" onClick={() => void cancel(order.id).then(() => setConfirming(false))}>
            Yes, cancel and refund
          </button>
          <button className="btn" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      ) : null}
      {order.status === 'cancelled' && lastRefund ? (
        <div className="ok-box" role="status">
          Refunded {usd(lastRefund.refunded)}; the balance is now {usd(lastRefund.newBalance)}.
        </div>
      ) : null}
      <Timeline order={order} />
      <div className="grid-2">
        <section className="card">
          <h2>Order</h2>
          <dl className="facts">
            <dt>Payment</dt>
            <dd>
              <Badge status={order.paymentStatus} /> {order.invoiceNumber ? `invoice ${order.invoiceNumber}` : ''}
            </dd>
            <dt>Price</dt>
            <dd>
              {usd(order.basePrice)} + SANs {usd(order.sanTotal)} − discount {usd(order.discountAmount)} ={' '}
              <b>{usd(order.total)}</b>
            </dd>
            <dt>Subscription ends</dt>
            <dd>{order.purchaseEndDate}</dd>
            <dt>Automatic reissue</dt>
            <dd>{order.autoReissue ? `yes, next ${order.nextReissueAt ?? '—'}` : 'no (code signing)'}</dd>
            <dt>Max validity</dt>
            <dd>{order.maxValidityDays} days</dd>
            {order.statusNote ? (
              <>
                <dt>Note</dt>
                <dd>{order.statusNote}</dd>
              </>
            ) : null}
          </dl>
        </section>
        {/* Keyed by order: a typed export password or an error never carries over to another order. */}
        <Certificate key={order.id} order={order} />
      </div>
      {order.status === 'pending' || order.status === 'pending_configuration' ? (
        <CsrStep key={`csr-${order.id}`} order={order} />
      ) : null}
      {order.status === 'validation_pending' || order.status === 'processing' || order.status === 'completed' ? (
        <Validation key={`validation-${order.id}`} order={order} />
      ) : null}
      {order.status !== 'cancelled' ? <DeployTargets key={`deploy-${order.id}`} order={order} /> : null}
    </div>
  )
}
