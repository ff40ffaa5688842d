/**
 * Requests per client address on a listener the network reaches (the public listener): a token
 * bucket per address, checked before anything else runs for a request (the Host check, the key
 * lookup, a JWS verification), so one client's flood costs the others little. The loopback
 * listeners have none: only this machine reaches them. Requests answered before fastify sees
 * them (fast-reads.ts) are counted there, once, through `precharged`.
 */
import type { IncomingMessage } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import type { Refusal } from './auth'

export interface RateLimit {
  /** Requests per second an address may keep up. */
  perSecond: number
  /** Requests an address may send at once after a quiet spell. */
  burst: number
}

/**
 * Addresses remembered at most. Each entry is a few dozen bytes; past this many, the addresses
 * quiet the longest are forgotten first (a forgotten address starts with a full bucket, which
 * errs towards letting a client through, never towards refusing one wrongly).
 */
export const MAX_TRACKED_ADDRESSES = 10_000

interface Bucket {
  tokens: number
  /** performance.now() of the last refill: monotonic, so a clock step never refills or drains. */
  at: number
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>()

  constructor(readonly limit: RateLimit) {}

  /** Takes one request of `address`: 0 when it may go on, else the seconds until it may. */
  take(address: string): number {
    const now = performance.now()
    let b = this.buckets.get(address)
    if (b) {
      b.tokens = Math.min(this.limit.burst, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond)
      b.at = now
      // Most recently used last: the first entries are the quietest.
      this.buckets.delete(address)
    } else {
      if (this.buckets.size >= MAX_TRACKED_ADDRESSES) this.buckets.delete(this.buckets.keys().next().value as string)
      b = { tokens: this.limit.burst, at: now }
    }
    this.buckets.set(address, b)
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 0
    }
    // RFC 6585 §4: a 429 may say when to come back; this is when the next token is there.
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond))
  }
}

/** Requests already counted before fastify (fast-reads.ts), with what the count answered. */
export const precharged = new WeakMap<IncomingMessage, number>()

export function installRateLimit(app: FastifyInstance, limiter: RateLimiter, refuse: Refusal): void {
  app.addHook('onRequest', async (request, reply) => {
    const wait = precharged.get(request.raw) ?? limiter.take(request.socket.remoteAddress ?? '')
    if (wait === 0) return
    reply.header('retry-after', String(wait))
    return refuse(
      request,
      reply,
      429,
      `too many requests from this address: at most ${limiter.limit.perSecond} a second; try again in ${wait} s`
    )
  })
}
