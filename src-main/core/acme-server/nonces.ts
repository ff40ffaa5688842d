/**
 * ACME nonces (RFC 8555 §6.5): every response carries a fresh one, and each request must bring
 * one the server issued and nobody has used yet (§6.5.2: otherwise `badNonce`).
 *
 * Two books, one contract:
 *
 * - A store one process serves (SQLite: the desk, `serve` on a data dir): the nonces this
 *   process issued, in memory, each struck out when used. Nothing else could ever see them.
 * - A store several nodes share (PostgreSQL behind a balancer): a client takes its nonce from
 *   one node's answer and may send the next request to another, so a nonce must be good on
 *   every node, once. Each nonce carries its issue time and an HMAC over it under a key every
 *   node holds (from the secret store, never the book); any node can then tell a nonce issued
 *   by one of them, with no write per answer. Using one records it in `acme_nonces_spent`
 *   (migration 0021): its primary key makes the first use the only one, whichever node sees
 *   the second. A row lives until the nonce would have expired anyway (NONCE_LIFETIME_MS),
 *   then is pruned. docs/decisions.md, "Nonces on several nodes", says why this and not a
 *   table of issued nonces.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { CoreContext } from '../context'
import { isoTimestamp } from '../time'
import { secretOnce } from '../cluster/leadership'

/**
 * How long an issued nonce is good for. RFC 8555 sets no figure; clients use a nonce from the
 * answer they just had (certbot and lego keep one per answer), so minutes are ample, and a
 * client refused with `badNonce` retries with the fresh nonce of that refusal (§6.5).
 */
export const NONCE_LIFETIME_MS = 15 * 60_000
/** A nonce stamped this far ahead of this node's clock is still taken (another node's clock runs ahead). */
const CLOCK_SKEW_MS = 60_000
/** Issued nonces a single process remembers; past it the oldest go (their clients retry, §6.5). */
const MAX_LOCAL_NONCES = 10_000
/** Random bytes of a nonce: 128 bits, unpredictable (§6.5.1). */
const NONCE_BYTES = 16
/** The stamped form: version, issue second, random part, MAC. */
const VERSION = 1
const STAMP_BYTES = 4
const MAC_BYTES = 16
const STAMPED_BYTES = 1 + STAMP_BYTES + NONCE_BYTES + MAC_BYTES
/** The secret store's entry of the key every node stamps with. */
export const NONCE_KEY_SECRET = 'acme-nonce-key'
/** A node prunes spent nonces at most this often. */
const PRUNE_EVERY_MS = 60_000

export interface NonceBook {
  /** A fresh nonce for a response's Replay-Nonce header. */
  issue(): string
  /** True once for a nonce this server issued that has not expired; false for anything else. */
  consume(nonce: string): Promise<boolean>
}

/** Nonces issued by this process, for a store no other process serves from. */
export class LocalNonces implements NonceBook {
  private readonly issued = new Set<string>()
  /** One CSPRNG draw per 256 nonces. */
  private pool = Buffer.alloc(0)

  issue(): string {
    if (this.pool.length < NONCE_BYTES) this.pool = randomBytes(NONCE_BYTES * 256)
    const n = this.pool.subarray(0, NONCE_BYTES).toString('base64url')
    this.pool = this.pool.subarray(NONCE_BYTES)
    this.issued.add(n)
    if (this.issued.size > MAX_LOCAL_NONCES) this.issued.delete(this.issued.values().next().value as string)
    return n
  }

  async consume(nonce: string): Promise<boolean> {
    return this.issued.delete(nonce)
  }
}

/** Stamped nonces good on every node of a shared store, each once. */
export class SharedNonces implements NonceBook {
  private pool = Buffer.alloc(0)
  private lastPrune = 0

  private constructor(
    private readonly ctx: CoreContext,
    private readonly key: Buffer
  ) {}

  /**
   * The book with the nodes' common key, made by the first node that needs it (one at a time,
   * through the store's leadership, so two nodes starting together never make two keys).
   */
  static async open(ctx: CoreContext): Promise<SharedNonces> {
    const key = Buffer.from(await secretOnce(ctx, NONCE_KEY_SECRET, () => randomBytes(32).toString('base64')), 'base64')
    if (key.length !== 32) throw new Error('could not read the ACME nonce key: the secret store holds another value')
    return new SharedNonces(ctx, key)
  }

  issue(): string {
    if (this.pool.length < NONCE_BYTES) this.pool = randomBytes(NONCE_BYTES * 256)
    const body = Buffer.alloc(1 + STAMP_BYTES + NONCE_BYTES)
    body[0] = VERSION
    body.writeUInt32BE(Math.floor(this.ctx.clock().getTime() / 1000), 1)
    this.pool.copy(body, 1 + STAMP_BYTES, 0, NONCE_BYTES)
    this.pool = this.pool.subarray(NONCE_BYTES)
    return Buffer.concat([body, this.mac(body)]).toString('base64url')
  }

  async consume(nonce: string): Promise<boolean> {
    const issuedAt = this.verify(nonce)
    if (issuedAt === null) return false
    const now = this.ctx.clock().getTime()
    if (issuedAt > now + CLOCK_SKEW_MS || now - issuedAt > NONCE_LIFETIME_MS) return false
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now
      void this.prune().catch(() => undefined)
    }
    // The first INSERT of a nonce is its one use; a second one, on any node, changes nothing.
    const r = await this.ctx.store.run(
      'INSERT OR IGNORE INTO acme_nonces_spent (nonce, expires_at) VALUES (?, ?)',
      nonce,
      isoTimestamp(new Date(issuedAt + NONCE_LIFETIME_MS + CLOCK_SKEW_MS))
    )
    return r.changes === 1
  }

  /** Drops spent nonces that could no longer be used anyway; answers how many. */
  async prune(): Promise<number> {
    const r = await this.ctx.store.run(
      'DELETE FROM acme_nonces_spent WHERE expires_at < ?',
      isoTimestamp(this.ctx.clock())
    )
    return r.changes
  }

  /** The issue time (ms) of a nonce stamped with this key, or null. */
  private verify(nonce: string): number | null {
    if (nonce.length > 2 * STAMPED_BYTES || !/^[A-Za-z0-9_-]+$/.test(nonce)) return null
    const raw = Buffer.from(nonce, 'base64url')
    if (raw.length !== STAMPED_BYTES || raw[0] !== VERSION) return null
    // The canonical text only: another spelling of the same bytes would be another row.
    if (raw.toString('base64url') !== nonce) return null
    const body = raw.subarray(0, STAMPED_BYTES - MAC_BYTES)
    if (!timingSafeEqual(this.mac(body), raw.subarray(STAMPED_BYTES - MAC_BYTES))) return null
    return body.readUInt32BE(1) * 1000
  }

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, MAC_BYTES)
  }
}

/** The book for this store: shared when several nodes serve it (PostgreSQL), else this process's own. */
export async function openNonceBook(ctx: CoreContext): Promise<NonceBook> {
  return ctx.store.engine === 'postgres' ? SharedNonces.open(ctx) : new LocalNonces()
}
