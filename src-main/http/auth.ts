/**
 * Who is asking. Every request first passes the Host check (a page on another origin that
 * re-binds its DNS name to 127.0.0.1 sends its own name as Host) and then presents an API key
 * in `X-API-Key` or `Authorization: Bearer` (spec, "Authentication"). Keys are compared by hash.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ServiceError } from '../core/errors'
import { hashApiKey, type Reseller } from '../core/billing/resellers'
import type { Service } from '../core/service'
import type { ScopeVersions } from '../core/store/store-version'
import { hostAccepter, hostName, type HostPolicy } from '../common/host-header'
import { failure, STATUS_OF } from './errors'

export interface AuthOptions {
  /** Host names accepted besides the loopback ones, such as a configured local name. */
  allowedHosts?: string[]
  /** Whether loopback names are accepted as Host (true unless the listener is the public one). */
  loopbackHosts?: boolean
  /**
   * How a refusal before any route runs (a wrong Host, too many requests) is answered; the
   * reseller API's envelope unless the listener serves other protocols too (ACME's problems).
   */
  refuse?: Refusal
  /**
   * Routes that authenticate on their own (the browser-mode UI with its session): return true
   * to let the request through without an API key.
   */
  ownAuth?: (request: FastifyRequest) => boolean
}

export type Refusal = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => FastifyReply

/** The reseller API's refusal: the status with the envelope `{ success: false, error }`. */
export const envelopeRefusal: Refusal = (_request, reply, status, message) => reply.code(status).send(failure(message))

/** The Host policy of a listener built with these options. */
export const hostPolicyOf = (opts: AuthOptions): HostPolicy => ({
  loopback: opts.loopbackHosts ?? true,
  names: opts.allowedHosts ?? []
})

/** Why a Host header is refused, naming what the listener answers to. */
export const hostRefusal = (policy: HostPolicy): string =>
  policy.loopback
    ? 'request refused: the Host header is not a loopback name'
    : `request refused: the Host header is not ${policy.names.join(' or ')}`

export function presentedKey(request: Pick<FastifyRequest, 'headers'>): string | null {
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
    /** The caller's scope versions, read after authentication and before the handler runs. */
    scopeVersions: ScopeVersions | null
  }
}

interface KnownKey {
  reseller: Reseller
  /** Versions read before the lookup that found `reseller`; null when they were read after it. */
  versions: ScopeVersions | null
}

export const sameVersions = (a: ScopeVersions, b: ScopeVersions): boolean =>
  a.reseller === b.reseller && a.catalogue === b.catalogue

/** A key that authenticated before, with the scope versions its lookup was read at. */
export interface KnownCaller {
  reseller: Reseller
  versions: ScopeVersions
}

export interface KnownKeys {
  /**
   * The caller of `key` without a lookup, when the key authenticated before at versions that
   * vouch for it; null otherwise. The answer holds only while the reseller's scope versions
   * are still `versions` (its keys, its account row unchanged): the caller compares.
   */
  known(key: string): KnownCaller | null
  /**
   * After an order of `resellerId` was written (CreatedOrder.moved): keys that vouched for the
   * reseller just before it vouch for it just after, with the new balance, the one thing such a
   * write changes in the reseller's keys and account row.
   */
  orderPlaced(resellerId: number, moved: { from: ScopeVersions; to: ScopeVersions }, creditBalance: number): void
}

/**
 * Scope versions the fast path (fast-reads.ts) already read for a request it then hands to
 * fastify, so they are not read a second time. Read before anything is looked up or answered
 * for the request, they are as good as versions read in the hook.
 */
export const handedVersions = new WeakMap<IncomingMessage, { resellerId: number; versions: ScopeVersions }>()

export function installAuth(app: FastifyInstance, service: Service, opts: AuthOptions): KnownKeys {
  const known = new Map<string, KnownKey>()
  const remember = (hash: string, entry: KnownKey): void => {
    if (!known.has(hash) && known.size >= MAX_KNOWN_KEYS) known.clear()
    known.set(hash, entry)
  }
  app.decorateRequest('scopeVersions', null)
  const policy = hostPolicyOf(opts)
  const accepts = hostAccepter(policy)
  const refusal = hostRefusal(policy)
  const refuse = opts.refuse ?? envelopeRefusal
  app.addHook('onRequest', async (request, reply) => {
    const host = hostName(request.headers.host)
    if (!host || !accepts(host)) return refuse(request, reply, 403, refusal)
    if (opts.ownAuth?.(request)) return
    const key = presentedKey(request)
    if (!key) {
      return reply.code(401).send(failure('missing API key: send it as X-API-Key or Authorization: Bearer'))
    }
    const hash = hashApiKey(key)
    try {
      // Only a GET may be answered from the read cache (read-cache.ts), which needs the scope
      // versions; any other request looks its key up afresh, one indexed read, and reads no
      // versions. A POST /orders moves its reseller's versions anyway, so a memo checked
      // against them would miss on every order.
      if (request.method !== 'GET') {
        request.reseller = await service.resellers.authenticate(key)
        return
      }
      // Who a key belongs to is read from the key's row and its reseller's row, both in the
      // reseller's scope: the answer holds until a write moves that scope (another reseller's
      // order does not). Versions are read before the lookup they vouch for, so a write landing
      // in between can only make them older than the answer, never newer.
      const memo = known.get(hash)
      if (memo) {
        const handed = handedVersions.get(request.raw)
        const versions =
          handed?.resellerId === memo.reseller.id ? handed.versions : await service.ctx.scopeVersions(memo.reseller.id)
        if (memo.versions && sameVersions(memo.versions, versions)) {
          request.reseller = memo.reseller
        } else {
          request.reseller = await service.resellers.authenticate(key)
          remember(hash, {
            reseller: request.reseller,
            versions: request.reseller.id === memo.reseller.id ? versions : null
          })
        }
        request.scopeVersions =
          request.reseller.id === memo.reseller.id ? versions : await service.ctx.scopeVersions(request.reseller.id)
      } else {
        request.reseller = await service.resellers.authenticate(key)
        // Read after the lookup, these may already count a write the lookup did not see: good
        // enough for answers computed from here on, not to vouch for this lookup later.
        remember(hash, { reseller: request.reseller, versions: null })
        request.scopeVersions = await service.ctx.scopeVersions(request.reseller.id)
      }
    } catch (err) {
      known.delete(hash)
      if (err instanceof ServiceError) return reply.code(STATUS_OF[err.kind]).send(failure(err.message))
      throw err
    }
  })
  return {
    known(key) {
      const memo = known.get(hashApiKey(key))
      return memo?.versions ? { reseller: memo.reseller, versions: memo.versions } : null
    },
    orderPlaced(resellerId, moved, creditBalance) {
      for (const memo of known.values()) {
        if (memo.reseller.id !== resellerId || !memo.versions || !sameVersions(memo.versions, moved.from)) continue
        memo.reseller = { ...memo.reseller, creditBalance }
        memo.versions = moved.to
      }
    }
  }
}

/** The authenticated reseller of a reseller-API route (the hook guarantees one). */
export function caller(request: FastifyRequest): NonNullable<FastifyRequest['reseller']> {
  if (!request.reseller) throw new ServiceError('unauthorized', 'missing API key')
  return request.reseller
}
