/** Domain validation of an order: each name's instructions and live status, re-check, method change. */
import { useState } from 'react'
import type { DcvMethod, NameValidationView, OrderView } from '../../src-preload/contract'
import { useCan, useStore } from '../store'
import { Badge, Can, DomainName, ErrorBox } from '../ui'
import { ApprovalMessages, EmailNameApproval } from './email-approval'
import { NameMethod, validationSummary } from './name-method'
import { CancelValidation, DnsInstructions, HttpInstructions } from './validation-instructions'

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

export function ValidationStep({ order }: { order: OrderView }): React.JSX.Element | null {
  const ssl = useStore((s) => s.ssl)
  const loadSsl = useStore((s) => s.loadSsl)
  const changeDcv = useStore((s) => s.changeDcv)
  const resend = useStore((s) => s.resendValidation)
  const [checking, setChecking] = useState(false)
  const [method, setMethod] = useState<DcvMethod>('http')
  const [error, setError] = useState<string | null>(null)
  // Without the right to run checks, the button reads the status again (order.ts, loadSsl).
  const mayCheck = useCan('sslStatus')
  const mayChangeName = useCan('changeNameDcv')
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
            {checking ? 'Checking…' : mayCheck ? 'Re-check now' : 'Refresh'}
          </button>
          <Can m="resendValidation">
            {ssl.validation.some((v) => v.method === 'email' && v.status !== 'valid') ? (
              <button className="btn" onClick={() => void resend(order.id)}>
                Resend email
              </button>
            ) : null}
          </Can>
        </div>
      </div>
      {ssl.validation.length > 0 ? (
        <p className="muted small" data-testid="dcv-summary">
          {validationSummary(ssl.validation)}
        </p>
      ) : null}
      <div className="names">
        {ssl.validation.map((v) => (
          <div key={v.name} className="name-check" data-name={v.name}>
            <div className="name-head">
              <span className="strong">
                <DomainName name={v.name} full />
              </span>{' '}
              <Badge status={`dcv-${v.status}`} label={DCV_LABEL[v.status]} />
              {order.status === 'validation_pending' && v.status !== 'valid' && mayChangeName ? (
                <NameMethod orderId={order.id} v={v} />
              ) : (
                <span className="muted small" data-testid="dcv-method">
                  {v.method.toUpperCase()}
                  {v.status === 'valid' && v.validatedAt ? ` · validated ${v.validatedAt} UTC` : ''}
                </span>
              )}
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
              <HttpInstructions name={v.name} instructions={v.instructions} />
            ) : null}
            {v.status !== 'valid' && v.instructions.method === 'dns' ? (
              <DnsInstructions name={v.name} instructions={v.instructions} />
            ) : null}
            {v.instructions.method === 'email' ? <EmailNameApproval orderId={order.id} v={v} /> : null}
          </div>
        ))}
      </div>
      {ssl.validation.some((v) => v.method === 'email') ? <ApprovalMessages orderId={order.id} /> : null}
      {order.status === 'validation_pending' ? (
        <Can m="cancelValidation">
          <CancelValidation order={order} />
        </Can>
      ) : null}
      {order.status === 'validation_pending' ? (
        <Can m="changeDcv">
          <div className="row">
            <label>
              Change method
              <select
                aria-label="Change method"
                value={method}
                onChange={(e) => setMethod(e.target.value as DcvMethod)}
              >
                <option value="http">HTTP file</option>
                <option value="https">HTTPS file</option>
                <option value="dns">DNS CNAME</option>
                <option value="email">Email (admin@ each name; change per name above)</option>
              </select>
            </label>
            <button className="btn" type="button" onClick={() => void changeDcv(order.id, method).then(setError)}>
              Change
            </button>
          </div>
        </Can>
      ) : null}
      <ErrorBox text={error} />
    </section>
  )
}
