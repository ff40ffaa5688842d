/**
 * The bytes of a GET /orders answer, put together from each order's own JSON. A reseller's next
 * order shifts each of its pages by one, so each page is answered anew; the core hands back the
 * other orders as the very objects it built before (core/orders/order-cache.ts: frozen, and replaced
 * by a new object whenever the order changes), so their JSON is kept per object and only the
 * new order is serialised. Each order is serialised with the route's own OrderJson schema, so
 * the bytes are those the response schema makes of the whole page.
 *
 * A moved page shares all its orders but the first few with the page it was moved from, in the
 * same order: given that page's bytes, the shared run is copied from them in one piece (where
 * each order's JSON ends in a page's bytes is kept beside them), and only the orders before it
 * are joined one by one.
 */
import type { FastifyReply } from 'fastify'
import type { Page } from '../core/billing/ledger'
import type { Order } from '../core/orders/orders'
import { orderJson, paginationJson } from './present'
import { OrderJson } from './schemas'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Keyed by the order object: an order that changes is a new object, so a kept entry never goes stale. */
const kept = new WeakMap<Order, Buffer>()
const HEAD = Buffer.from('{"success":true,"orders":[')
const COMMA = Buffer.from(',')

/** Turns one order's JSON into text, as the route's own OrderJson schema does. */
export type OrderSerializer = (order: ReturnType<typeof orderJson>) => string

// Compiled once per route by fastify and reused (FastifyReply.compileSerializationSchema).
export const orderSerializer = (reply: FastifyReply): OrderSerializer => reply.compileSerializationSchema(OrderJson)

export function orderPageBytes(reply: FastifyReply, page: Page<Order>): Buffer {
  return pageBytes(orderSerializer(reply), page)
}

/** A page's orders and where each one's JSON ends in the page's bytes. */
interface Layout {
  items: readonly Order[]
  ends: number[]
  /** Every order was frozen when its JSON was made, so the same object still has that JSON. */
  frozen: boolean
}

/** Keyed by the bytes, so a layout lives exactly as long as the bytes it describes. */
const layouts = new WeakMap<Buffer, Layout>()

/**
 * The bytes of `page`. `before`: the bytes of the page it was moved from, if they were made;
 * the run of orders both share is copied from them.
 */
export function pageBytes(serialize: OrderSerializer, page: Page<Order>, before?: Buffer): Buffer {
  const items = page.items
  const run = before ? sharedRun(items, layouts.get(before)) : null
  const joined = run ? run.at : items.length
  const parts: Buffer[] = [HEAD]
  const ends: number[] = []
  let frozen = true
  let at = HEAD.length
  for (let i = 0; i < joined; i++) {
    const order = items[i]
    let bytes = kept.get(order)
    if (!bytes) {
      bytes = Buffer.from(serialize(orderJson(order)))
      // Only an object nobody can change may vouch for its bytes later.
      if (Object.isFrozen(order)) kept.set(order, bytes)
      else frozen = false
    }
    if (i > 0) {
      parts.push(COMMA)
      at += 1
    }
    parts.push(bytes)
    at += bytes.length
    ends.push(at)
  }
  if (run && before) {
    if (joined > 0) {
      parts.push(COMMA)
      at += 1
    }
    const from = HEAD.length
    const to = run.layout.ends[run.count - 1]
    parts.push(before.subarray(from, to))
    for (let j = 0; j < run.count; j++) ends.push(run.layout.ends[j] - from + at)
  }
  parts.push(Buffer.from(`],"pagination":${JSON.stringify(paginationJson(page))}}`))
  const bytes = Buffer.concat(parts)
  layouts.set(bytes, { items, ends, frozen })
  return bytes
}

/**
 * Where `items` goes on with the orders of `layout`'s page, from its first: the same objects in
 * the same order, to the end of either list. Null when it does not, or when those bytes could
 * no longer vouch for their orders.
 */
function sharedRun(
  items: readonly Order[],
  layout: Layout | undefined
): { at: number; count: number; layout: Layout } | null {
  if (!layout || !layout.frozen || layout.items.length === 0) return null
  const at = items.indexOf(layout.items[0])
  if (at < 0) return null
  const count = Math.min(items.length - at, layout.items.length)
  for (let j = 1; j < count; j++) if (items[at + j] !== layout.items[j]) return null
  return { at, count, layout }
}
