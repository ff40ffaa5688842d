/**
 * Revoking a certificate, in a dialog: a reason from the subset the Baseline Requirements allow
 * for subscriber certificates (RFC 5280 §5.3.1 names, BR §4.9.1.1), and what will happen before
 * it does: the local CA lists it on its CRL at once, an external ACME CA is asked to revoke it
 * (RFC 8555 §7.6); it is never deployed again, and it cannot be undone.
 */
import { useState } from 'react'
import type { CertificateView, OrderView, RevocationReason } from '../../src-preload/contract'
import { REVOCATION_REASONS } from '../../src-preload/channels'
import { Modal } from '../modal'
import { useStore } from '../store'
import { ErrorBox } from '../ui'

/** Each reason as a person would choose it. */
export const REASON_LABELS: Record<RevocationReason, string> = {
  unspecified: 'No reason given',
  keyCompromise: 'Key compromise: the private key was lost, stolen or exposed',
  affiliationChanged: 'Affiliation changed: the name or organisation in it changed',
  superseded: 'Superseded: a new certificate replaces it',
  cessationOfOperation: 'Cessation of operation: the domain or service is no longer used',
  privilegeWithdrawn: 'Privilege withdrawn: the customer broke the terms of use'
}

/** Short names for badges and lists. */
export const REASON_SHORT: Record<RevocationReason, string> = {
  unspecified: 'no reason given',
  keyCompromise: 'key compromise',
  affiliationChanged: 'affiliation changed',
  superseded: 'superseded',
  cessationOfOperation: 'cessation of operation',
  privilegeWithdrawn: 'privilege withdrawn'
}

export function RevokeDialog({
  order,
  cert,
  current = true,
  onClose
}: {
  order: OrderView
  cert: CertificateView
  /** The order's current certificate (else an earlier one, replaced already). */
  current?: boolean
  onClose: () => void
}): React.JSX.Element {
  const revoke = useStore((s) => s.revokeCertificate)
  const [reason, setReason] = useState<RevocationReason>('superseded')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const local = cert.issuer === 'local-ca'
  const acmeCa = cert.issuer.startsWith('acme:') ? cert.issuer.slice(5) : null
  return (
    <Modal title="Revoke certificate" onClose={onClose} testId="revoke-dialog">
      <p>
        Certificate <span className="mono break">{cert.serial}</span> for{' '}
        <span className="mono">{cert.names.join(', ') || order.domain}</span>, valid until {cert.validTill.slice(0, 10)}
        .
      </p>
      <fieldset className="radio-list">
        <legend>Reason</legend>
        {REVOCATION_REASONS.map((r) => (
          <label key={r}>
            <input type="radio" name="revoke-reason" checked={reason === r} onChange={() => setReason(r)} />{' '}
            {REASON_LABELS[r]}
          </label>
        ))}
      </fieldset>
      <section className="plan" aria-label="What will happen" data-testid="revoke-plan">
        <h3>What will happen</h3>
        <ul>
          <li>
            {local
              ? "CertDesk's local CA lists it on its certificate revocation list at once, the list this certificate names; clients that check revocation stop trusting it."
              : acmeCa
                ? `CertDesk asks the ACME CA at ${acmeCa} to revoke it (RFC 8555); once the CA agrees, clients that check revocation stop trusting it.`
                : `It was issued by ${cert.issuer}; CertDesk cannot revoke it.`}
          </li>
          <li>It is never deployed again; deploys still waiting for it are stopped.</li>
          <li>
            {!current
              ? 'The current certificate of the order is not touched.'
              : reason === 'keyCompromise'
                ? 'Reissue with a new key to replace it: a new certificate with the same key would be as exposed.'
                : `The order keeps its subscription until ${order.purchaseEndDate}: reissue to replace it. Automatic reissue stops until you do.`}
          </li>
          <li className="danger-text">A revocation cannot be undone.</li>
        </ul>
      </section>
      <ErrorBox text={error} />
      <div className="actions">
        <button
          type="button"
          className="btn danger"
          disabled={busy}
          onClick={() => {
            setBusy(true)
            setError(null)
            void revoke(order.id, { certificateId: cert.id, reason }).then((e) => {
              setBusy(false)
              if (e) setError(e)
              else onClose()
            })
          }}
        >
          {busy ? 'Revoking…' : 'Revoke certificate'}
        </button>
        <button type="button" className="btn" onClick={onClose}>
          Keep it
        </button>
      </div>
    </Modal>
  )
}
