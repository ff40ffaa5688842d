/**
 * CSV exports as the user sees them: the button that asks where to write (the desktop app's save
 * dialog, or an editable path in browser mode, where the main process writes the file), and a
 * tray over every screen with each export's progress, an estimate, Cancel, and "done".
 */
import { useEffect, useRef, useState } from 'react'
import { create } from 'zustand'
import type { ExportJobView, ListFilter, ListName, OrderSort } from '../src-shared/list-records'
import { bridge } from './bridge'
import { errorMessage } from './lib/format'
import { useCan, useStore } from './store'

const fmt = (n: number): string => n.toLocaleString('en-US')
const LIST_LABEL: Record<ListName, string> = { orders: 'orders', invoices: 'invoices', transactions: 'credit ledger' }

interface ExportsState {
  jobs: ExportJobView[]
  refresh(): Promise<void>
}

let polling: ReturnType<typeof setInterval> | null = null

export const useExports = create<ExportsState>((set, get) => ({
  jobs: [],
  async refresh() {
    const jobs = await bridge.exportJobs()
    set({ jobs })
    const running = jobs.some((j) => j.state === 'running')
    if (running && !polling) polling = setInterval(() => void get().refresh(), 400)
    if (!running && polling) {
      clearInterval(polling)
      polling = null
    }
  }
}))

export function ExportButton({
  list,
  file,
  filter,
  sort,
  dir
}: {
  list: ListName
  file: string
  filter: ListFilter
  sort?: OrderSort
  dir?: 'asc' | 'desc'
}): React.JSX.Element | null {
  const resellerId = useStore((s) => s.resellerId)
  const mayExport = useCan('startExport')
  const [path, setPath] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const start = async (target: string): Promise<void> => {
    if (resellerId === null) return
    try {
      await bridge.startExport(resellerId, { list, filter, sort, dir, path: target })
      setPath(null)
      setError(null)
      await useExports.getState().refresh()
    } catch (e) {
      setError(errorMessage(e))
    }
  }
  if (!mayExport) return null
  return (
    <span className="export">
      <button
        className="btn"
        onClick={() => {
          setError(null)
          void bridge
            .chooseExportPath(file)
            .then((t) => (t.dialog ? t.path && start(t.path) : setPath(t.path ?? '')))
            .catch((e: unknown) => setError(errorMessage(e)))
        }}
      >
        Export CSV
      </button>
      {path !== null ? (
        <PathDialog
          what={LIST_LABEL[list]}
          path={path}
          error={error}
          onChange={setPath}
          onSubmit={() => void start(path)}
          onClose={() => {
            setPath(null)
            setError(null)
          }}
        />
      ) : error ? (
        <span className="error-box" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  )
}

/**
 * Where the export goes (browser mode), as a modal dialog in the middle of the window: it opens
 * where the user looks, whatever the width and wherever the button sits, holds the focus
 * until it is answered, and Escape cancels it.
 */
function PathDialog({
  what,
  path,
  error,
  onChange,
  onSubmit,
  onClose
}: {
  what: string
  path: string
  error: string | null
  onChange: (path: string) => void
  onSubmit: () => void
  onClose: () => void
}): React.JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const d = dialog.current
    if (d && !d.open) d.showModal()
    return () => d?.close()
  }, [])
  return (
    <dialog ref={dialog} className="export-dialog card" aria-labelledby="export-dialog-title" onCancel={onClose}>
      <form
        className="export-path"
        onSubmit={(e) => {
          e.preventDefault()
          onSubmit()
        }}
      >
        <h2 id="export-dialog-title">Export the {what}</h2>
        <label>
          Save the {what} as
          <input aria-label="Export file" value={path} onChange={(e) => onChange(e.target.value)} size={48} />
        </label>
        {error ? (
          <span className="error-box" role="alert">
            {error}
          </span>
        ) : null}
        <div className="actions">
          <button className="btn primary" type="submit">
            Export
          </button>
          <button className="btn" type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  )
}

/** `1 row`, `2 rows`, `1,000,000 rows`. */
const rows = (n: number): string => `${fmt(n)} ${n === 1 ? 'row' : 'rows'}`

function describe(j: ExportJobView): string {
  const what = LIST_LABEL[j.list]
  if (j.state === 'done') return `Exported ${rows(j.rows)} of the ${what} to ${j.path}`
  if (j.state === 'cancelled') return `Export of the ${what} cancelled after ${rows(j.rows)}; no file was kept`
  if (j.state === 'failed') return j.error ?? `Export of the ${what} failed`
  const left = j.secondsLeft === null ? '' : `, about ${fmt(Math.ceil(j.secondsLeft))} s left`
  return `Exporting the ${what}: ${fmt(j.rows)} of ${fmt(j.total)} rows${left}`
}

/**
 * Every export of this session, on every screen, until dismissed: a dismissed notice is
 * forgotten by the main process, so it stays gone after a reload, and signing out forgets every
 * finished one and hides the tray with the rest of the app.
 */
export function ExportTray(): React.JSX.Element | null {
  const jobs = useExports((s) => s.jobs)
  const signedOut = useStore((s) => s.signedOut)
  // Exports write files on the machine CertDesk runs on: only a session that may see them asks.
  const mayList = useCan('exportJobs')
  useEffect(() => {
    if (!mayList) return
    void useExports
      .getState()
      .refresh()
      .catch(() => undefined)
  }, [mayList])
  // The newest few: the tray shares the sidebar's lower part with the toasts.
  const shown = signedOut ? [] : jobs.slice(-3)
  const tray = useRef<HTMLElement | null>(null)
  // The toasts stack above the tray (both sit in the sidebar, so neither covers a button of a screen).
  useEffect(() => {
    const root = document.documentElement
    const el = tray.current
    if (!el) {
      root.style.removeProperty('--export-tray-h')
      return
    }
    const measure = (): void => root.style.setProperty('--export-tray-h', `${el.offsetHeight}px`)
    measure()
    const observer = new ResizeObserver(measure)
    observer.observe(el)
    return () => {
      observer.disconnect()
      root.style.removeProperty('--export-tray-h')
    }
  }, [shown.length])
  if (shown.length === 0) return null
  return (
    <aside ref={tray} className="export-tray" aria-label="Exports" aria-live="polite">
      {shown.map((j) => (
        <div key={j.id} className={`export-job ${j.state}`} data-testid="export-job" data-state={j.state}>
          {/* A path is one long token: it wraps where it must. */}
          <span className="break">{describe(j)}</span>
          {j.state === 'running' ? (
            <>
              <progress max={Math.max(1, j.total)} value={j.rows} aria-label={`Export of the ${LIST_LABEL[j.list]}`} />
              <button
                className="btn"
                onClick={() => void bridge.cancelExport(j.id).then(() => useExports.getState().refresh())}
              >
                Cancel export
              </button>
            </>
          ) : (
            <button
              className="btn"
              onClick={() =>
                void bridge
                  .dismissExport(j.id)
                  .catch(() => undefined)
                  .then(() => useExports.getState().refresh())
              }
            >
              Dismiss
            </button>
          )}
        </div>
      ))}
    </aside>
  )
}
