/**
 * Answers to repeated GETs, reused while what they were computed from is unchanged. Scripts
 * poll the same lists over and over; rebuilding 50 orders and 36 kB of JSON costs far more than
 * sending kept bytes. Each answer is kept with the versions of the store's parts it was computed
 * from (core/store/store-version.ts: the caller's own rows, the catalogue) and used only while both
 * are what they were, so a write from any process that changes an answer is seen by the very
 * next request, and a write that cannot change it (another reseller's order) leaves it in place.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Page } from '../core/billing/ledger'
import type { CreatedOrder, Order } from '../core/orders/orders'
import type { Reseller } from '../core/billing/resellers'
import type { Service } from '../core/service'
import { KeyedMutex } from '../core/mutex'
import type { ScopeVersions } from '../core/store/store-version'
import { JSON_CONTENT_TYPE, orderSerializer, pageBytes, type OrderSerializer } from './order-page'
import { statsJson } from './present'
import { StatsResponse } from './schemas'

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
  // GET /stats: the last 30 days and this month, counted from "today" (core/billing/stats.ts).
  ['/stats', { basis: 'reseller', byDay: true }]
])
const MAX_ENTRIES = 512
const MAX_BYTES = 512 * 1024
/**
 * Answers a write moves forward while nobody reads them: one that went unread through this many
 * of its reseller's orders is dropped instead. Moving one costs a few small objects (its bytes
 * are made only when it is sent), so a page may wait a while for its reader; past this a
 * reseller who only writes stops paying for pages nobody polls any more.
 */
const MAX_UNREAD_MOVES = 32

export interface Entry {
  /** Null for a group's answer, which no reseller's own rows change. */
  reseller: string | null
  catalogue: string
  /**
   * The bytes as sent: no UTF-8 encoding of a 36 kB string on every hit. A page a write moved
   * forward holds how to make them instead, made when it is first sent: most moved pages are
   * moved again before anyone reads them.
   */
  payload: Buffer | (() => Buffer | Promise<Buffer>)
  contentType: string
  /** An unfiltered page of GET /orders (newest first), kept so that the next order can move it forward. */
  page?: Page<Order>
  /**
   * While `payload` is a recipe: the bytes last made of this page before the moves that are not
   * made yet, which the recipe copies the orders both pages share from (order-page.ts).
   */
  base?: Buffer
  /** Times a write moved this answer forward since it was last sent. */
  unread: number
}

/** What a cache lookup found, for tests that must tell a kept answer from a rebuilt one. */
export interface ReadCacheCounters {
  hits: number
  misses: number
  /** Orders another node placed whose reseller's kept pages this node moved forward. */
  movedElsewhere: number
}

/** The GET /stats route's serialiser of its answer. */
type StatsSerializer = (body: { success: true } & ReturnType<typeof statsJson>) => string

interface Pending {
  key: string
  versions: ScopeVersions
  basis: Cacheable['basis']
  day: string | null
  page?: Page<Order>
}

declare module 'fastify' {
  interface FastifyRequest {
    readCachePending: Pending | null
  }
  interface FastifyInstance {
    readCache: ReadCacheCounters
    /**
     * Called by POST /orders once an order is written and committed: what the server keeps
     * about the reseller (kept answers, known keys, versions of this turn) is brought up to the
     * store after the write. `writesBefore`: this process's count of written rows just before it.
     */
    orderPlaced(reply: FastifyReply, resellerId: number, created: CreatedOrder, writesBefore: number): Promise<void>
  }
}

function keyOf(reseller: Reseller, route: Cacheable, url: string, day: string | null): string | null {
  if (route.basis === 'group') return reseller.groupId === null ? null : `g${reseller.groupId} ${url}`
  return day === null ? `r${reseller.id} ${url}` : `r${reseller.id} ${day} ${url}`
}

/**
 * The entry's bytes, made now if a write left only the recipe; null when making them failed (the
 * store unreadable), and the entry is then of no further use.
 */
async function bytesOf(entry: Entry): Promise<Buffer | null> {
  if (typeof entry.payload !== 'function') return entry.payload
  try {
    entry.payload = await entry.payload()
    entry.base = undefined
    return entry.payload
  } catch {
    return null
  }
}

const fresh = (entry: Entry, v: ScopeVersions): boolean =>
  entry.catalogue === v.catalogue && (entry.reseller === null || entry.reseller === v.reseller)

export interface KeptAnswer {
  payload: Buffer
  contentType: string
}

/** The read cache's answers, for callers that authenticated the request themselves (fast-reads.ts). */
export interface KeptAnswers {
  /** Whether GET `path` (no query) is a route the cache may answer. */
  cacheable(path: string): boolean
  /**
   * The kept answer to GET `url` on `path` for `reseller` at `versions`, or null. It comes at
   * once when its bytes are at hand, and as a promise when a write left only their recipe.
   */
  answer(
    reseller: Reseller,
    path: string,
    url: string,
    versions: ScopeVersions
  ): KeptAnswer | null | Promise<KeptAnswer | null>
  /**
   * After an order of `resellerId` was written: its kept order pages and statistics that were
   * current just before the write are brought up to just after it, so the reads a polling
   * script sends next are answered from kept bytes instead of rebuilt (Orders.pagesAfter).
   */
  orderPlaced(reply: FastifyReply, resellerId: number, created: CreatedOrder): Promise<void>
  /**
   * The same for an order another node of a shared store placed: the reseller's kept order
   * pages current just before it are moved forward (its statistics are read again when asked).
   */
  orderPlacedElsewhere(resellerId: number, placed: Pick<CreatedOrder, 'order' | 'moved'>): Promise<void>
}

/**
 * Marks the answer being built as the unfiltered order page `page`: a later order of the same
 * reseller may then move it forward instead of leaving it to be rebuilt.
 */
export function keepOrderPage(request: FastifyRequest, page: Page<Order>): void {
  if (request.readCachePending) request.readCachePending.page = page
}

export function installReadCache(app: FastifyInstance, service: Service): KeptAnswers {
  const entries = new Map<string, Entry>()
  const counters: ReadCacheCounters = { hits: 0, misses: 0, movedElsewhere: 0 }
  // The route's serialiser of one order, as the first answer this node made of an order page
  // compiled it: a page another node's order moves is made with it (nothing kept, nothing moved
  // before that first page).
  let serializeOrders: OrderSerializer | null = null
  let serializeStats: StatsSerializer | null = null
  app.decorate('readCache', counters)
  app.decorateRequest('readCachePending', null)
  // One reseller's moves run one after another, in the order its orders were answered: orders
  // that shared a COMMIT are answered together, and each must start from the pages the one
  // before it left (its `moved.from` is that one's `moved.to`), not from pages still in flight.
  const moves = new KeyedMutex<number>()
  const dayOf = (route: Cacheable): string | null => (route.byDay ? service.stats.day() : null)

  app.addHook('preHandler', async (request, reply) => {
    const route = request.method === 'GET' ? CACHEABLE.get(request.routeOptions.url ?? '') : undefined
    const versions = request.scopeVersions
    if (!route || !request.reseller || !versions) return
    const day = dayOf(route)
    const key = keyOf(request.reseller, route, request.url, day)
    if (key === null) return
    const hit = entries.get(key)
    const bytes = hit && fresh(hit, versions) ? await bytesOf(hit) : null
    if (hit && bytes) {
      counters.hits += 1
      hit.unread = 0
      return reply.code(200).header('content-type', hit.contentType).send(bytes)
    }
    counters.misses += 1
    request.readCachePending = { key, versions, basis: route.basis, day }
  })

  const keep = (key: string, entry: Entry): void => {
    entries.delete(key)
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string)
    entries.set(key, entry)
  }

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
    if (pending.page) serializeOrders ??= orderSerializer(reply)
    if (pending.day !== null) serializeStats ??= reply.compileSerializationSchema(StatsResponse)
    keep(pending.key, {
      reseller: pending.basis === 'group' ? null : pending.versions.reseller,
      catalogue: pending.versions.catalogue,
      payload: bytes,
      contentType: String(reply.getHeader('content-type') ?? JSON_CONTENT_TYPE),
      page: pending.page,
      unread: 0
    })
    // The bytes just made, sent as they are: the string would be encoded a second time.
    return bytes
  })
  /**
   * The reseller's kept answers current just before the write at `moved.from`, after moving its
   * order pages among them to just after it: only those, since what they show plus this order is
   * the store at `moved.to`. Anything older is stale either way and stays so.
   */
  const movePages = async (
    resellerId: number,
    order: Order,
    moved: NonNullable<CreatedOrder['moved']>,
    serialize: OrderSerializer
  ): Promise<[string, Entry][]> => {
    const prefix = `r${resellerId} `
    const before: [string, Entry][] = []
    for (const [key, e] of entries) if (key.startsWith(prefix) && fresh(e, moved.from)) before.push([key, e])
    const pages = before.filter(([, e]) => e.page !== undefined) as [string, Entry & { page: Page<Order> }][]
    const next = await service.orders.pagesAfter(
      resellerId,
      { order, moved },
      pages.map(([, e]) => e.page)
    )
    pages.forEach(([key, e], i) => {
      const page = next[i]
      if (!page || e.unread >= MAX_UNREAD_MOVES) return void entries.delete(key)
      const base = typeof e.payload === 'function' ? e.base : e.payload
      keep(key, {
        ...e,
        reseller: moved.to.reseller,
        catalogue: moved.to.catalogue,
        payload: () => pageBytes(serialize, page, base),
        base,
        page,
        unread: e.unread + 1
      })
    })
    return before
  }

  /**
   * The statistics are read again rather than worked out from the order (their rules live in
   * the store's tallies), and only when next sent: that read comes after the request's own
   * versions were found equal to `to`, so it sees the store at `to` or later, as any kept answer
   * is computed after the versions it is kept under.
   */
  const moveStats = (
    resellerId: number,
    moved: NonNullable<CreatedOrder['moved']>,
    before: [string, Entry][],
    serialize: StatsSerializer
  ): void => {
    const day = service.stats.day()
    const statsKey = `r${resellerId} ${day} /stats`
    const stats = before.find(([key]) => key === statsKey)?.[1]
    if (!stats) return
    if (stats.unread >= MAX_UNREAD_MOVES) return void entries.delete(statsKey)
    keep(statsKey, {
      ...stats,
      reseller: moved.to.reseller,
      catalogue: moved.to.catalogue,
      payload: async () => {
        const body = { success: true as const, ...statsJson(await service.stats.stats(resellerId)) }
        // Midnight passed since the move: that is the next day's answer, not this key's.
        if (service.stats.day() !== day) throw new Error('the day the statistics were kept for is over')
        return Buffer.from(serialize(body))
      },
      unread: stats.unread + 1
    })
  }

  return {
    cacheable: (path) => CACHEABLE.has(path),
    answer(reseller, path, url, versions) {
      const route = CACHEABLE.get(path)
      if (!route) return null
      const key = keyOf(reseller, route, url, dayOf(route))
      const hit = key === null ? undefined : entries.get(key)
      if (!hit || !fresh(hit, versions)) return null
      const served = (payload: Buffer): KeptAnswer => {
        counters.hits += 1
        hit.unread = 0
        return { payload, contentType: hit.contentType }
      }
      if (typeof hit.payload !== 'function') return served(hit.payload)
      return bytesOf(hit).then((bytes) => (bytes ? served(bytes) : null))
    },
    async orderPlaced(reply, resellerId, created) {
      const moved = created.moved
      if (!moved || moved.from.catalogue !== moved.to.catalogue) return
      await moves.run(resellerId, async () => {
        const before = await movePages(resellerId, created.order, moved, orderSerializer(reply))
        moveStats(resellerId, moved, before, reply.compileSerializationSchema(StatsResponse))
      })
    },
    async orderPlacedElsewhere(resellerId, placed) {
      const moved = placed.moved
      if (!moved || moved.from.catalogue !== moved.to.catalogue) return
      await moves.run(resellerId, async () => {
        const before = serializeOrders ? await movePages(resellerId, placed.order, moved, serializeOrders) : []
        if (serializeStats) moveStats(resellerId, moved, before, serializeStats)
      })
      counters.movedElsewhere += 1
    }
  }
}
