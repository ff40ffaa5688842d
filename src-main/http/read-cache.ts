/**
 * Answers to repeated GETs, reused while the store has not changed. Scripts poll the same
 * lists over and over; rebuilding 50 orders and 36 kB of JSON for an unchanged store cost
 * ~0.8 ms a time (issue 7 profile). The key is the caller and the exact URL, checked after
 * authentication on every request, and an entry is used only while `storeVersion` is the
 * one it was built at, so a write from any process is seen by the very next request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Service } from '../core/service'

/**
 * Routes whose answer is computed from the store alone. A route whose answer reads the clock
 * (days remaining, "today" in GET /stats) must never be listed here.
 */
const CACHEABLE = new Set(['/products', '/orders', '/invoices', '/credits', '/balance', '/account'])
const MAX_ENTRIES = 512
const MAX_BYTES = 512 * 1024

interface Entry {
  version: string
  /** The bytes as sent: no UTF-8 encoding of a 36 kB string on every hit. */
  payload: Buffer
  contentType: string
}

declare module 'fastify' {
  interface FastifyRequest {
    readCacheVersion: string | null
  }
}

const keyOf = (request: FastifyRequest): string => `${request.reseller?.id ?? 0} ${request.url}`

export function installReadCache(app: FastifyInstance, service: Service): void {
  const entries = new Map<string, Entry>()
  app.decorateRequest('readCacheVersion', null)
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'GET' || !request.reseller || !CACHEABLE.has(request.routeOptions.url ?? '')) return
    const version = request.storeVersion ?? (await service.ctx.storeVersion())
    const hit = entries.get(keyOf(request))
    if (hit && hit.version === version) {
      return reply.code(200).header('content-type', hit.contentType).send(hit.payload)
    }
    request.readCacheVersion = version
  })
  app.addHook('onSend', async (request, reply, payload) => {
    const version = request.readCacheVersion
    if (version === null || reply.statusCode !== 200 || typeof payload !== 'string' || payload.length > MAX_BYTES)
      return payload
    const key = keyOf(request)
    entries.delete(key)
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string)
    entries.set(key, {
      version,
      payload: Buffer.from(payload),
      contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8')
    })
    return payload
  })
}
