/**
 * One name's validation method on the order page, changeable while the name waits: BR §3.2.2.4
 * validates each name on its own, so a wildcard can move to DNS while its hosts keep their
 * files, and nothing another name has published or been mailed is touched.
 */
import { useEffect, useState } from 'react'
import type { DcvMethod, NameValidationView } from '../../src-preload/contract'
import { METHOD_LABELS, methodsFor } from '../lib/dcv-methods'
import { useStore } from '../store'
import { ErrorBox } from '../ui'

export function NameMethod({ orderId, v }: { orderId: number; v: NameValidationView }): React.JSX.Element {
  const change = useStore((s) => s.changeNameDcv)
  const [method, setMethod] = useState<DcvMethod>(v.method)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => setMethod(v.method), [v.method])
  return (
    <>
      <span className="name-method">
        <select
          aria-label={`Method for ${v.name}`}
          value={method}
          onChange={(e) => setMethod(e.target.value as DcvMethod)}
        >
          {methodsFor(v.name).map((m) => (
            <option key={m} value={m}>
              {METHOD_LABELS[m]}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="btn small"
          aria-label={`Apply method for ${v.name}`}
          disabled={busy || method === v.method}
          onClick={() => {
            setBusy(true)
            setError(null)
            void change(orderId, v.name, method).then((e) => {
              setBusy(false)
              setError(e)
            })
          }}
        >
          Apply
        </button>
      </span>
      <ErrorBox text={error} />
    </>
  )
}

/** "2 of 3 names valid · HTTP 2, DNS 1": how far the order is, and by which methods. */
export function validationSummary(rows: NameValidationView[]): string {
  const valid = rows.filter((v) => v.status === 'valid').length
  const counts = new Map<string, number>()
  for (const v of rows) counts.set(v.method, (counts.get(v.method) ?? 0) + 1)
  const methods = [...counts].map(([m, n]) => (counts.size === 1 ? m.toUpperCase() : `${m.toUpperCase()} ${n}`))
  return `${valid} of ${rows.length} ${rows.length === 1 ? 'name' : 'names'} valid · ${methods.join(', ')}`
}
