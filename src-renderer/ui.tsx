/** Small shared pieces: status badges, money, a copy button, an error box. */
import { useState } from 'react'
import { statusLabel } from './lib/format'
import { toUnicode } from './lib/domain-input'
import type { AppMethod } from '../src-preload/contract'
import { useCan } from './store'

export function Badge({ status, label }: { status: string; label?: string }): React.JSX.Element {
  return <span className={`badge badge-${status}`}>{label ?? statusLabel(status.replace(/^dcv-/, ''))}</span>
}

export function ErrorBox({ text }: { text: string | null }): React.JSX.Element | null {
  return text ? (
    <div className="error-box" role="alert">
      {text}
    </div>
  ) : null
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }): React.JSX.Element {
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      className="btn small"
      onClick={() => {
        void navigator.clipboard.writeText(text).then(() => {
          setDone(true)
          setTimeout(() => setDone(false), 1500)
        })
      }}
    >
      {done ? 'Copied' : label}
    </button>
  )
}

export function Stat({ label, value, hint }: { label: string; value: string; hint?: string }): React.JSX.Element {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {hint ? <div className="stat-hint">{hint}</div> : null}
    </div>
  )
}

/**
 * A domain as people read it: an internationalised name in Unicode, with the A-label form the
 * certificate carries beside it (`full`) or in the tooltip (in lists).
 */
export function DomainName({ name, full = false }: { name: string; full?: boolean }): React.JSX.Element {
  const shown = toUnicode(name)
  if (shown === name) return <span title={name}>{name}</span>
  return (
    <span title={name} data-testid="domain-shown">
      {shown}
      {full ? <span className="muted small"> ({name})</span> : null}
    </span>
  )
}

/**
 * Its children only when the session may call `method`: a role sees the actions it may take
 * and no others (the server refuses the rest anyway, with 403).
 */
export function Can({
  m,
  children,
  otherwise = null
}: {
  m: AppMethod
  children: React.ReactNode
  /** What the session sees instead, when an empty place would puzzle it. */
  otherwise?: React.ReactNode
}): React.JSX.Element | null {
  return <>{useCan(m) ? children : otherwise}</>
}

/** A list of names, each as `DomainName` shows it with its A-label beside it, comma-separated. */
export function DomainNames({ names }: { names: string[] }): React.JSX.Element {
  return (
    <>
      {names.map((n, i) => (
        <span key={n}>
          {i > 0 ? ', ' : null}
          <DomainName name={n} full />
        </span>
      ))}
    </>
  )
}
