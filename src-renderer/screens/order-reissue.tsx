/**
 * Manual reissue of a completed order, in a dialog: with the current key (the same CSR, or a new
 * CSR from the kept key when the names change), with a new key of a chosen type generated here,
 * or with a pasted CSR; names added or removed within what the order paid for; and, before
 * anything happens, what will happen (core/certificates/reissue-plan.ts): the new certificate,
 * the names validated again, the deploys that will run, and what stays valid.
 */
import { useEffect, useState } from 'react'
import type { CertificateView, OrderView, ReissuePlanView } from '../../src-preload/contract'
import type { DecodedCsr } from '../lib/csr'
import { parseDomainInput } from '../lib/domain-input'
import { METHOD_LABELS } from '../lib/dcv-methods'
import { KEY_TYPES, type KeyType } from '../lib/key-types'
import { Modal } from '../modal'
import { useCan, useStore } from '../store'
import { DomainName, ErrorBox } from '../ui'
import { RevokeDialog } from './revoke-dialog'

type KeyChoice = 'same' | 'new' | 'csr'

const KEY_LABELS: Record<KeyType, string> = {
  'RSA-2048': 'RSA 2048',
  'RSA-3072': 'RSA 3072',
  'RSA-4096': 'RSA 4096 (slow to generate)',
  'ECDSA-P256': 'ECDSA P-256',
  'ECDSA-P384': 'ECDSA P-384'
}

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && a.every((n) => b.includes(n))

const day = (ts: string): string => ts.slice(0, 10)

export function ReissueActions({ order, cert }: { order: OrderView; cert: CertificateView }): React.JSX.Element | null {
  const [open, setOpen] = useState<'reissue' | 'revoke' | null>(null)
  const mayReissue = useCan('reissue')
  const mayRevoke = useCan('revokeCertificate')
  if (!mayReissue && !mayRevoke) return null
  return (
    <div className="actions wrap">
      {mayReissue ? (
        <button className="btn" type="button" onClick={() => setOpen('reissue')}>
          Reissue…
        </button>
      ) : null}
      {cert.revokedAt || !mayRevoke ? null : (
        <button className="btn danger" type="button" onClick={() => setOpen('revoke')}>
          Revoke…
        </button>
      )}
      {open === 'reissue' ? <ReissueDialog order={order} cert={cert} onClose={() => setOpen(null)} /> : null}
      {open === 'revoke' ? <RevokeDialog order={order} cert={cert} onClose={() => setOpen(null)} /> : null}
    </div>
  )
}

function ReissueDialog({
  order,
  cert,
  onClose
}: {
  order: OrderView
  cert: CertificateView
  onClose: () => void
}): React.JSX.Element {
  const reissue = useStore((s) => s.reissue)
  const loadPlan = useStore((s) => s.reissuePlan)
  const current = cert.names.length > 0 ? cert.names : [order.domain]
  const [keyChoice, setKeyChoice] = useState<KeyChoice>('same')
  const [keyType, setKeyType] = useState<KeyType>('ECDSA-P256')
  const [names, setNames] = useState<string[]>(current)
  const [adding, setAdding] = useState('')
  const [pasted, setPasted] = useState('')
  const [decoded, setDecoded] = useState<DecodedCsr | null>(null)
  const [plan, setPlan] = useState<ReissuePlanView | null>(null)
  const [planError, setPlanError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)

  // A pasted CSR brings its own names; otherwise the names edited here.
  useEffect(() => {
    if (keyChoice !== 'csr' || !pasted.trim()) return setDecoded(null)
    let live = true
    import('../lib/csr')
      .then((m) => m.decodeCsr(pasted))
      .then(
        (d) => live && (setDecoded(d), setError(d.signatureValid ? null : 'the CSR signature does not verify')),
        (e: unknown) => live && (setDecoded(null), setError((e as Error).message))
      )
    return () => {
      live = false
    }
  }, [keyChoice, pasted])
  const planned = keyChoice === 'csr' ? (decoded?.names ?? null) : names
  const key = planned?.join(' ') ?? ''
  useEffect(() => {
    if (!key) return setPlan(null)
    let live = true
    void loadPlan(order.id, key.split(' ')).then((r) => {
      if (!live) return
      if ('plan' in r) {
        setPlan(r.plan)
        setPlanError(null)
      } else {
        setPlan(null)
        setPlanError(r.error)
      }
    })
    return () => {
      live = false
    }
  }, [key, order.id, loadPlan])

  const namesChanged = !sameSet(names, current)
  // The same key for other names needs that key here, to sign a CSR for them.
  const keyMissing = keyChoice === 'same' && namesChanged && !order.hasStoredKey
  const ready = plan !== null && !keyMissing && busy === null && (keyChoice !== 'csr' || decoded?.signatureValid)

  // A name typed as people write it (bücher.example) joins as the A-label certificates carry.
  const add = (): void => {
    const n = parseDomainInput(adding).ascii
    if (n && !names.includes(n)) setNames([...names, n])
    setAdding('')
  }

  const confirm = async (): Promise<void> => {
    setError(null)
    let failed: string | null
    if (keyChoice === 'new') {
      setBusy(`Generating a ${KEY_LABELS[keyType]} key and its CSR…`)
      try {
        const { generateCsr } = await import('../lib/csr')
        const g = await generateCsr(keyType, names)
        setBusy('Reissuing…')
        // The key goes with the request: the core keeps it with the new certificate, before
        // that certificate's deploys look for it.
        failed = await reissue({ orderId: order.id, csr: g.csrPem, privateKeyPem: g.privateKeyPem })
      } catch (e) {
        failed = (e as Error).message
      }
    } else {
      setBusy('Reissuing…')
      failed = await reissue(
        keyChoice === 'csr'
          ? { orderId: order.id, csr: pasted }
          : namesChanged
            ? { orderId: order.id, names }
            : { orderId: order.id }
      )
    }
    setBusy(null)
    if (failed) setError(failed)
    else onClose()
  }

  const toValidate = plan?.validation.filter((v) => !v.reused) ?? []
  return (
    <Modal title="Reissue certificate" onClose={onClose} testId="reissue-dialog">
      <fieldset className="radio-row">
        <legend>Key</legend>
        <label>
          <input type="radio" name="reissue-key" checked={keyChoice === 'same'} onChange={() => setKeyChoice('same')} />{' '}
          Keep the current key
        </label>
        <label>
          <input type="radio" name="reissue-key" checked={keyChoice === 'new'} onChange={() => setKeyChoice('new')} />{' '}
          New key
        </label>
        <label>
          <input type="radio" name="reissue-key" checked={keyChoice === 'csr'} onChange={() => setKeyChoice('csr')} />{' '}
          Paste a CSR
        </label>
      </fieldset>
      {keyChoice === 'new' ? (
        <label>
          New key type
          <select aria-label="New key type" value={keyType} onChange={(e) => setKeyType(e.target.value as KeyType)}>
            {KEY_TYPES.map((k) => (
              <option key={k} value={k}>
                {KEY_LABELS[k]}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {keyChoice === 'csr' ? (
        <label className="block">
          CSR (PEM)
          <textarea rows={6} className="mono" value={pasted} onChange={(e) => setPasted(e.target.value)} />
        </label>
      ) : (
        <fieldset>
          <legend>Names</legend>
          <ul className="name-list" aria-label="Names of the new certificate">
            {names.map((n) => (
              <li key={n}>
                <span className="mono">
                  <DomainName name={n} />
                </span>
                {n === order.domain ? (
                  <span className="muted small">order domain</span>
                ) : (
                  <button
                    type="button"
                    className="btn small"
                    aria-label={`Remove ${n}`}
                    onClick={() => setNames(names.filter((x) => x !== n))}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault()
              add()
            }}
          >
            <label className="grow">
              Add a name
              <input value={adding} onChange={(e) => setAdding(e.target.value)} placeholder="shop.example.com" />
            </label>
            <button type="submit" className="btn" disabled={!adding.trim()}>
              Add
            </button>
          </form>
          {plan?.allowance ? (
            <p className="muted small" data-testid="san-allowance">
              Additional names: {plan.allowance.names.used} of {plan.allowance.names.paid} paid for · wildcard names:{' '}
              {plan.allowance.wildcards.used} of {plan.allowance.wildcards.paid}. Included at no charge:{' '}
              {plan.included.join(', ')}.
            </p>
          ) : plan ? (
            <p className="muted small" data-testid="san-allowance">
              This product covers {plan.included.join(' and ')}; other names need a multi-domain order.
            </p>
          ) : null}
        </fieldset>
      )}
      {keyMissing ? (
        <p className="warn" role="note">
          The private key of the current certificate is not kept in CertDesk (its CSR was made elsewhere), so other
          names need a new key or a CSR made from that key.
        </p>
      ) : null}
      <ErrorBox text={planError} />
      {plan ? (
        <section className="plan" aria-label="What will happen" data-testid="reissue-plan">
          <h3>What will happen</h3>
          <ul>
            <li>
              A new certificate for <span className="mono">{plan.names.join(', ')}</span>, valid from{' '}
              {day(plan.validFrom)} until {day(plan.validTill)}
              {plan.added.length > 0 ? `; added: ${plan.added.join(', ')}` : ''}
              {plan.removed.length > 0 ? `; removed: ${plan.removed.join(', ')}` : ''}.
            </li>
            <li>
              {keyChoice === 'new'
                ? `A new ${KEY_LABELS[keyType]} private key is generated on this machine and kept encrypted with the new certificate.`
                : keyChoice === 'csr'
                  ? 'The pasted CSR brings its own key; CertDesk keeps no private key for the new certificate.'
                  : 'The current private key is used again.'}
            </li>
            <li>
              {toValidate.length === 0
                ? 'No domain validation is needed: every name was validated recently enough to reuse it, so it is issued at once.'
                : `Validation first: ${toValidate.map((v) => `${v.name} by ${METHOD_LABELS[v.method]}`).join(', ')}; the certificate is issued once ${toValidate.length === 1 ? 'it passes' : 'they pass'}.`}
            </li>
            <li>
              {plan.deploys.length === 0
                ? 'No deploy targets: install the new certificate yourself.'
                : `Then deployed to: ${plan.deploys.map((d) => `${d.kind} ${d.target}`).join('; ')}.`}
            </li>
            <li>
              {plan.current.revokedAt
                ? `The current certificate (serial ${plan.current.serial.slice(0, 16)}…) stays revoked.`
                : `The current certificate (serial ${plan.current.serial.slice(0, 16)}…) stays valid until ${day(plan.current.validTill)}; a reissue does not revoke it (revoke it under Issued certificates once the new one is installed).`}
            </li>
          </ul>
        </section>
      ) : null}
      <ErrorBox text={error} />
      {busy ? (
        <div className="progress" role="status">
          <span className="spinner" /> {busy}
        </div>
      ) : null}
      <div className="actions">
        <button type="button" className="btn primary" disabled={!ready} onClick={() => void confirm()}>
          Reissue now
        </button>
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  )
}
