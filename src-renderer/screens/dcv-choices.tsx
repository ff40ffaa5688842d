/**
 * The validation choice of the CSR step: one method for the order, and for an order of several
 * names a method of each name's own (a file for hosts, DNS for the wildcard, email where still
 * allowed), with the approver of each name validated by email (BR §3.2.2.4.4: the name or a
 * parent of it up to its registrable domain).
 */
import { useEffect, useState } from 'react'
import type { DcvMethod, NameChoice } from '../../src-preload/contract'
import { defaultMethodOf, METHOD_LABELS, methodsFor } from '../lib/dcv-methods'
import { useStore } from '../store'

export interface DcvPicks {
  /** The method of the order, the default of every name. */
  method: DcvMethod
  /** Methods picked for single names. */
  methods: Record<string, DcvMethod>
  /** Approvers picked for names validated by email. */
  approvers: Record<string, string>
}

export const freshPicks = (): DcvPicks => ({ method: 'http', methods: {}, approvers: {} })

/** Each name's method: its own pick, else the order's (DNS for a wildcard when that is a file). */
export const methodOf = (picks: DcvPicks, name: string): DcvMethod =>
  picks.methods[name] ?? defaultMethodOf(name, picks.method)

/** What the core is sent: the order's method, the names that differ, the email approvers. */
export function dcvRequest(
  picks: DcvPicks,
  names: string[],
  choices: Record<string, string[]>
): { dcvMethod: DcvMethod; perName?: NameChoice[]; approvers?: Record<string, string> } {
  const perName = names
    .filter((n) => methodOf(picks, n) !== picks.method)
    .map((n) => ({ name: n, method: methodOf(picks, n) }))
  const email = names.filter((n) => methodOf(picks, n) === 'email')
  return {
    dcvMethod: picks.method,
    perName: perName.length > 0 ? perName : undefined,
    approvers:
      email.length > 0
        ? Object.fromEntries(
            email.map((n) => [n, picks.approvers[n] ?? choices[n]?.[0] ?? `admin@${n.replace(/^\*\./, '')}`])
          )
        : undefined
  }
}

/** The approver addresses of `names`, read from the core (the Public Suffix List lives there). */
export function useApproverChoices(names: string[]): Record<string, string[]> {
  const load = useStore((s) => s.approverChoices)
  const [choices, setChoices] = useState<Record<string, string[]>>({})
  const key = names.join(' ')
  useEffect(() => {
    if (!key) return setChoices({})
    let live = true
    void load(key.split(' ')).then((c) => live && setChoices(c))
    return () => {
      live = false
    }
  }, [key, load])
  return choices
}

export function DcvChoices({
  names,
  choices,
  picks,
  onPick
}: {
  names: string[]
  /** Each name's approver addresses (`useApproverChoices`). */
  choices: Record<string, string[]>
  picks: DcvPicks
  onPick: (picks: DcvPicks) => void
}): React.JSX.Element {
  const several = names.length > 1
  return (
    <div className="dcv-choices" data-testid="dcv-choices">
      <div className="row">
        <label>
          Validation method
          <select
            aria-label="Validation method"
            value={picks.method}
            onChange={(e) => onPick({ ...picks, method: e.target.value as DcvMethod })}
          >
            {(['http', 'https', 'dns', 'email'] as const).map((m) => (
              <option key={m} value={m}>
                {METHOD_LABELS[m]}
              </option>
            ))}
          </select>
        </label>
        {several ? <p className="muted small grow">Each name can use its own method below.</p> : null}
      </div>
      {names.length === 0 && picks.method === 'email' ? (
        <p className="muted small">Generate or paste the CSR to choose its approvers.</p>
      ) : null}
      {names.length > 0 ? (
        <table className="table compact dcv-names" aria-label="Validation per name">
          <thead>
            <tr>
              <th scope="col">Name</th>
              {several ? <th scope="col">Method</th> : null}
              <th scope="col">Approver</th>
            </tr>
          </thead>
          <tbody>
            {names.map((name) => {
              const method = methodOf(picks, name)
              const approvers = choices[name] ?? []
              return (
                <tr key={name} data-name={name}>
                  <td className="mono break">{name}</td>
                  {several ? (
                    <td>
                      <select
                        aria-label={`Method for ${name}`}
                        value={method}
                        onChange={(e) =>
                          onPick({ ...picks, methods: { ...picks.methods, [name]: e.target.value as DcvMethod } })
                        }
                      >
                        {methodsFor(name).map((m) => (
                          <option key={m} value={m}>
                            {METHOD_LABELS[m]}
                          </option>
                        ))}
                      </select>
                    </td>
                  ) : null}
                  <td>
                    {method === 'email' ? (
                      <select
                        aria-label={`Approver for ${name}`}
                        value={picks.approvers[name] ?? approvers[0] ?? ''}
                        onChange={(e) =>
                          onPick({ ...picks, approvers: { ...picks.approvers, [name]: e.target.value } })
                        }
                      >
                        {approvers.map((a) => (
                          <option key={a}>{a}</option>
                        ))}
                      </select>
                    ) : (
                      <span className="muted small">not needed</span>
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      ) : null}
    </div>
  )
}
