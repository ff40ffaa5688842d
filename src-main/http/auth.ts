/**
 * Who is asking. Every request first passes the Host check (a page on another origin that
 * re-binds its DNS name to 127.0.0.1 sends its own name as Host) and then presents an API key
 * in `X-API-Key` or `Authorization: Bearer` (spec, "Authentication"). Keys are compared by hash.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ServiceError } from '../core/errors'
import { hashApiKey, type Reseller } from '../core/resellers'
import type { Service } from '../core/service'
import { hostName, isLoopbackName } from '../common/host-header'
import { failure, STATUS_OF } from './errors'

export interface AuthOptions {
  /** Host names accepted besides the loopback ones, such as a configured local name. */
  allowedHosts?: string[]
  /**
   * Routes that authenticate on their own (the browser-mode UI with its session): return true
   * to let the request through without an API key.
   */
  ownAuth?: (request: FastifyRequest) => boolean
}

export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers['x-api-key']
  if (typeof header === 'string' && header.length > 0) return header.trim()
  const auth = request.headers.authorization
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth)
    if (m) return m[1]
  }
  return null
}

/** Keys remembered at most (only keys that authenticated; a wrong key is never kept). */
const MAX_KNOWN_KEYS = 1024

declare module 'fastify' {
  interface FastifyRequest {
    /** `storeVersion` when the request was authenticated. */
    storeVersion: string | null
  }
}

export function installAuth(app: FastifyInstance, service: Service, opts: AuthOptions): void {
  const known = new Map<string, { version: string; reseller: Reseller }>()
  app.decorateRequest('storeVersion', null)
  const allowed = new Set((opts.allowedHosts ?? []).map((h) => h.toLowerCase()))
  app.addHook('onRequest', async (request, reply) => {
    const host = hostName(request.headers.host)
    if (!host || !(isLoopbackName(host) || allowed.has(host))) {
      return reply.code(403).send(failure('request refused: the Host header is not a loopback name'))
    }
    if (opts.ownAuth?.(request)) return
    const key = presentedKey(request)
    if (!key) {
      return reply.code(401).send(failure('missing API key: send it as X-API-Key or Authorization: Bearer'))
    }
    try {
      // Who a key belongs to changes only when the store does: reuse the answer until then.
      const version = await service.ctx.storeVersion()
      const hash = hashApiKey(key)
      const memo = known.get(hash)
      if (memo && memo.version === version) {
        request.reseller = memo.reseller
      } else {
        request.reseller = service.resellers.authenticate(key)
        if (known.size >= MAX_KNOWN_KEYS) known.clear()
        known.set(hash, { version, reseller: request.reseller })
      }
      request.storeVersion = version
    } catch (err) {
      if (err instanceof ServiceError) return reply.code(STATUS_OF[err.kind]).send(failure(err.message))
      throw err
    }
  })
}

/** The authenticated reseller of a reseller-API route (the hook guarantees one). */
export function caller(request: FastifyRequest): NonNullable<FastifyRequest['reseller']> {
  if (!request.reseller) throw new ServiceError('unauthorized', 'missing API key')
  return request.reseller
}
