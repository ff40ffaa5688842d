/**
 * The bridge's argument check, run by both transports (IPC and browser-mode RPC) before a
 * handler: every argument against its schema in the contract table (src-shared/app-api.ts),
 * compiled once at start. The renderer is trusted less than main, so nothing of the wrong type
 * reaches the core; the core still checks the values.
 */
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { OptionalKind, type TSchema } from '@sinclair/typebox'
import { APP_API, type AppMethod } from '../../src-shared/app-api'

interface CompiledArg {
  name: string
  optional: boolean
  check: TypeCheck<TSchema>
}

const compiled = new Map<AppMethod, CompiledArg[]>(
  (Object.keys(APP_API) as AppMethod[]).map((m) => [
    m,
    APP_API[m].args.map((a) => ({
      name: a.name,
      optional: (a.schema as unknown as Record<symbol, unknown>)[OptionalKind] === 'Optional',
      check: TypeCompiler.Compile(a.schema)
    }))
  ])
)

/** `/items/0/name` → `items[0].name`, after the argument's name. */
const fieldPath = (path: string): string =>
  path
    .split('/')
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')

export type ArgsCheck = { ok: true; args: unknown[] } | { ok: false; error: string }

/**
 * Checks a call's arguments; the refusal names the method, the argument (and its field) and
 * what it must be. A trailing optional argument may be missing or null (JSON turns a missing
 * argument inside the list into null), and reaches the handler as undefined.
 */
export function checkArgs(method: AppMethod, args: readonly unknown[]): ArgsCheck {
  const specs = compiled.get(method)!
  if (args.length > specs.length)
    return {
      ok: false,
      error: `could not call ${method}: it takes at most ${specs.length} arguments, not ${args.length}`
    }
  const out: unknown[] = []
  for (const [i, spec] of specs.entries()) {
    const value = args[i]
    if (spec.optional && (value === undefined || value === null)) {
      out.push(undefined)
      continue
    }
    if (spec.check.Check(value)) {
      out.push(value)
      continue
    }
    const first = spec.check.Errors(value).First()
    const schema = first?.schema as { must?: string; title?: string } | undefined
    const must = schema?.must ?? first?.message ?? 'is not valid'
    const field = first ? fieldPath(first.path) : ''
    // A field with a title reads as that ("product id"); otherwise its path in the argument ("filter.type").
    const label = !field ? spec.name : (schema?.title ?? `${spec.name.replace(/ /g, '')}${field}`)
    return { ok: false, error: `could not call ${method}: ${label} ${must}` }
  }
  return { ok: true, args: out }
}
