/**
 * A virtualised list over a server-paged list of the store: only the visible rows exist in the
 * DOM, and pages of 100 rows are fetched as they scroll into view, so 100,000 orders stay fast.
 */
import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useRef } from 'react'
import { PAGE_SIZE, useStore, type ListName } from './store'

export function VirtualList<T>({
  name,
  header,
  row,
  rowHeight = 44
}: {
  name: ListName
  header: React.ReactNode
  row: (item: T) => React.ReactNode
  rowHeight?: number
}): React.JSX.Element {
  const total = useStore((s) => s[name].total)
  const pages = useStore((s) => s[name].pages) as Record<number, T[]>
  const error = useStore((s) => s[name].error)
  const loadPage = useStore((s) => s.loadPage)
  const parent = useRef<HTMLDivElement>(null)
  const v = useVirtualizer({
    count: total,
    getScrollElement: () => parent.current,
    estimateSize: () => rowHeight,
    overscan: 10
  })
  const items = v.getVirtualItems()
  const first = items[0]?.index ?? 0
  const last = items[items.length - 1]?.index ?? 0
  useEffect(() => {
    for (let p = Math.floor(first / PAGE_SIZE); p <= Math.floor(last / PAGE_SIZE); p++) void loadPage(name, p)
  }, [first, last, name, loadPage, pages])
  return (
    <div className="vlist">
      <div className="vlist-head">{header}</div>
      {error ? <div className="error-box">{error}</div> : null}
      <div ref={parent} className="vlist-body" data-testid={`${name}-list`}>
        {total === 0 ? <p className="muted pad">Nothing here yet.</p> : null}
        {/* React sets these through CSSOM, which the CSP (no inline styles) allows. */}
        <div className="vlist-inner" style={{ height: v.getTotalSize() }}>
          {items.map((it) => {
            const item = pages[Math.floor(it.index / PAGE_SIZE)]?.[it.index % PAGE_SIZE]
            return (
              <div
                key={it.key}
                className="vlist-row"
                style={{ transform: `translateY(${it.start}px)`, height: rowHeight }}
              >
                {item ? row(item) : <span className="muted">Loading…</span>}
              </div>
            )
          })}
        </div>
      </div>
      <div className="vlist-foot muted">
        {total.toLocaleString('en-US')} row{total === 1 ? '' : 's'}
      </div>
    </div>
  )
}
