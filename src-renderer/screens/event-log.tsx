/**
 * The event log: every event of the acting reseller (what GET /events pages) and the alerts
 * raised and cleared about its orders, newest first, filtered by type, day and order, refreshed
 * while the screen is open. Failed validations and deploys and raised alerts link to their
 * order, where they can be fixed.
 */
import { useEffect, useState } from 'react'
import type { EventView } from '../../src-preload/contract'
import { EVENT_TYPE_LABELS, isFailure } from '../lib/event-types'
import { useSearch } from 'wouter'
import { href, setQuery, type Query } from '../routes'
import { Pager } from '../pager'
import { EVENTS_PAGE, useStore, type EventLogFilter } from '../store'
import { ErrorBox } from '../ui'

/** How often an open log asks for new events, in ms: a deploy or a check shows within seconds. */
export const LIVE_REFRESH_MS = 4000

export function EventRows({ items, showOrder }: { items: EventView[]; showOrder: boolean }): React.JSX.Element {
  return (
    <table className="table events-table" data-testid="events">
      <colgroup>
        <col className="col-time" />
        <col className="col-event" />
        {showOrder ? <col className="col-order" /> : null}
        <col />
      </colgroup>
      <thead>
        <tr>
          <th scope="col">Time (UTC)</th>
          <th scope="col">Event</th>
          {showOrder ? <th scope="col">Order</th> : null}
          <th scope="col">What happened</th>
        </tr>
      </thead>
      <tbody>
        {items.map((e) => (
          <tr key={e.id} data-type={e.type} className={isFailure(e.type) ? 'event-failed' : undefined}>
            <td className="nowrap">{e.createdAt}</td>
            <td className="nowrap">{EVENT_TYPE_LABELS[e.type] ?? e.type}</td>
            {showOrder ? (
              <td className="nowrap">
                {e.orderId !== null ? <a href={href({ name: 'order', id: e.orderId })}>{e.orderNumber}</a> : '—'}
              </td>
            ) : null}
            {/* Messages carry URLs, paths and serials: those tokens wrap where they must. */}
            <td className="break">
              {e.message}
              {isFailure(e.type) && e.orderId !== null ? (
                <>
                  {' '}
                  <a className="strong" href={href({ name: 'order', id: e.orderId })}>
                    Fix it on the order page
                  </a>
                </>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** The log's filter and page as the address holds them (`#/events?type=…&since=…&order=…&page=2`). */
function fromAddress(search: string): { filter: EventLogFilter; offset: number } {
  const p = new URLSearchParams(search)
  const type = p.get('type') ?? ''
  const since = p.get('since') ?? ''
  const page = Number(p.get('page') ?? '1')
  return {
    filter: {
      type: type in EVENT_TYPE_LABELS ? type : '',
      since: /^\d{4}-\d{2}-\d{2}$/.test(since) ? since : '',
      order: (p.get('order') ?? '').slice(0, 64)
    },
    offset: Number.isSafeInteger(page) && page > 1 ? (page - 1) * EVENTS_PAGE : 0
  }
}

const addressOf = (f: EventLogFilter, offset = 0): Query => ({
  type: f.type,
  since: f.since,
  order: f.order.trim(),
  page: offset > 0 ? offset / EVENTS_PAGE + 1 : undefined
})

export function EventLog(): React.JSX.Element {
  const log = useStore((s) => s.eventLog)
  const load = useStore((s) => s.loadEvents)
  const resellerId = useStore((s) => s.resellerId)
  // The filters and the page are the address's: a reload, Back and a pasted link keep them.
  const search = useSearch()
  const { filter, offset } = fromAddress(search)
  const [draft, setDraft] = useState<EventLogFilter>(filter)
  useEffect(() => {
    if (resellerId === null) return
    const at = fromAddress(search)
    setDraft(at.filter)
    void load(at.filter, at.offset)
    const t = setInterval(() => void load(), LIVE_REFRESH_MS)
    return () => clearInterval(t)
  }, [resellerId, load, search])
  const apply = (f: EventLogFilter): void => {
    setDraft(f)
    setQuery(addressOf(f))
  }
  const first = log.total === 0 ? 0 : log.offset + 1
  const last = Math.min(log.offset + EVENTS_PAGE, log.total)
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Event log</h1>
      </header>
      <form
        className="card filters"
        aria-label="Event filters"
        onSubmit={(e) => {
          e.preventDefault()
          apply(draft)
        }}
      >
        <label>
          Event type
          <select
            aria-label="Event type"
            value={draft.type}
            onChange={(e) => apply({ ...draft, type: e.target.value })}
          >
            <option value="">All events</option>
            {Object.entries(EVENT_TYPE_LABELS).map(([type, label]) => (
              <option key={type} value={type}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          From day
          <input type="date" value={draft.since} onChange={(e) => apply({ ...draft, since: e.target.value })} />
        </label>
        <label>
          Order
          <input
            value={draft.order}
            placeholder="ORD-2026-000042"
            onChange={(e) => setDraft({ ...draft, order: e.target.value })}
            autoComplete="off"
          />
        </label>
        <button className="btn" type="submit">
          Apply filters
        </button>
        <button className="btn" type="button" onClick={() => apply({ type: '', since: '', order: '' })}>
          Clear filters
        </button>
      </form>
      <ErrorBox text={log.error} />
      <div className="toolbar" role="status" aria-live="polite">
        <span className="muted" data-testid="events-range">
          {log.loading && log.items.length === 0
            ? 'Loading the events…'
            : log.total > 0
              ? `Events ${first}–${last} of ${log.total}, newest first`
              : log.filter.type || log.filter.since || log.filter.order
                ? 'No events match.'
                : 'No events yet.'}
        </span>
      </div>
      {log.items.length > 0 ? <EventRows items={log.items} showOrder /> : null}
      <Pager
        offset={offset}
        total={log.total}
        size={EVENTS_PAGE}
        go={(to) => setQuery(addressOf(filter, to))}
        what="events"
      />
    </div>
  )
}
