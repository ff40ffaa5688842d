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
import { handedVersions, presentedKey, sameVersions, type KnownCaller, type KnownKeys } from './auth'
import { precharged, type RateLimiter } from './rate-limit'
import type { KeptAnswer, KeptAnswers } from './read-cache'

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
  private readonly kept = new Map<number, Reading>()
  private writes = -1

  /** `answer`: what is done with a request once its versions are read (null: the reading failed). */
  constructor(
    private readonly service: Service,
    private readonly answer: (asked: Asked, versions: ScopeVersions | null) => void
  ) {}

  /**
   * Answers `asked` with the versions of its reseller: kept for this turn, at once or with the
   * requests already waiting for them; otherwise read for it, and kept for the rest of the turn.
   * The requests of one reading are answered in one go, with no promise of their own.
   */
  ask(asked: Asked): void {
    const r = this.get(asked.resellerId)
    if (!r) {
      // Counted before the read: a write landing in between makes the kept versions look stale, never fresh.
      const writes = this.service.ctx.localWrites()
      asked.handed = true
      this.keep(
        asked.resellerId,
        this.waitFor(asked.resellerId, this.service.ctx.scopeVersions(asked.resellerId), [asked]),
        writes
      )
    } else if (r.waiting) r.waiting.push(asked)
    else this.settle([asked], r.versions ?? null)
  }

  private get(resellerId: number): Reading | undefined {
    if (this.kept.size === 0) return undefined
    if (this.service.ctx.localWrites() !== this.writes) {
      this.kept.clear()
      return undefined
    }
    return this.kept.get(resellerId)
  }

  /**
   * `waiting` is made by the caller: nested in the reading's own literal, the list was
   * pretenured by V8 in every run measured, and the young-generation collections took longer.
   */
  private waitFor(resellerId: number, versions: Promise<ScopeVersions>, waiting: Asked[]): Reading {
    const r: Reading = { waiting }
    const done = (v: ScopeVersions | null): void => {
      const asked = r.waiting ?? []
      r.waiting = null
      this.settle(asked, v)
      // Emptied once answered: if V8 moved the list to the old generation (it pretenures literals
      // whose objects tend to outlive a collection, as these do while a round trip lasts), a dead
      // list still full would keep its requests, and all they reach, alive through every
      // young-generation collection until the next full one (profiled: 4 times the collection
      // time, p99 7 ms against 2.5).
      asked.length = 0
    }
    versions.then(
      (v) => {
        r.versions = v
        done(v)
      },
      // A failed reading is the askers' to answer (fastify, in the envelope); it is not kept.
      () => {
        if (this.kept.get(resellerId) === r) this.kept.delete(resellerId)
        done(null)
      }
    )
    return r
  }

  private settle(asked: Asked[], versions: ScopeVersions | null): void {
    for (const a of asked) {
      try {
        this.answer(a, versions)
      } catch {
        // handed to fastify already; the others are still answered
      }
    }
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
    this.keep(resellerId, { versions: moved.to, waiting: null }, writes)
  }

  private keep(resellerId: number, reading: Reading, writes: number): void {
    if (this.kept.size === 0 || writes !== this.writes) {
      this.kept.clear()
      this.writes = writes
      setImmediate(() => this.kept.clear())
    }
    this.kept.set(resellerId, reading)
  }
}

/** A GET the fast path took, waiting for its reseller's versions. */
interface Asked {
  req: IncomingMessage
  res: ServerResponse
  caller: KnownCaller
  resellerId: number
  path: string
  url: string
  /** Whether the versions were read for this request (then handed on to fastify's own check). */
  handed: boolean
}

/** One reading of a reseller's versions in this turn. */
interface Reading {
  versions?: ScopeVersions
  /** The requests waiting for the versions; null once they came (or the reading failed). */
  waiting: Asked[] | null
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
  let answerAsked: (asked: Asked, versions: ScopeVersions | null) => void = () => undefined
  const turn = new TurnVersions(service, (asked, versions) => answerAsked(asked, versions))
  const server = app.server
  const handlers = server.listeners('request') as Handler[]
  // fastify's own handler, registered when the instance was built; nothing else listens yet.
  if (handlers.length !== 1) return turn
  const fastify = handlers[0]
  const logsRequests = (): boolean => {
    const log = app.log as { isLevelEnabled?: (level: string) => boolean }
    return typeof log.isLevelEnabled === 'function' && log.isLevelEnabled('info')
  }

  /**
   * The kept answer, sent: true when it went, false when the request is fastify's, a promise of
   * either when the answer's bytes must first be made. No promise where none is needed: with
   * AsyncLocalStorage in use every promise costs hooks, and this runs for every request.
   */
  const send = (a: Asked, v: ScopeVersions): boolean | Promise<boolean> => {
    if (!sameVersions(a.caller.versions, v)) return false
    const hit = answers.answer(a.caller.reseller, a.path, a.url, v)
    if (hit === null) return false
    if (hit instanceof Promise) return hit.then((h) => h !== null && write(a.res, h))
    return write(a.res, hit)
  }
  const write = (res: ServerResponse, hit: KeptAnswer): true => {
    res.writeHead(200, { 'content-type': hit.contentType, 'content-length': hit.payload.length })
    res.end(hit.payload)
    return true
  }
  /** To fastify, with the versions when they were read for this request (auth.ts checks with them). */
  const handOn = (a: Asked, v: ScopeVersions): void => {
    if (a.handed) handedVersions.set(a.req, { resellerId: a.resellerId, versions: v })
    fastify(a.req, a.res)
  }
  answerAsked = (a, v) => {
    // A failure reading the versions (the store unreadable) is fastify's to answer, in the envelope.
    if (v === null) return fastify(a.req, a.res)
    let sent: boolean | Promise<boolean>
    try {
      sent = send(a, v)
    } catch {
      return fastify(a.req, a.res)
    }
    if (sent === false) handOn(a, v)
    else if (sent !== true)
      void sent.then(
        (s) => s || handOn(a, v),
        () => fastify(a.req, a.res)
      )
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
    turn.ask({ req, res, caller, resellerId: caller.reseller.id, path, url, handed: false })
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
