/**
 * The desktop app on a team server's book: the address and an admin account there. Once signed
 * in, every screen shows and changes the team's book, with what the account's role allows; the
 * sidebar says which book it is, and leads back to this machine's own.
 */
import { useStore } from '../store'
import { TeamSignInForm } from './sign-in'

export function TeamConnect(): React.JSX.Element {
  const book = useStore((s) => s.account?.book)
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>Connect to a team server</h1>
        <p className="muted">
          Work on the book of a CertDesk team server instead of this machine’s own, with your admin account there. This
          machine’s book stays as it is; the sidebar always says which book you are on.
        </p>
      </header>
      <section className="card">
        {book?.kind === 'team' ? (
          <p>Now on the team book of {book.server}. Signing in again replaces that session.</p>
        ) : null}
        <TeamSignInForm />
        <p className="muted small">
          Use https (http only to this machine): the password must not cross a network in clear. The team server’s
          certificate must be one this machine trusts.
        </p>
      </section>
    </div>
  )
}
