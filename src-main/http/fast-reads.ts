/**
 * Kept answers sent before fastify sees the request. A polling script's repeated GET is answered
 * from the read cache (read-cache.ts) in a fraction of what fastify's request set-up, routing,
 * hooks and reply machinery cost around it (profiled under wrk: more than the answer itself).
 *
 * Only a request that would get exactly that answer through fastify is taken here: a GET of a
 * cacheable route, a Host header the onRequest hook accepts, an API key that authenticated
 * before and whose reseller's scope has not moved since (auth.ts), and a kept answer computed
 * at the scope versions read for this very request. Anything else (no key, a wrong key, another
 * Host, a miss, a stale answer, an error, a server closing, request logging on) goes to fastify
 * untouched, which then answers it with every rule of the reseller API v3.0 envelope.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { hostName, isLoopbackName } from '../common/host-header'
import { presentedKey, type KnownKeys } from './auth'
import type { KeptAnswers } from './read-cache'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

export function installFastReads(
  app: FastifyInstance,
  keys: KnownKeys,
  answers: KeptAnswers,
  allowedHosts: readonly string[] = []
): void {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()))
  const server = app.server
  const handlers = server.listeners('request') as Handler[]
  // fastify's own handler, registered when the instance was built; nothing else listens yet.
  if (handlers.length !== 1) return
  const fastify = handlers[0]
  const logsRequests = (): boolean => {
    const log = app.log as { isLevelEnabled?: (level: string) => boolean }
    return typeof log.isLevelEnabled === 'function' && log.isLevelEnabled('info')
  }

  const answered = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = req.url ?? ''
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    if (req.method !== 'GET' || !answers.cacheable(path) || !server.listening || logsRequests()) return false
    const host = hostName(req.headers.host)
    if (!host || !(isLoopbackName(host) || allowed.has(host))) return false
    const key = presentedKey(req)
    if (!key) return false
    const caller = await keys.known(key)
    if (!caller) return false
    const hit = answers.answer(caller.reseller, path, url, caller.versions)
    if (!hit) return false
    res.writeHead(200, { 'content-type': hit.contentType, 'content-length': hit.payload.length })
    res.end(hit.payload)
    return true
  }

  server.removeListener('request', fastify)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answered(req, res).then(
      (done) => done || fastify(req, res),
      // A failure here (the store unreadable) is fastify's to answer, in the envelope.
      () => fastify(req, res)
    )
  })
}
