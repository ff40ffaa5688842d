/**
 * What a screen reader and a keyboard need when the page changes without a page load (WCAG
 * 2.4.2 "Page Titled", 2.4.3 "Focus Order"): the window's title names the page on show, and on
 * every move to another page the focus goes to its heading, so reading starts there and Tab
 * continues from there. The heading may come a moment after the move (a record is loaded
 * first); the focus waits for it, and gives up once the user has moved the focus themselves.
 */
import { useEffect, useRef } from 'react'

const APP = 'CertDesk'
/** How long a move waits for the new page's heading before leaving the focus where it is. */
const WAIT_MS = 8000

const heading = (main: HTMLElement): HTMLElement | null => main.querySelector('h1')

/** The title of the page on show: its heading's text, else `fallback` (the screen's name). */
function titleOf(main: HTMLElement, fallback: string): string {
  const text = heading(main)?.textContent?.replace(/\s+/g, ' ').trim()
  return `${text || fallback} · ${APP}`
}

/** Moves the focus to the main heading; the heading takes it without joining the Tab order. */
export function focusHeading(main: HTMLElement | null): boolean {
  const h = main && heading(main)
  if (!h) return false
  if (!h.hasAttribute('tabindex')) h.setAttribute('tabindex', '-1')
  h.focus()
  return true
}

/**
 * Keeps `document.title` in step with the heading of `main`, and on each change of `path`
 * after the first, moves the focus to the new heading.
 */
export function usePageFocus(main: React.RefObject<HTMLElement | null>, path: string, fallback: string): void {
  const first = useRef(true)
  // The title follows the heading as it loads and changes (an order's status in its heading).
  useEffect(() => {
    const el = main.current
    if (!el) return
    const update = (): void => {
      const title = titleOf(el, fallback)
      if (document.title !== title) document.title = title
    }
    update()
    const observer = new MutationObserver(update)
    observer.observe(el, { childList: true, subtree: true, characterData: true })
    return () => observer.disconnect()
  }, [main, path, fallback])
  useEffect(() => {
    if (first.current) {
      // A fresh load leaves the focus at the top of the document, where the skip link is.
      first.current = false
      return
    }
    const el = main.current
    if (!el || focusHeading(el)) return
    const started = document.activeElement
    const observer = new MutationObserver(() => {
      // The user moved on meanwhile: their focus stays.
      if (document.activeElement !== started && document.activeElement !== document.body) return stop()
      if (focusHeading(el)) stop()
    })
    const timer = setTimeout(() => stop(), WAIT_MS)
    function stop(): void {
      observer.disconnect()
      clearTimeout(timer)
    }
    observer.observe(el, { childList: true, subtree: true })
    return stop
  }, [main, path])
}
