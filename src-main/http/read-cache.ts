/**
 * Answers to repeated GETs, reused while what they were computed from is unchanged. Scripts
 * poll the same lists over and over; rebuilding 50 orders and 36 kB of JSON costs far more than
 * sending kept bytes. Each answer is kept with the versions of the store's parts it was computed
 * from (core/store-version.ts: the caller's own rows, the catalogue) and used only while both
 * are what they were, so a write from any process that changes an answer is seen by the very
 * next request, and a write that cannot change it (another reseller's order) leaves it in place.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Reseller } from '../core/resellers'
import type { Service } from '../core/service'
import type { ScopeVersions } from '../core/store-version'

interface Cacheable {
  /**
   * `group`: the answer is the same for every reseller of a group and is computed from the
   * catalogue alone. `reseller`: computed from the caller's own rows and the catalogue.
   */
  basis: 'group' | 'reseller'
  /** The answer reads the clock, but only through the day it is computed for. */
  byDay?: boolean
}

/**
 * Routes whose answer is computed from the store alone, or from the store and the day. A route
 * whose answer reads the clock in any other way must never be listed here.
 */
const CACHEABLE = new Map<string, Cacheable>([
  ['/products', { basis: 'group' }],
  ['/orders', { basis: 'reseller' }],
  ['/invoices', { basis: 'reseller' }],
  ['/credits', { basis: 'reseller' }],
  ['/balance', { basis: 'reseller' }],
  ['/account', { basis: 'reseller' }],
  // GET /stats: the last 30 days and this month, counted from "today" (core/stats.ts).
  ['/stats', { basis: 'reseller', byDay: true }]
])
const MAX_ENTRIES = 512
const MAX_BYTES = 512 * 1024

export interface Entry {
  /** Null for a group's answer, which no reseller's own rows change. */
  reseller: string | null
  catalogue: string
  /** The bytes as sent: no UTF-8 encoding of a 36 kB string on every hit. */
  payload: Buffer
  contentType: string
}

/** What a cache lookup found, for tests that must tell a kept answer from a rebuilt one. */
export interface ReadCacheCounters {
  hits: number
  misses: number
}

interface Pending {
  key: string
  versions: ScopeVersions
  basis: Cacheable['basis']
  day: string | null
}

declare module 'fastify' {
  interface FastifyRequest {
    readCachePending: Pending | null
  }
  interface FastifyInstance {
    readCache: ReadCacheCounters
  }
}

function keyOf(reseller: Reseller, route: Cacheable, url: string, day: string | null): string | null {
  if (route.basis === 'group') return reseller.groupId === null ? null : `g${reseller.groupId} ${url}`
  return day === null ? `r${reseller.id} ${url}` : `r${reseller.id} ${day} ${url}`
}

const fresh = (entry: Entry, v: ScopeVersions): boolean =>
  entry.catalogue === v.catalogue && (entry.reseller === null || entry.reseller === v.reseller)

/** The read cache's answers, for callers that authenticated the request themselves (fast-reads.ts). */
export interface KeptAnswers {
  /** Whether GET `path` (no query) is a route the cache may answer. */
  cacheable(path: string): boolean
  /** The kept answer to GET `url` on `path` for `reseller` at `versions`, or null. */
  answer(reseller: Reseller, path: string, url: string, versions: ScopeVersions): Entry | null
}

export function installReadCache(app: FastifyInstance, service: Service): KeptAnswers {
  const entries = new Map<string, Entry>()
  const counters: ReadCacheCounters = { hits: 0, misses: 0 }
  app.decorate('readCache', counters)
  app.decorateRequest('readCachePending', null)
  const dayOf = (route: Cacheable): string | null => (route.byDay ? service.stats.day() : null)

  app.addHook('preHandler', async (request, reply) => {
    const route = request.method === 'GET' ? CACHEABLE.get(request.routeOptions.url ?? '') : undefined
    const versions = request.scopeVersions
    if (!route || !request.reseller || !versions) return
    const day = dayOf(route)
    const key = keyOf(request.reseller, route, request.url, day)
    if (key === null) return
    const hit = entries.get(key)
    if (hit && fresh(hit, versions)) {
      counters.hits += 1
      return reply.code(200).header('content-type', hit.contentType).send(hit.payload)
    }
    counters.misses += 1
    request.readCachePending = { key, versions, basis: route.basis, day }
  })

  app.addHook('onSend', async (request: FastifyRequest, reply, payload) => {
    const pending = request.readCachePending
    const text = typeof payload === 'string'
    if (
      pending === null ||
      reply.statusCode !== 200 ||
      !(text || Buffer.isBuffer(payload)) ||
      payload.length > MAX_BYTES
    )
      return payload
    // Midnight passed while the answer was computed: it may be the next day's, not this key's.
    if (pending.day !== null && dayOf({ basis: pending.basis, byDay: true }) !== pending.day) return payload
    const bytes = text ? Buffer.from(payload) : payload
    entries.delete(pending.key)
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string)
    entries.set(pending.key, {
      reseller: pending.basis === 'group' ? null : pending.versions.reseller,
      catalogue: pending.versions.catalogue,
      payload: bytes,
      contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8')
    })
    // The bytes just made, sent as they are: the string would be encoded a second time.
    return bytes
  })
  return {
    cacheable: (path) => CACHEABLE.has(path),
    answer(reseller, path, url, versions) {
      const route = CACHEABLE.get(path)
      if (!route) return null
      const key = keyOf(reseller, route, url, dayOf(route))
      const hit = key === null ? undefined : entries.get(key)
      if (!hit || !fresh(hit, versions)) return null
      counters.hits += 1
      return hit
    }
  }
}
