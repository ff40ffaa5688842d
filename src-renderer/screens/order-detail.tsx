import { useEffect, useState } from 'react'
import type { DcvMethod, OrderView } from '../../src-preload/contract'
import { decodeCsr, generateCsr, KEY_TYPES, type DecodedCsr, type KeyType } from '../lib/csr'
import { download, statusLabel, usd, years } from '../lib/format'
import { useStore } from '../store'
import { Badge, CopyButton, ErrorBox } from '../ui'

/** The path an order walks (design page, "Order states"), for the timeline. */
const STEPS = ['pending', 'validation_pending', 'processing', 'completed'] as const

function Timeline({ order }: { order: OrderView }): React.JSX.Element {
  const ended = order.status === 'cancelled' || order.status === 'expired'
  const at = STEPS.indexOf(order.status as (typeof STEPS)[number])
  return (
    <ol className="timeline">
      {STEPS.map((s, i) => (
        <li key={s} className={!ended && i < at ? 'done' : !ended && i === at ? 'current' : ''}>
          {s === 'pending' ? 'ordered, waiting for CSR' : statusLabel(s)}
        </li>
      ))}
      {ended ? <li className="current bad">{order.status}</li> : null}
    </ol>
  )
}

function CsrStep({ order }: { order: OrderView }): React.JSX.Element {
  const storeKey = useStore((s) => s.storeKey)
  const configure = useStore((s) => s.configure)
  const [mode, setMode] = useState<'generate' | 'paste'>('generate')
  const [keyType, setKeyType] = useState<KeyType>('ECDSA-P256')
  const [names, setNames] = useState(order.domain)
  const [csr, setCsr] = useState('')
  const [decoded, setDecoded] = useState<DecodedCsr | null>(null)
  const [decodeError, setDecodeError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [elapsed, setElapsed] = useState(0)
  const [dcv, setDcv] = useState<DcvMethod>('http')
  const [approver, setApprover] = useState(`admin@${order.domain.replace(/^\*\./, '')}`)
  const [error, setError] = useState<string | null>(null)

  // Decoded and checked as you type (or as soon as one is generated).
  useEffect(() => {
    if (!csr.trim()) return void (setDecoded(null), setDecodeError(null))
    let live = true
    decodeCsr(csr)
      .then((d) => live && (setDecoded(d), setDecodeError(d.signatureValid ? null : 'the CSR signature does not verify')))
      .catch((e: unknown) => live && (setDecoded(null), setDecodeError((e as Error).message)))
    return () => {
      live = false
    }
  }, [csr])

  const generate = async (): Promise<void> => {
    setError(null)
    const list = names.split(/[\s,]+/).map((n) => n.trim().toLowerCase()).filter(Boolean)
    const started = performance.now()
    setBusy(`Generating a ${keyType} key pair${keyType === 'RSA-4096' ? ' (RSA 4096 can take several seconds)' : ''}…`)
    const tick = setInterval(() => setElapsed(Math.round((performance.now() - started) / 1000)), 250)
    try {
      const g = await generateCsr(keyType, list)
      // Kept (encrypted) in the main process before anything else, so it is never lost.
      if (await storeKey(order.id, g.privateKeyPem)) setCsr(g.csrPem)
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
        <button type="button" className={mode === 'generate' ? 'tab active' : 'tab'} onClick={() => setMode('generate')}>
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
          {order.hasStoredKey ? <p className="ok-text">The private key is kept on this machine, encrypted with a key from the OS keychain.</p> : null}
        </div>
      ) : null}
      <label className="block">
        CSR (PEM)
        <textarea aria-label="CSR" rows={mode === 'paste' ? 8 : 4} value={csr} onChange={(e) => setCsr(e.target.value)} className="mono" />
      </label>
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
          <label className="grow">
            Approver
            <select aria-label="Approver" value={approver} onChange={(e) => setApprover(e.target.value)}>
              {['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster'].map((l) => {
                const a = `${l}@${order.domain.replace(/^\*\./, '')}`
                return <option key={a}>{a}</option>
              })}
            </select>
          </label>
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
            void configure({ orderId: order.id, csr, dcvMethod: dcv, approverEmail: dcv === 'email' ? approver : undefined }).then((e) => {
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

function Certificate({ order }: { order: OrderView }): React.JSX.Element {
  const exportKey = useStore((s) => s.exportKey)
  return (
    <section className="card">
      <h2>Certificate</h2>
      {order.certValidTill ? (
        <dl className="facts">
          <dt>Valid</dt>
          <dd>
            {order.certValidFrom} – {order.certValidTill}
          </dd>
          <dt>Reissues</dt>
          <dd>{order.reissueCount}</dd>
        </dl>
      ) : (
        <p className="muted">Not issued yet. It is issued once the CSR is submitted and the domain is validated.</p>
      )}
      <div className="actions wrap">
        <button className="btn" disabled={!order.hasStoredKey} onClick={() => void exportKey(order.id).then((pem) => pem && download(`${order.domain.replace(/^\*\./, 'wildcard.')}.key`, pem, 'application/x-pem-file'))}>
          Private key (PKCS#8 PEM)
        </button>
      </div>
      {!order.hasStoredKey ? <p className="muted small">No private key is kept for this order: it was not generated in CertDesk.</p> : null}
    </section>
  )
}

export function OrderDetail({ id }: { id: number }): React.JSX.Element {
  const order = useStore((s) => s.order)
  const error = useStore((s) => s.orderError)
  const lastRefund = useStore((s) => s.lastRefund)
  const load = useStore((s) => s.loadOrder)
  const cancel = useStore((s) => s.cancelOrder)
  const pay = useStore((s) => s.payOrder)
  const go = useStore((s) => s.go)
  const [confirming, setConfirming] = useState(false)
  useEffect(() => {
    void load(id)
  }, [id, load])
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
            <span data-testid="order-number">{order.orderNumber}</span> <CopyButton text={order.orderNumber} label="Copy number" /> · {order.brand} {order.productName} · {years(order.periodMonths)}
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
            {order.paymentStatus === 'paid' ? `${usd(order.total)} goes back to the credit balance.` : 'Its unpaid invoice is cancelled.'}
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
              {usd(order.basePrice)} + SANs {usd(order.sanTotal)} − discount {usd(order.discountAmount)} = <b>{usd(order.total)}</b>
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
        <Certificate order={order} />
      </div>
      {order.status === 'pending' || order.status === 'pending_configuration' ? <CsrStep key={order.id} order={order} /> : null}
    </div>
  )
}
