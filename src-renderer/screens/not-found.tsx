/** What an address that names nothing of this reseller shows: the same words for every reason. */
import { href } from '../routes'

/**
 * One answer for a mistyped address, an id that does not exist and another reseller's record:
 * the page never says which, so an address cannot be used to learn what other accounts hold.
 */
export function NotFound({ what }: { what: string }): React.JSX.Element {
  return (
    <div className="screen narrow">
      <section className="card" data-testid="not-found">
        <h1>Not found</h1>
        <p>
          There is no {what} at this address for the reseller you act for. Check the address, or choose another reseller
          under &ldquo;Acting for&rdquo; if it belongs to another account.
        </p>
        <p>
          <a href={href({ name: 'dashboard' })}>Go to the dashboard</a> ·{' '}
          <a href={href({ name: 'orders' })}>Go to the orders</a>
        </p>
      </section>
    </div>
  )
}
