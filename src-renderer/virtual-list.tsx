/**
 * A virtualised list over a server-paged list of the store: only the rows in view exist in the
 * DOM, and pages of 100 rows are read as they come into view.
 *
 * Browsers cap an element's height (Chromium: 33,554,428 px), below a million rows of 44 px.
 * So the scrollbar moves over a scroll space of at most SCROLL_CAP px that stands for the whole
 * list, scaled, while the rows themselves are placed from an exact position in rows: the wheel,
 * the keys (arrows, Page Up/Down, Home, End) and "Go to row" move that position row-exact, and
 * dragging the scrollbar moves it in proportion. Every row of any length of list can be reached.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { PAGE_SIZE, useStore, type ListName } from './store'

/** Well below every engine's element-height cap. */
export const SCROLL_CAP = 8_000_000

const fmt = (n: number): string => n.toLocaleString('en-US')

export function VirtualList<T>({
  name,
  header,
  row,
  label,
  rowHeight = 44
}: {
  name: ListName
  header: React.ReactNode
  row: (item: T) => React.ReactNode
  label: string
  rowHeight?: number
}): React.JSX.Element {
  const total = useStore((s) => s[name].total)
  const pages = useStore((s) => s[name].pages) as Record<number, T[]>
  const version = useStore((s) => s[name].version)
  const loaded = useStore((s) => s[name].loaded)
  const error = useStore((s) => s[name].error)
  const loadPage = useStore((s) => s.loadPage)
  const body = useRef<HTMLDivElement>(null)
  const [viewport, setViewport] = useState(600)
  /** The top of the view in list pixels (row index × row height): exact, whatever the scaling. */
  const [top, setTop] = useState(0)
  /** The scrollTop we set ourselves, so its scroll event does not round `top` to the scaled grid. */
  const ours = useRef<number | null>(null)

  const content = total * rowHeight
  const space = Math.min(content, SCROLL_CAP)
  const maxTop = Math.max(0, content - viewport)
  const maxScroll = Math.max(0, space - viewport)
  const toScroll = useCallback((t: number) => (maxTop === 0 ? 0 : (t / maxTop) * maxScroll), [maxTop, maxScroll])

  const moveTo = useCallback(
    (t: number) => {
      const next = Math.max(0, Math.min(maxTop, t))
      setTop(next)
      const el = body.current
      if (el) {
        const s = toScroll(next)
        ours.current = s
        el.scrollTop = s
      }
    },
    [maxTop, toScroll]
  )

  // A new filter, search or sort shows its first rows at the top.
  useLayoutEffect(() => {
    setTop(0)
    ours.current = 0
    if (body.current) body.current.scrollTop = 0
  }, [version])
  // The list shrank under the view (a filter, a cancel): stay inside it.
  useEffect(() => {
    if (top > maxTop) moveTo(maxTop)
  }, [top, maxTop, moveTo])

  useLayoutEffect(() => {
    const el = body.current
    if (!el) return
    const measure = (): void => setViewport(el.clientHeight || 600)
    measure()
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    // The wheel moves the exact position (React's wheel listener is passive and cannot stop the
    // scaled scroll from jumping rows at a time).
    const wheel = (e: WheelEvent): void => {
      e.preventDefault()
      const unit = e.deltaMode === 1 ? rowHeight : e.deltaMode === 2 ? el.clientHeight : 1
      setTop((t) => {
        const next = Math.max(0, Math.min(maxTopRef.current, t + e.deltaY * unit))
        const s = toScrollRef.current(next)
        ours.current = s
        el.scrollTop = s
        return next
      })
    }
    el.addEventListener('wheel', wheel, { passive: false })
    return () => {
      ro.disconnect()
      el.removeEventListener('wheel', wheel)
    }
  }, [rowHeight])
  const maxTopRef = useRef(maxTop)
  maxTopRef.current = maxTop
  const toScrollRef = useRef(toScroll)
  toScrollRef.current = toScroll

  const onScroll = (): void => {
    const el = body.current
    if (!el) return
    if (ours.current !== null && Math.abs(el.scrollTop - ours.current) < 1.5) return
    ours.current = null
    // The scrollbar was dragged: its share of the scroll space is the same share of the list.
    setTop(maxScroll === 0 ? 0 : (el.scrollTop / maxScroll) * maxTop)
  }

  const onKey = (e: React.KeyboardEvent): void => {
    const step: Record<string, number> = {
      ArrowDown: rowHeight,
      ArrowUp: -rowHeight,
      PageDown: viewport - rowHeight,
      PageUp: -(viewport - rowHeight),
      ' ': viewport - rowHeight
    }
    if (e.key === 'Home') moveTo(0)
    else if (e.key === 'End') moveTo(maxTop)
    else if (e.key in step) moveTo(top + step[e.key])
    else return
    e.preventDefault()
  }

  const first = Math.floor(top / rowHeight)
  const shown = Math.ceil(viewport / rowHeight) + 1
  const last = Math.min(total, first + shown) - 1
  const shift = -(top - first * rowHeight)
  useEffect(() => {
    if (total === 0 && loaded) return
    const center = Math.floor(first / PAGE_SIZE)
    for (let p = center; p <= Math.floor(Math.max(first, last) / PAGE_SIZE); p++) void loadPage(name, p, center)
  }, [first, last, name, loadPage, pages, version, total, loaded])

  const rows: React.ReactNode[] = []
  for (let i = first; i <= last; i++) {
    const item = pages[Math.floor(i / PAGE_SIZE)]?.[i % PAGE_SIZE]
    rows.push(
      // React sets these through CSSOM, which the CSP (no inline styles) allows.
      <div
        key={i}
        className="vlist-row"
        role="row"
        aria-rowindex={i + 1}
        data-row={i + 1}
        style={{ transform: `translateY(${shift + (i - first) * rowHeight}px)`, height: rowHeight }}
      >
        {/* A grid's row holds cells (WAI-ARIA grid pattern): one cell spanning the row's own layout. */}
        <div role="gridcell" className="vlist-cell">
          {item ? row(item) : <span className="muted">Loading…</span>}
        </div>
      </div>
    )
  }
  return (
    <div className="vlist">
      <div className="vlist-head">{header}</div>
      {error ? <div className="error-box">{error}</div> : null}
      <div
        ref={body}
        className="vlist-body"
        data-testid={`${name}-list`}
        role="grid"
        aria-label={label}
        aria-rowcount={total}
        tabIndex={0}
        onScroll={onScroll}
        onKeyDown={onKey}
      >
        {total === 0 && loaded ? <p className="muted pad">Nothing here yet.</p> : null}
        <div className="vlist-window" style={{ height: Math.min(viewport, space) }}>
          {rows}
        </div>
        <div className="vlist-spacer" style={{ height: Math.max(0, space - Math.min(viewport, space)) }} />
      </div>
      <div className="vlist-foot muted">
        <span data-testid={`${name}-range`}>
          {total === 0 ? '' : `Rows ${fmt(first + 1)}–${fmt(last + 1)} of `}
          {fmt(total)} row{total === 1 ? '' : 's'}
        </span>
        <GoToRow total={total} onGo={(n) => moveTo((n - 1) * rowHeight)} name={name} />
      </div>
    </div>
  )
}

function GoToRow({
  total,
  onGo,
  name
}: {
  total: number
  onGo: (row: number) => void
  name: string
}): React.JSX.Element {
  const [value, setValue] = useState('')
  return (
    <form
      className="goto"
      onSubmit={(e) => {
        e.preventDefault()
        const n = Number(value.replace(/[,\s]/g, ''))
        if (!Number.isInteger(n) || n < 1) return
        onGo(Math.min(n, total))
      }}
    >
      <label>
        Go to row
        <input
          aria-label={`Go to row of ${name}`}
          inputMode="numeric"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          size={9}
        />
      </label>
    </form>
  )
}
