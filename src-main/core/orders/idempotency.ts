/**
 * `Idempotency-Key` for POST /orders and POST /credits: a retry with the same key and body gets
 * the first answer and is charged once; the same key with another body is 409. Only successful
 * answers are kept, so a request refused for a short balance can be retried after a top-up.
 * The key row is written in the same transaction as the work, so a crash leaves both or neither.
 */
import { createHash } from 'node:crypto'
import type { CoreContext } from '../context'
import { conflict, invalid } from '../errors'
import { isoTimestamp } from '../time'

export interface StoredAnswer {
  statusCode: number
  body: unknown
  replayed: boolean
}

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

/** JSON with the keys of every object sorted; arrays keep their order, which carries meaning. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

export class Idempotency {
  constructor(private readonly ctx: CoreContext) {}

  /**
   * What a request asks for, whatever its JSON looks like: the body as parsed (spacing gone),
   * with object keys in one order, so a retry that serialises the same body differently is the
   * same request (the Idempotency-Key draft, draft-ietf-httpapi-idempotency-key-header §2.4,
   * leaves the fingerprint to the server).
   */
  static fingerprint(method: string, path: string, body: unknown): string {
    return createHash('sha256')
      .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
      .digest('hex')
  }

  /**
   * `fingerprint` is computed only when a key is given: a request without one (most of them)
   * pays no digest of its body.
   */
  async run(
    resellerId: number,
    key: string | undefined,
    fingerprint: string | (() => string),
    work: () => Promise<{ statusCode: number; body: unknown }>
  ): Promise<StoredAnswer> {
    if (key === undefined) return { ...(await work()), replayed: false }
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
      throw invalid(`Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`)
    }
    const db = this.ctx.store
    const print = typeof fingerprint === 'string' ? fingerprint : fingerprint()
    return await db.tx(async (): Promise<StoredAnswer> => {
      const prior = (await db.get(
        'SELECT fingerprint, status_code, body FROM idempotency_keys WHERE reseller_id = ? AND key = ?',
        resellerId,
        key
      )) as { fingerprint: string; status_code: number; body: string } | undefined
      if (prior) {
        if (prior.fingerprint !== print) {
          throw conflict('Idempotency-Key was already used with a different request')
        }
        return { statusCode: prior.status_code, body: JSON.parse(prior.body), replayed: true }
      }
      const answer = await work()
      // A refusal answered without throwing (an ACME order whose subscription failed and was
      // refunded) is not kept either: a retry with the same key may then succeed.
      if (answer.statusCode >= 400) return { ...answer, replayed: false }
      await db.run(
        'INSERT INTO idempotency_keys (reseller_id, key, fingerprint, status_code, body, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        resellerId,
        key,
        print,
        answer.statusCode,
        JSON.stringify(answer.body),
        isoTimestamp(this.ctx.clock())
      )
      return { ...answer, replayed: false }
    })
  }
}
