/** The buttons of a list paged by offset, newest first: one page newer, one page older. */
export function Pager({
  offset,
  total,
  size,
  go,
  what
}: {
  offset: number
  total: number
  size: number
  /** Loads the page starting at this offset. */
  go: (offset: number) => void
  /** What the list holds, for the buttons: "events" gives "Newer events" and "Older events". */
  what: string
}): React.JSX.Element {
  return (
    <div className="toolbar">
      <button className="btn" disabled={offset === 0} onClick={() => go(Math.max(0, offset - size))}>
        Newer {what}
      </button>
      <button className="btn" disabled={offset + size >= total} onClick={() => go(offset + size)}>
        Older {what}
      </button>
    </div>
  )
}
