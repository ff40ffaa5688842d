import type { OrderView } from '../../src-preload/contract'
import { statusLabel } from '../lib/format'

/** The path an order walks (pending → validation_pending → processing → completed), for the timeline. */
const STEPS = ['pending', 'validation_pending', 'processing', 'completed'] as const

export function OrderTimeline({ order }: { order: OrderView }): React.JSX.Element {
  const ended = order.status === 'cancelled' || order.status === 'expired'
  const at = STEPS.indexOf(order.status as (typeof STEPS)[number])
  return (
    <ol className="timeline">
      {STEPS.map((s, i) => (
        <li key={s} className={!ended && i < at ? 'done' : !ended && i === at ? 'current' : ''}>
          {s === 'pending' ? 'Ordered, waiting for CSR' : statusLabel(s).replace(/^./, (c) => c.toUpperCase())}
        </li>
      ))}
      {ended ? <li className="current bad">{order.status}</li> : null}
    </ol>
  )
}
