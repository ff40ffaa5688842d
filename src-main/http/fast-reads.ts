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
import type { Service } from '../core/service'
import type { ScopeVersions } from '../core/store/store-version'
import { hostAccepter, hostName, type HostPolicy } from '../common/host-header'
import { handedVersions, presentedKey, sameVersions, type KnownKeys } from './auth'
import { precharged, type RateLimiter } from './rate-limit'
import type { KeptAnswers } from './read-cache'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** Distinct Host headers remembered with their verdict (a client sends the same one each time). */
const MAX_HOSTS = 64

/**
 * Scope versions asked of the store during one turn of the event loop, shared by the requests of
 * that turn while this process has written nothing (`localWrites`). A read of the store costs a
 * read transaction (file locks, the WAL index; a round trip to PostgreSQL); under load one turn
 * carries dozens of requests. A reading asked for in this turn is taken by the store after every
 * request of the turn had arrived (they were read off their sockets before the turn ran): SQLite
 * reads at once on this thread, PostgreSQL takes its snapshot once the query reaches it. So it
 * vouches for all of them, whatever another process or node committed before they were sent. A
 * reading asked for in an earlier turn, even one that only now came back, vouches for none of
 * this turn's requests: a script that wrote through another node and then reads through this
 * one may have sent its read after that reading was taken.
 */
class TurnVersions {
  private readonly kept = new Map<number, Promise<ScopeVersions>>()
  private writes = -1

  constructor(private readonly service: Service) {}

  get(resellerId: number): Promise<ScopeVersions> | undefined {
    if (this.kept.size === 0) return undefined
    if (this.service.ctx.localWrites() !== this.writes) {
      this.kept.clear()
      return undefined
    }
    return this.kept.get(resellerId)
  }

  read(resellerId: number): Promise<ScopeVersions> {
    // Counted before the read: a write landing in between makes the kept versions look stale, never fresh.
    const writes = this.service.ctx.localWrites()
    const versions = this.service.ctx.scopeVersions(resellerId)
    this.keep(resellerId, versions, writes)
    return versions
  }

  /**
   * After this process wrote an order of `resellerId` (CreatedOrder.moved): the versions read at
   * the end of that write are the reseller's for the rest of the turn. Those kept for others
   * stay as good as they were when the order was all this process wrote since they were read
   * (`writesBefore`: its count of written rows just before the order), since an order moves no
   * other reseller's scope and not the catalogue's; otherwise they are let go, as after any write.
   * On a store other nodes write to, the versions of the order's own transaction were taken
   * before this turn (its commit came back over the network), so they are not kept.
   */
  orderPlaced(resellerId: number, moved: { from: ScopeVersions; to: ScopeVersions }, writesBefore: number): void {
    const writes = this.service.ctx.localWrites()
    if (this.writes === writesBefore && moved.from.catalogue === moved.to.catalogue) this.writes = writes
    if (this.service.ctx.sharedStore) {
      if (writes === this.writes) this.kept.delete(resellerId)
      else this.kept.clear()
      return
    }
    this.keep(resellerId, Promise.resolve(moved.to), writes)
  }

  private keep(resellerId: number, versions: Promise<ScopeVersions>, writes: number): void {
    if (this.kept.size === 0 || writes !== this.writes) {
      this.kept.clear()
      this.writes = writes
      setImmediate(() => this.kept.clear())
    }
    // A failed reading is the asker's to answer (fastify, in the envelope); it is not kept.
    void versions.catch(() => {
      if (this.kept.get(resellerId) === versions) this.kept.delete(resellerId)
    })
    this.kept.set(resellerId, versions)
  }
}

export function installFastReads(
  app: FastifyInstance,
  service: Service,
  keys: KnownKeys,
  answers: KeptAnswers,
  hosts: HostPolicy,
  limiter: RateLimiter | null = null
): Pick<TurnVersions, 'orderPlaced'> {
  const accepts = hostAccepter(hosts)
  const hostOk = new Map<string, boolean>()
  const acceptsHost = (header: string | undefined): boolean => {
    if (header === undefined) return false
    let ok = hostOk.get(header)
    if (ok === undefined) {
      const host = hostName(header)
      ok = host !== null && accepts(host)
      if (hostOk.size >= MAX_HOSTS) hostOk.clear()
      hostOk.set(header, ok)
    }
    return ok
  }
  const turn = new TurnVersions(service)
  const server = app.server
  const handlers = server.listeners('request') as Handler[]
  // fastify's own handler, registered when the instance was built; nothing else listens yet.
  if (handlers.length !== 1) return turn
  const fastify = handlers[0]
  const logsRequests = (): boolean => {
    const log = app.log as { isLevelEnabled?: (level: string) => boolean }
    return typeof log.isLevelEnabled === 'function' && log.isLevelEnabled('info')
  }

  /** The kept answer, sent; false when the request is fastify's. */
  const send = async (
    res: ServerResponse,
    caller: ReturnType<KnownKeys['known']>,
    path: string,
    url: string,
    v: ScopeVersions
  ): Promise<boolean> => {
    if (!caller || !sameVersions(caller.versions, v)) return false
    const hit = await answers.answer(caller.reseller, path, url, v)
    if (!hit) return false
    res.writeHead(200, { 'content-type': hit.contentType, 'content-length': hit.payload.length })
    res.end(hit.payload)
    return true
  }

  server.removeListener('request', fastify)
  /** Answers from kept bytes when it can; true when the request is answered or will be. */
  const tryKept = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? ''
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    if (req.method !== 'GET' || !answers.cacheable(path) || !server.listening || logsRequests()) return false
    if (!acceptsHost(req.headers.host)) return false
    if (limiter) {
      // Counted here, once: fastify's hook reads the count for a request handed on.
      const wait = limiter.take(req.socket.remoteAddress ?? '')
      precharged.set(req, wait)
      if (wait !== 0) return false
    }
    const key = presentedKey(req)
    const caller = key ? keys.known(key) : null
    if (!caller) return false
    const resellerId = caller.reseller.id
    const kept = turn.get(resellerId)
    // Versions read for this request are handed on to fastify's own check (auth.ts).
    const versions = kept
      ? kept.then((v) => ({ v, handed: false }))
      : turn.read(resellerId).then((v) => ({ v, handed: true }))
    void versions
      .then(async ({ v, handed }) => ({ v, handed, sent: await send(res, caller, path, url, v) }))
      .then(
        ({ v, handed, sent }) => {
          if (sent) return
          if (handed) handedVersions.set(req, { resellerId, versions: v })
          fastify(req, res)
        },
        // A failure here (the store unreadable) is fastify's to answer, in the envelope.
        () => fastify(req, res)
      )
    return true
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let taken = false
    try {
      taken = tryKept(req, res)
    } catch {
      // fastify answers it, and any failure, in the envelope
    }
    if (!taken) fastify(req, res)
  })
  return turn
}
