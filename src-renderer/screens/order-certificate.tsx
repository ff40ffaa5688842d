/** The order's certificate: what it says (decoded from the PEM), its downloads, history and reissue. */
import { useEffect, useState } from 'react'
import type { CertificateView, OrderView } from '../../src-preload/contract'
import type { CertificateFacts } from '../lib/export'
import { useCan, useStore } from '../store'
import { DomainNames, ErrorBox } from '../ui'
import { CertificateDownloads, exportFileName, type RunExport } from './order-downloads'
import { KeyExport } from './key-export'
import { ReissueActions } from './order-reissue'
import { REASON_SHORT, RevokeDialog } from './revoke-dialog'

export function OrderCertificate({ order }: { order: OrderView }): React.JSX.Element {
  // Only this order's certificate: the store may still hold nothing, never another order's.
  const detail = useStore((s) => (s.certDetail?.orderId === order.id ? s.certDetail : null))
  const [password, setPassword] = useState('')
  const [facts, setFacts] = useState<CertificateFacts | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [revoking, setRevoking] = useState<CertificateView | null>(null)
  const mayRevoke = useCan('revokeCertificate')
  const cert = detail?.certificate ?? null
  useEffect(() => {
    if (!cert) return setFacts(null)
    let live = true
    // Decoding loads the x509 code on this screen only (lib/export.ts pulls in ASN.1).
    void import('../lib/export').then((m) => m.certificateFacts(cert.certificatePem)).then((f) => live && setFacts(f))
    return () => {
      live = false
    }
  }, [cert])
  const run: RunExport = (label, work) => {
    setError(null)
    setBusy(label)
    work()
      .catch((e: unknown) => setError((e as Error).message))
      .finally(() => setBusy(null))
  }
  const days = facts ? Math.floor((facts.notAfter.getTime() - Date.now()) / 86_400_000) : null
  return (
    <section className="card">
      <h2>Certificate</h2>
      {cert && facts ? (
        <>
          {cert.revokedAt ? (
            <div className="revoked-box" role="status" data-testid="cert-revoked">
              Revoked on {cert.revokedAt} UTC
              {cert.revocationReason ? ` (${REASON_SHORT[cert.revocationReason]})` : ''}. Do not install it;{' '}
              {order.status === 'completed' ? 'reissue to replace it.' : 'it is kept as history.'}
            </div>
          ) : null}
          <div className={`countdown ${days !== null && days < 15 ? 'soon' : ''}`} data-testid="expiry">
            {cert.revokedAt ? 'revoked' : days !== null && days >= 0 ? `${days} days left` : 'expired'}
            <span className="muted small">
              {' '}
              until {facts.notAfter.toISOString().slice(0, 16).replace('T', ' ')} UTC
            </span>
          </div>
          <dl className="facts" data-testid="cert-facts">
            <dt>Subject</dt>
            <dd className="break">{facts.subject}</dd>
            <dt>Names</dt>
            <dd className="break">
              <DomainNames names={facts.names} />
            </dd>
            <dt>Issuer</dt>
            <dd className="break">{facts.issuer}</dd>
            <dt>Serial</dt>
            <dd className="mono break">{facts.serial}</dd>
            <dt>Key</dt>
            <dd>{facts.keyAlgorithm}</dd>
            <dt>Valid</dt>
            <dd>
              <span className="nowrap">{facts.notBefore.toISOString().slice(0, 10)}</span> –{' '}
              <span className="nowrap">{facts.notAfter.toISOString().slice(0, 10)}</span>
            </dd>
            <dt>SHA-256</dt>
            <dd className="mono break small">{facts.sha256}</dd>
            {facts.crlUrls.length > 0 ? (
              <>
                <dt>CRL</dt>
                <dd className="mono break small">{facts.crlUrls.join(', ')}</dd>
              </>
            ) : null}
          </dl>
          <CertificateDownloads
            order={order}
            cert={cert}
            password={password}
            setPassword={setPassword}
            busy={busy}
            run={run}
          />
          <ErrorBox text={error} />
          {detail && detail.history.length > 0 ? (
            <>
              <h2 className="sub">Issued certificates</h2>
              <ul className="plain-list" data-testid="history">
                {detail.history.map((h) => (
                  <li key={h.id}>
                    <span className="mono small">{h.serial.slice(0, 16)}…</span> {h.validFrom} – {h.validTill}{' '}
                    <span className="badge">{h.reason.replace('_', ' ')}</span>
                    {h.revokedAt ? (
                      <>
                        {' '}
                        <span className="badge badge-revoked">
                          revoked{h.revocationReason ? `: ${REASON_SHORT[h.revocationReason]}` : ''}
                        </span>
                      </>
                    ) : mayRevoke &&
                      h.id !== cert.id &&
                      Date.parse(`${h.validTill.replace(' ', 'T')}Z`) > Date.now() ? (
                      // An earlier certificate still valid (a reissue revokes nothing): revocable here.
                      <>
                        {' '}
                        <button
                          type="button"
                          className="btn small danger"
                          aria-label={`Revoke… earlier certificate ${h.serial.slice(0, 16)}`}
                          onClick={() => setRevoking(h)}
                        >
                          Revoke…
                        </button>
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {order.status === 'completed' ? <ReissueActions order={order} cert={cert} /> : null}
          {revoking ? (
            <RevokeDialog order={order} cert={revoking} current={false} onClose={() => setRevoking(null)} />
          ) : null}
        </>
      ) : (
        <>
          <p className="muted">Not issued yet. It is issued once the CSR is submitted and every name is validated.</p>
          <KeyExport
            order={order}
            file={exportFileName(order)}
            password={password}
            setPassword={setPassword}
            busy={busy}
            run={run}
            withPfxNote={false}
          />
          <ErrorBox text={error} />
        </>
      )}
    </section>
  )
}
