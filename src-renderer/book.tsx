/**
 * Which book the UI works on, always in sight at the top of the sidebar: this machine's own
 * ("Local book"), or a team server's with the admin and role it is worked on as.
 */
import { href } from './routes'
import { useCan, useStore } from './store'

export function BookIndicator(): React.JSX.Element | null {
  const account = useStore((s) => s.account)
  const leave = useStore((s) => s.leaveTeam)
  const canConnect = useCan('connectTeam')
  if (!account) return null
  const { book } = account
  if (book.kind === 'local')
    return (
      <div className="book book-local" data-testid="book">
        <div className="book-label" data-testid="book-label">
          Local book
        </div>
        {canConnect ? (
          <a className="small" href={href({ name: 'team' })}>
            Connect to a team server…
          </a>
        ) : null}
      </div>
    )
  return (
    <div className="book book-team" data-testid="book">
      <div className="book-label" data-testid="book-label">
        Team: {book.server} as {account.actor} ({account.role})
      </div>
      {account.teamClient ? (
        <button className="btn small" type="button" onClick={() => void leave()}>
          Back to local book
        </button>
      ) : null}
    </div>
  )
}
