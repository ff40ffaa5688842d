/**
 * Email validation on the order page, name by name (CA/B Baseline Requirements §3.2.2.4.4,
 * constructed email to the domain contact): the approver mailbox of every name (the name or a
 * parent of it up to its registrable domain), changeable while the name waits; the message
 * CertDesk kept for it; and the approval code that validates that name.
 */
import { useEffect, useState } from 'react'
import type { NameValidationView } from '../../src-preload/contract'
import { useCan, useStore } from '../store'
import { ErrorBox } from '../ui'

/** Inside a name's validation box: its approver, its message, and its approval code. */
export function EmailNameApproval({
  orderId,
  v
}: {
  orderId: number
  v: NameValidationView
}): React.JSX.Element | null {
  const outbox = useStore((s) => s.outbox)
  const approve = useStore((s) => s.approveEmail)
  const chooseApprover = useStore((s) => s.chooseApprover)
  const approver = v.instructions.method === 'email' ? v.instructions.approverEmail : ''
  const [choice, setChoice] = useState(approver)
  const [code, setCode] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const mayApprove = useCan('approveEmail')
  useEffect(() => setChoice(approver), [approver])
  if (v.instructions.method !== 'email') return null
  if (v.status === 'valid') {
    return (
      <p className="ok-text small" data-testid="email-approved">
        Approved through {approver}
        {v.validatedAt ? ` on ${v.validatedAt}` : ''}.
      </p>
    )
  }
  // Approval codes and the choice of mailbox are for those who work on orders.
  if (!mayApprove) return <p className="muted small">Waiting for approval through {approver}.</p>
  const sentAt = v.instructions.sentAt
  // The outbox is newest first: the first message for this name carries its current code.
  const message = outbox.find((m) => m.name === v.name && m.to === approver)
  const choices = [...v.instructions.approverChoices]
  if (approver && !choices.includes(approver)) choices.unshift(approver)
  return (
    <div className="email-name">
      <p className="muted">
        Approval email to {approver}
        {sentAt ? `, sent ${sentAt}` : ', not sent yet'}.
      </p>
      <div className="row">
        <label className="grow">
          Approver for {v.name}
          <select aria-label={`Approver for ${v.name}`} value={choice} onChange={(e) => setChoice(e.target.value)}>
            {choices.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="btn"
          disabled={busy || choice === approver}
          onClick={() => {
            setBusy(true)
            setError(null)
            void chooseApprover(orderId, v.name, choice).then((e) => {
              setBusy(false)
              setError(e)
            })
          }}
        >
          Change mailbox
        </button>
      </div>
      {message ? (
        <details className="approval-message">
          <summary>
            Message to {message.to} ({message.delivery}, {message.createdAt})
          </summary>
          <pre className="mono pre">{message.body}</pre>
        </details>
      ) : null}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault()
          setBusy(true)
          void approve(orderId, code, v.name).then((err) => {
            setBusy(false)
            setError(err)
            if (!err) setCode('')
          })
        }}
      >
        <label className="grow">
          Approval code for {v.name}
          <input
            aria-label={`Approval code for ${v.name}`}
            value={code}
            onChange={(e) => setCode(e.target.value)}
            autoComplete="off"
          />
        </label>
        <button className="btn" type="submit" aria-label={`Approve ${v.name}`} disabled={busy || !code.trim()}>
          Approve
        </button>
      </form>
      <ErrorBox text={error} />
    </div>
  )
}

/** Every approval message CertDesk kept for the order (the outbox without an SMTP relay, or copies). */
export function ApprovalMessages({ orderId }: { orderId: number }): React.JSX.Element | null {
  const outbox = useStore((s) => s.outbox)
  const loadOutbox = useStore((s) => s.loadOutbox)
  useEffect(() => {
    void loadOutbox(orderId)
  }, [orderId, loadOutbox])
  if (outbox.length === 0) return null
  return (
    <div className="email-approval">
      <details>
        <summary>
          Approval messages ({outbox.length}) · latest to {outbox[0].to}, {outbox[0].delivery}
        </summary>
        <pre className="mono pre">{outbox[0].body}</pre>
      </details>
    </div>
  )
}
