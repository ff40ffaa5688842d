/**
 * The signed-in admin's own account: a new password, and two-step sign-in with an
 * authenticator app (TOTP, RFC 6238): scan the code or type the key, then confirm with a code.
 */
import { useMemo, useState } from 'react'
import { encode } from 'uqr'
import { useStore } from '../store'
import { CopyButton, ErrorBox } from '../ui'

/** The otpauth URI as a QR code, drawn as SVG squares (no script, no image from elsewhere). */
function QrCode({ text }: { text: string }): React.JSX.Element {
  const { data, size } = useMemo(() => encode(text, { ecc: 'M', border: 2 }), [text])
  return (
    <svg
      className="qr"
      viewBox={`0 0 ${size} ${size}`}
      width={size * 5}
      height={size * 5}
      role="img"
      aria-label="QR code of the new key"
      shapeRendering="crispEdges"
    >
      <rect width={size} height={size} fill="#fff" />
      {data.flatMap((row, y) =>
        row.map((on, x) => (on ? <rect key={`${x}.${y}`} x={x} y={y} width={1} height={1} /> : null))
      )}
    </svg>
  )
}

function PasswordCard(): React.JSX.Element {
  const change = useStore((s) => s.changePassword)
  const [form, setForm] = useState({ current: '', next: '', again: '' })
  const [error, setError] = useState<string | null>(null)
  return (
    <form
      className="card form"
      aria-label="Change password"
      onSubmit={(e) => {
        e.preventDefault()
        if (form.next !== form.again) return setError('the two new passwords differ')
        void change(form.current, form.next).then((err) => {
          setError(err)
          if (!err) setForm({ current: '', next: '', again: '' })
        })
      }}
    >
      <h2>Password</h2>
      <label>
        Current password
        <input
          type="password"
          autoComplete="current-password"
          value={form.current}
          onChange={(e) => setForm({ ...form, current: e.target.value })}
        />
      </label>
      <label>
        New password <span className="muted small">(at least 15 characters)</span>
        <input
          type="password"
          autoComplete="new-password"
          value={form.next}
          onChange={(e) => setForm({ ...form, next: e.target.value })}
        />
      </label>
      <label>
        New password again
        <input
          type="password"
          autoComplete="new-password"
          value={form.again}
          onChange={(e) => setForm({ ...form, again: e.target.value })}
        />
      </label>
      <div className="row">
        <button className="btn" type="submit">
          Change password
        </button>
      </div>
      <ErrorBox text={error} />
    </form>
  )
}

function TotpCard(): React.JSX.Element {
  const on = useStore((s) => s.account?.totpEnabled ?? false)
  const enrolment = useStore((s) => s.totpEnrolment)
  const begin = useStore((s) => s.beginTotp)
  const confirm = useStore((s) => s.confirmTotp)
  const disable = useStore((s) => s.disableTotp)
  const [code, setCode] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  return (
    <section className="card" data-testid="totp-card">
      <h2>Two-step sign-in</h2>
      {on ? (
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault()
            void disable(password).then((err) => {
              setError(err)
              setPassword('')
            })
          }}
        >
          <p>On: signing in asks for a code from your authenticator app.</p>
          <label>
            Password, to turn it off
            <input
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <div className="row">
            <button className="btn danger" type="submit">
              Turn off two-step sign-in
            </button>
          </div>
        </form>
      ) : enrolment ? (
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault()
            void confirm(code).then((err) => {
              setError(err)
              setCode('')
            })
          }}
        >
          <p>Scan this code with an authenticator app, or type the key into it.</p>
          <QrCode text={enrolment.uri} />
          <p>
            Key:{' '}
            <code className="mono" data-testid="totp-secret">
              {enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}
            </code>{' '}
            <CopyButton text={enrolment.secret} label="Copy key" />
          </p>
          <label>
            Code the app shows now
            <input
              inputMode="numeric"
              autoComplete="one-time-code"
              maxLength={7}
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </label>
          <div className="row">
            <button className="btn primary" type="submit">
              Turn on two-step sign-in
            </button>
          </div>
        </form>
      ) : (
        <>
          <p className="muted">Off: a password alone signs you in.</p>
          <button className="btn" onClick={() => void begin()}>
            Set up two-step sign-in
          </button>
        </>
      )}
      <ErrorBox text={error} />
    </section>
  )
}

export function MyAccount(): React.JSX.Element {
  const account = useStore((s) => s.account)
  if (!account?.account)
    return (
      <div className="screen narrow">
        <h1>My account</h1>
        <p className="muted">The desktop user signs in without an admin account; admins of a team server have one.</p>
      </div>
    )
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>My account</h1>
        <p className="muted">
          {account.actor}, {account.role}
        </p>
      </header>
      <PasswordCard />
      <TotpCard />
    </div>
  )
}
