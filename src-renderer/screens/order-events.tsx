/** An order's own events on its page, newest first, refreshed while the page is open. */
import { useEffect } from 'react'
import { useStore } from '../store'
import { EventRows, LIVE_REFRESH_MS } from './event-log'

export function OrderEventsCard({ orderId }: { orderId: number }): React.JSX.Element {
  const events = useStore((s) => (s.orderEvents?.orderId === orderId ? s.orderEvents.items : null))
  const load = useStore((s) => s.loadOrderEvents)
  useEffect(() => {
    void load(orderId)
    const t = setInterval(() => void load(orderId), LIVE_REFRESH_MS)
    return () => clearInterval(t)
  }, [orderId, load])
  return (
    <section className="card" aria-labelledby={`events-${orderId}`} data-testid="order-events">
      <h2 id={`events-${orderId}`}>Events</h2>
      {events === null ? (
        <p className="muted">Loading the events…</p>
      ) : events.length === 0 ? (
        <p className="muted">No events yet.</p>
      ) : (
        <EventRows items={events} showOrder={false} />
      )}
    </section>
  )
}
