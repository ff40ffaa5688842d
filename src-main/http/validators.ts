/**
 * How requests are checked against their route's schema. Query strings arrive as text, so query
 * and path parameters are coerced ("limit=5" is 5). JSON bodies are not: `"product_id": "5"` is
 * a 400, and unknown body fields are refused rather than silently dropped, so a typo such as
 * `perod` never goes unnoticed. The same holds for the query: `/credits?type=debit` names the
 * parameter it does not know instead of answering the whole list as if no filter was asked.
 */
import Ajv, { type ValidateFunction } from 'ajv'
import type { FastifyInstance } from 'fastify'

/**
 * A query parameter may carry the sentence a refusal of its value says (`x-invalid-message`),
 * where the failed keyword would read worse ("since must match pattern …").
 */
export const INVALID_MESSAGE = 'x-invalid-message'

/**
 * A body field whose `pattern` the core checks itself, with a reason a person can act on ("a
 * certificate, not a certificate signing request") rather than the pattern: the description
 * shows the pattern, and the core refuses what it refuses.
 */
export const CORE_EXPLAINS = 'x-core-explains'

/** `schema` without the patterns the core checks itself (CORE_EXPLAINS). */
function withoutCorePatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutCorePatterns)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  const s = schema as Record<string, unknown>
  for (const [k, v] of Object.entries(s)) if (!(k === 'pattern' && s[CORE_EXPLAINS])) out[k] = withoutCorePatterns(v)
  return out
}

type PartCheck = ((data: unknown) => boolean | { error: Error }) & { errors?: ValidateFunction['errors'] }

/** `unknown query parameter "type"; GET /credits takes limit, offset` */
function unknownParameter(name: unknown, method: string, url: string, known: string[]): Error {
  const takes = known.length ? `takes ${known.join(', ')}` : 'takes no query parameters'
  const err = new Error(`invalid request: unknown query parameter ${JSON.stringify(name)}; ${method} ${url} ${takes}`)
  return Object.assign(err, { statusCode: 400 })
}

export function installValidators(app: FastifyInstance): void {
  // verbose: a failed keyword carries the schema it failed (for INVALID_MESSAGE)
  const lenient = new Ajv({
    coerceTypes: 'array',
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    verbose: true
  })
  const strictBody = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false })
  for (const a of [lenient, strictBody]) a.addKeyword('example')
  app.setValidatorCompiler(({ schema, httpPart, method, url }) => {
    if (httpPart === 'body') return strictBody.compile(withoutCorePatterns(schema) as object)
    const validate = lenient.compile(schema)
    const known = Object.keys((schema as { properties?: object }).properties ?? {})
    const check: PartCheck = (data) => {
      if (validate(data)) return true
      const unknown = validate.errors?.find((e) => e.keyword === 'additionalProperties')
      if (unknown && httpPart === 'querystring')
        return { error: unknownParameter(unknown.params.additionalProperty, method, url, known) }
      const said = validate.errors?.map(
        (e) => (e.parentSchema as Record<string, unknown> | undefined)?.[INVALID_MESSAGE]
      )
      const message = said?.find((m) => typeof m === 'string')
      if (message) return { error: Object.assign(new Error(message as string), { statusCode: 400 }) }
      check.errors = validate.errors
      return false
    }
    return check
  })
}
