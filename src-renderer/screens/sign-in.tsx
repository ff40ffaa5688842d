/**
 * The sign-in a session needs, in place of every screen: the desktop's newest one-time link, an
 * admin's name and password (+ code) on a team server's page, or the team server the desktop
 * app works on, which ended its session there.
 */
import { useState } from 'react'
import type { SignInNeed } from '../../src-preload/contract'
import { useStore } from '../store'
import { ErrorBox } from '../ui'

function Credentials({
  submit,
  label
}: {
  submit: (c: { name: string; password: string; code?: string }) => Promise<string | null>
  label: string
}): React.JSX.Element {
  const [form, setForm] = useState({ name: '', password: '', code: '' })
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault()
        setBusy(true)
        void submit({ name: form.name, password: form.password, code: form.code.trim() || undefined }).then((err) => {
          setBusy(false)
          setError(err)
          if (err) setForm({ ...form, password: '', code: '' })
        })
      }}
    >
      <label>
        Admin name
        <input
          autoComplete="username"
          autoFocus
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
        />
      </label>
      <label>
        Password
        <input
          type="password"
          autoComplete="current-password"
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
      </label>
      <label>
        Code from the authenticator app <span className="muted small">(if you set up two-step sign-in)</span>
        <input
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={7}
          value={form.code}
          onChange={(e) => setForm({ ...form, code: e.target.value })}
        />
      </label>
      <div className="row">
        <button className="btn primary" type="submit" disabled={busy || !form.name || !form.password}>
          {busy ? 'Signing in…' : label}
        </button>
      </div>
      <ErrorBox text={error} />
    </form>
  )
}

/** The desktop app signs in to a team server; its address is given, or typed. */
export function TeamSignInForm({ server }: { server?: string }): React.JSX.Element {
  const connect = useStore((s) => s.connectTeam)
  const [url, setUrl] = useState(server ? `https://${server}` : (localStorage.getItem('certdesk.team-url') ?? ''))
  const [root, setRoot] = useState(localStorage.getItem('certdesk.team-root') ?? '')
  return (
    <>
      <label className="form">
        Team server address
        <input
          placeholder="https://certs.reseller.example"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-label="Team server address"
        />
      </label>
      <label className="form">
        Root SHA-256 (for a certificate from the team server’s own CertDesk CA)
        <input
          placeholder="as its certdesk serve printed it; empty for a certificate this machine trusts"
          value={root}
          onChange={(e) => setRoot(e.target.value)}
          spellCheck={false}
        />
      </label>
      <Credentials
        label="Sign in to the team server"
        submit={async (c) => {
          const pin = root.trim()
          const err = await connect({ url: url.trim(), ...(pin ? { rootSha256: pin } : {}), ...c })
          if (!err) {
            localStorage.setItem('certdesk.team-url', url.trim())
            localStorage.setItem('certdesk.team-root', pin)
          }
          return err
        }}
      />
    </>
  )
}

export function SignInScreen({ need, message }: { need: SignInNeed; message: string }): React.JSX.Element {
  const signIn = useStore((s) => s.signInWithPassword)
  const leave = useStore((s) => s.leaveTeam)
  const book = useStore((s) => s.account?.book)
  const said = message.charAt(0).toUpperCase() + message.slice(1)
  if (need === 'password')
    return (
      <div className="screen narrow">
        <section className="card" data-testid="sign-in">
          <h1>Sign in to CertDesk</h1>
          <p className="muted">{said}</p>
          <Credentials label="Sign in" submit={signIn} />
        </section>
      </div>
    )
  if (need === 'team')
    return (
      <div className="screen narrow">
        <section className="card" data-testid="team-sign-in" role="alert">
          <h1>Sign in to the team server again</h1>
          <p>{said}</p>
          <TeamSignInForm server={book?.kind === 'team' ? book.server : undefined} />
          <p className="muted small">
            Or work on this machine’s own book:{' '}
            <button className="btn small" type="button" onClick={() => void leave()}>
              Back to local book
            </button>
          </p>
        </section>
      </div>
    )
  return (
    <div className="screen narrow">
      <section className="card" role="alert" data-testid="sign-in-needed">
        <h1>Sign-in needed</h1>
        <p>{said}</p>
        <p className="muted small">
          CertDesk prints a new one-time sign-in link in the terminal where it runs (npm start) whenever a browser
          session ends.
        </p>
      </section>
    </div>
  )
}
