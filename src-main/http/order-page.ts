/**
 * The bytes of a GET /orders answer, put together from each order's own JSON. A reseller's next
 * order shifts each of its pages by one, so each page is answered anew; the core hands back the
 * other orders as the very objects it built before (core/orders/order-cache.ts: frozen, and replaced
 * by a new object whenever the order changes), so their JSON is kept per object and only the
 * new order is serialised. Each order is serialised with the route's own OrderJson schema, so
 * the bytes are those the response schema makes of the whole page.
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

export function pageBytes(serialize: OrderSerializer, page: Page<Order>): Buffer {
  const parts: Buffer[] = [HEAD]
  for (const [i, order] of page.items.entries()) {
    let bytes = kept.get(order)
    if (!bytes) {
      bytes = Buffer.from(serialize(orderJson(order)))
      // Only an object nobody can change may vouch for its bytes later.
      if (Object.isFrozen(order)) kept.set(order, bytes)
    }
    if (i > 0) parts.push(COMMA)
    parts.push(bytes)
  }
  parts.push(Buffer.from(`],"pagination":${JSON.stringify(paginationJson(page))}}`))
  return Buffer.concat(parts)
}
