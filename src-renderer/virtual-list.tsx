/**
 * A virtualised list over a server-paged list of the store: only the rows in view exist in the
 * DOM, and pages of 100 rows are read as they come into view.
 *
 * Browsers cap an element's height (Chromium: 33,554,428 px), below a million rows of 44 px.
 * So the scrollbar moves over a scroll space of at most SCROLL_CAP px that stands for the whole
 * list, scaled, while the rows themselves are placed from an exact position in rows: the wheel,
 * the keys (arrows, Page Up/Down, Home, End) and "Go to row" move that position row-exact, and
 * dragging the scrollbar moves it in proportion. Every row of any length of list can be reached.
 *
 * For assistive technology it is a grid (WAI-ARIA 1.2 grid pattern): the header row of column
 * headers sits inside it, above the rows, so each cell is announced with its column; the grid is
 * one stop of Tab, and the arrow keys move an active cell (aria-activedescendant) that Enter
 * opens. aria-rowcount and aria-rowindex give every row its place in the whole list.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { navigate } from './routes'
import { PAGE_SIZE, useStore, type ListName } from './store'

/** Well below every engine's element-height cap. */
export const SCROLL_CAP = 8_000_000

const fmt = (n: number): string => n.toLocaleString('en-US')

export interface Column<T> {
  key: string
  header: React.ReactNode
  /** aria-sort of the column header, when the list is sorted by this column. */
  sort?: 'ascending' | 'descending'
  /** Classes of the header and the cells (the column's width rules). */
  className?: string
  /** Classes of the cells only (their layout, such as two lines). */
  cellClassName?: string
  cell: (item: T) => React.ReactNode
  /** The cell's full text, for a tooltip where it may be cut short. */
  title?: (item: T) => string | undefined
}

export function VirtualList<T>({
  name,
  label,
  columns,
  colsClass,
  rowHref,
  rowData,
  rowHeight = 44
}: {
  name: ListName
  label: string
  columns: Column<T>[]
  /** The grid template of header and rows (styles.css). */
  colsClass: string
  /** Where a row leads: a click on it or Enter on its active cell opens it. */
  rowHref?: (item: T) => string | null
  /** A `data-` attribute naming the row's record (`data-order="ORD-…"`). */
  rowData?: (item: T) => [name: `data-${string}`, value: string]
  rowHeight?: number
}): React.JSX.Element {
  const total = useStore((s) => s[name].total)
  const pages = useStore((s) => s[name].pages) as Record<number, T[]>
  const version = useStore((s) => s[name].version)
  const loaded = useStore((s) => s[name].loaded)
  const error = useStore((s) => s[name].error)
  const loadPage = useStore((s) => s.loadPage)
  const body = useRef<HTMLDivElement>(null)
  const head = useRef<HTMLDivElement>(null)
  const [client, setClient] = useState(600)
  const [headHeight, setHeadHeight] = useState(40)
  /** The top of the view in list pixels (row index × row height): exact, whatever the scaling. */
  const [top, setTop] = useState(0)
  /** The active cell: row index in the whole list (-1 before any) and column. */
  const [active, setActive] = useState({ row: -1, col: 0 })
  /** The scrollTop we set ourselves, so its scroll event does not round `top` to the scaled grid. */
  const ours = useRef<number | null>(null)

  // The rows' part of the view: the header row stays at the top of it.
  const viewport = Math.max(rowHeight, client - headHeight)
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
    setActive({ row: -1, col: 0 })
    ours.current = 0
    if (body.current) body.current.scrollTop = 0
  }, [version])
  // The list shrank under the view (a filter, a cancel): stay inside it.
  useEffect(() => {
    if (top > maxTop) moveTo(maxTop)
  }, [top, maxTop, moveTo])

  useLayoutEffect(() => {
    const el = body.current
    const h = head.current
    if (!el || !h) return
    const measure = (): void => {
      setClient(el.clientHeight || 600)
      setHeadHeight(h.offsetHeight || 40)
    }
    measure()
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    ro.observe(h)
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

  const first = Math.floor(top / rowHeight)
  const shown = Math.ceil(viewport / rowHeight) + 1
  const last = Math.min(total, first + shown) - 1
  const shift = -(top - first * rowHeight)
  const itemAt = (i: number): T | undefined => pages[Math.floor(i / PAGE_SIZE)]?.[i % PAGE_SIZE]

  /** Moves the active cell to row `row`, scrolling just enough to show it whole. */
  const activate = (row: number, col = active.col): void => {
    const r = Math.max(0, Math.min(total - 1, row))
    setActive({ row: r, col: Math.max(0, Math.min(columns.length - 1, col)) })
    if (r * rowHeight < top) moveTo(r * rowHeight)
    else if ((r + 1) * rowHeight > top + viewport) moveTo((r + 1) * rowHeight - viewport)
  }

  const open = (item: T | undefined): void => {
    const to = item && rowHref?.(item)
    if (to) navigate(to.replace(/^#/, ''))
  }

  const onKey = (e: React.KeyboardEvent): void => {
    if (total === 0) return
    const at = active.row >= 0 && active.row >= first && active.row <= last ? active.row : first
    const page = Math.max(1, Math.floor(viewport / rowHeight) - 1)
    switch (e.key) {
      case 'ArrowDown':
        activate(active.row < 0 ? first : at + 1)
        break
      case 'ArrowUp':
        activate(active.row < 0 ? first : at - 1)
        break
      case 'ArrowRight':
        setActive({ row: at, col: Math.min(columns.length - 1, active.col + 1) })
        break
      case 'ArrowLeft':
        setActive({ row: at, col: Math.max(0, active.col - 1) })
        break
      // A screen at a time: the view moves by a page and the active row with it.
      case 'PageDown':
      case ' ':
        moveTo(top + viewport - rowHeight)
        setActive({ row: Math.min(total - 1, at + page), col: active.col })
        break
      case 'PageUp':
        moveTo(top - (viewport - rowHeight))
        setActive({ row: Math.max(0, at - page), col: active.col })
        break
      case 'Home':
        activate(0)
        break
      case 'End':
        activate(total - 1)
        break
      case 'Enter':
        if (active.row >= 0) open(itemAt(active.row))
        break
      default:
        return
    }
    e.preventDefault()
  }

  useEffect(() => {
    if (total === 0 && loaded) return
    const center = Math.floor(first / PAGE_SIZE)
    for (let p = center; p <= Math.floor(Math.max(first, last) / PAGE_SIZE); p++) void loadPage(name, p, center)
  }, [first, last, name, loadPage, pages, version, total, loaded])

  const cellId = (row: number, col: number): string => `${name}-cell-${row}-${col}`
  const rows: React.ReactNode[] = []
  for (let i = first; i <= last; i++) {
    const item = itemAt(i)
    const to = item ? rowHref?.(item) : null
    rows.push(
      // React sets these through CSSOM, which the CSP (no inline styles) allows.
      <div
        key={i}
        className={`vlist-row${i === active.row ? ' active' : ''}`}
        role="row"
        aria-rowindex={i + 2}
        data-row={i + 1}
        style={{ transform: `translateY(${shift + (i - first) * rowHeight}px)`, height: rowHeight }}
      >
        {item ? (
          <div
            className={`cols ${colsClass}${to ? ' row-link' : ''}`}
            onClick={to ? () => open(item) : undefined}
            {...(rowData ? Object.fromEntries([rowData(item)]) : {})}
          >
            {columns.map((c, j) => (
              <div
                key={c.key}
                id={cellId(i, j)}
                role="gridcell"
                className={[c.className, c.cellClassName, i === active.row && j === active.col ? 'active-cell' : '']
                  .filter(Boolean)
                  .join(' ')}
                title={c.title?.(item)}
              >
                {c.cell(item)}
              </div>
            ))}
          </div>
        ) : (
          <div role="gridcell" aria-colspan={columns.length} className="vlist-cell muted" id={cellId(i, 0)}>
            Loading…
          </div>
        )}
      </div>
    )
  }
  const activeShown = active.row >= first && active.row <= last && itemAt(active.row) !== undefined
  return (
    <div className="vlist">
      {error ? <div className="error-box">{error}</div> : null}
      <div
        ref={body}
        className="vlist-body"
        data-testid={`${name}-list`}
        role="grid"
        aria-label={label}
        aria-rowcount={total + 1}
        aria-colcount={columns.length}
        aria-activedescendant={activeShown ? cellId(active.row, active.col) : undefined}
        tabIndex={0}
        onScroll={onScroll}
        onKeyDown={onKey}
        onFocus={() => {
          if (active.row < 0 && total > 0) setActive({ row: first, col: active.col })
        }}
      >
        <div className="vlist-window" style={{ height: Math.min(client, headHeight + space) }}>
          <div ref={head} className="vlist-head" role="row" aria-rowindex={1}>
            <div className={`cols ${colsClass}`}>
              {columns.map((c) => (
                <div key={c.key} role="columnheader" aria-sort={c.sort} className={c.className}>
                  {c.header}
                </div>
              ))}
            </div>
          </div>
          {total === 0 && loaded ? (
            <div role="row" aria-rowindex={2}>
              <div role="gridcell" aria-colspan={columns.length} className="muted pad">
                Nothing here yet.
              </div>
            </div>
          ) : (
            <div className="vlist-rows" style={{ height: Math.min(viewport, space) }}>
              {rows}
            </div>
          )}
        </div>
        <div className="vlist-spacer" style={{ height: Math.max(0, space - Math.min(viewport, space)) }} />
      </div>
      <div className="vlist-foot muted">
        <span data-testid={`${name}-range`}>
          {total === 0 ? '' : `Rows ${fmt(first + 1)}–${fmt(last + 1)} of `}
          {fmt(total)} row{total === 1 ? '' : 's'}
        </span>
        <GoToRow
          total={total}
          onGo={(n) => {
            moveTo((n - 1) * rowHeight)
            setActive({ row: n - 1, col: active.col })
          }}
          name={name}
        />
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
