/**
 * Route registration that remembers each path's methods, so any other method on a known path
 * answers 405 with an `Allow` header (spec, "A method not supported on an endpoint yields 405").
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

  private add<S extends FastifySchema>(method: Method, url: string, schema: S, handler: Handler<S>): void {
    const set = this.methods.get(url) ?? new Set<string>()
    set.add(method)
    if (method === 'GET') set.add('HEAD')
    this.methods.set(url, set)
    this.app.route({ method, url, schema, handler: handler as never })
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
