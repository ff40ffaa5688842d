/**
 * Route registration that remembers each path's methods, so any other method on a known path
 * answers 405 with an `Allow` header (spec, "A method not supported on an endpoint yields 405").
 * Every operation of the reseller API (a route not hidden from /openapi.json) refuses query
 * parameters it does not declare, answers failures in the envelope, and has an operationId.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyInstance,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteHandlerMethod,
  FastifyBaseLogger
} from 'fastify'
import { failure } from './errors'
import { Failures, Query } from './schemas'

type Typed = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  { Body: unknown; Querystring: unknown; Params: unknown },
  unknown,
  S,
  TypeBoxTypeProvider
>

export class ApiRouter {
  private readonly methods = new Map<string, Set<string>>()

  constructor(readonly app: Typed) {}

  get<S extends FastifySchema>(url: string, schema: S & { hide?: boolean }, handler: Handler<S>): void {
    this.add('GET', url, schema, handler)
  }

  post<S extends FastifySchema>(url: string, schema: S, handler: Handler<S>): void {
    this.add('POST', url, schema, handler)
  }

  put<S extends FastifySchema>(url: string, schema: S, handler: Handler<S>): void {
    this.add('PUT', url, schema, handler)
  }

  delete<S extends FastifySchema>(url: string, schema: S, handler: Handler<S>): void {
    this.add('DELETE', url, schema, handler)
  }

  /** Each path with the methods it serves (HEAD with every GET), for the 405 answers and their checks. */
  served(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.methods
  }

  private add<S extends FastifySchema>(method: Method, url: string, schema: S, handler: Handler<S>): void {
    const set = this.methods.get(url) ?? new Set<string>()
    set.add(method)
    if (method === 'GET') set.add('HEAD')
    this.methods.set(url, set)
    this.app.route({ method, url, schema: operation(method, url, schema), handler: handler as never })
  }

  /** Registers the 405 answers; call once, after every route is added. */
  finish(): void {
    for (const [url, allowed] of this.methods) {
      const others = ALL_METHODS.filter((m) => !allowed.has(m))
      if (others.length === 0) continue
      const allow = ALL_METHODS.filter((m) => allowed.has(m)).join(', ')
      this.app.route({
        method: others,
        url,
        schema: { hide: true },
        config: { refusesMethod: true },
        handler: async (request, reply) =>
          reply
            .code(405)
            .header('allow', allow)
            .send(failure(`method ${request.method} is not allowed on ${url}; allowed: ${allow}`))
      })
    }
  }
}

/** The failure envelope for every 4xx and 5xx of an operation (which statuses: http/openapi/operations.ts). */
const NO_QUERY = Query({})

/**
 * An operation's schema as fastify takes it: without a query schema of its own it takes no query
 * parameters, and its failures are serialised as the envelope. A programming slip (no
 * operationId, a query that lets unknown parameters through) stops the server at start.
 */
function operation<S extends FastifySchema>(method: string, url: string, schema: S): S {
  const s = schema as S & { hide?: boolean; operationId?: string; querystring?: { additionalProperties?: unknown } }
  if (s.hide) return schema
  if (!s.operationId) throw new Error(`could not register ${method} ${url}: it has no operationId`)
  if (s.querystring && s.querystring.additionalProperties !== false)
    throw new Error(`could not register ${method} ${url}: its query schema must refuse unknown parameters`)
  const response = (s.response ?? {}) as Record<string, unknown>
  return { querystring: NO_QUERY, ...schema, response: { ...Failures, ...response } }
}
