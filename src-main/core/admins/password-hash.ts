/**
 * Admin passwords as scrypt hashes (RFC 7914), Node's own `crypto.scrypt`, which runs on libuv's
 * thread pool and never on the event loop. Stored in the PHC string format
 * (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`, base64 without padding), so a hash keeps the cost it
 * was made with and an older, cheaper one is replaced at the next sign-in.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { ServiceError } from '../errors'

/**
 * OWASP Password Storage Cheat Sheet, "scrypt": a minimum CPU/memory cost of N=2^17 with r=8,
 * p=1. Each hash then needs 128 * N * r = 128 MiB and about a second of one core here, which is
 * what makes a stolen store's hashes expensive to guess at.
 */
export const SCRYPT_COST = { logN: 17, r: 8, p: 1 } as const
const SALT_BYTES = 16
const KEY_BYTES = 32

/**
 * At most this many hashes are computed at once, so a burst of sign-ins holds at most
 * 2 * 128 MiB and leaves libuv's other threads (file and DNS work) free; more wait their turn.
 */
const AT_ONCE = 2
/** A burst beyond this many waiting is refused with 503 rather than queued without end. */
const MAX_WAITING = 64

/** Costs a stored hash may name: anything else is not one of ours and is never computed. */
const BOUNDS = { logN: [10, 20], r: [1, 32], p: [1, 16] } as const

interface Parsed {
  logN: number
  r: number
  p: number
  salt: Buffer
  hash: Buffer
}

let running = 0
const waiting: (() => void)[] = []

async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) {
    if (waiting.length >= MAX_WAITING)
      throw new ServiceError('unavailable', 'could not check the password: too many sign-ins at once; try again')
    await new Promise<void>((resolve) => waiting.push(resolve))
  } else running++
  try {
    return await work()
  } finally {
    const next = waiting.shift()
    if (next) next()
    else running--
  }
}

function derive(password: string, salt: Buffer, c: { logN: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** c.logN
  const options: ScryptOptions = { N, r: c.r, p: c.p, maxmem: 128 * N * c.r + 2 * 1024 * 1024 }
  return slot(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)))
      )
  )
}

const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '')

/** A new hash of `password` at today's cost, with a random 128-bit salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const key = await derive(password, salt, SCRYPT_COST)
  const { logN, r, p } = SCRYPT_COST
  return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(key)}`
}

function parse(stored: string): Parsed | null {
  const m = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{16,88})\$([A-Za-z0-9+/]{16,88})$/.exec(
    stored
  )
  if (!m) return null
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const within = (v: number, [lo, hi]: readonly [number, number]): boolean => v >= lo && v <= hi
  if (!within(logN, BOUNDS.logN) || !within(r, BOUNDS.r) || !within(p, BOUNDS.p)) return null
  return { logN, r, p, salt: Buffer.from(m[4], 'base64'), hash: Buffer.from(m[5], 'base64') }
}

/**
 * Whether `password` is the one `stored` was made from. Always does the full work of one hash,
 * also for a malformed `stored`, so the time taken tells nothing about the account.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored)
  const c = parsed ?? { ...SCRYPT_COST, salt: randomBytes(SALT_BYTES), hash: randomBytes(KEY_BYTES) }
  const key = await derive(password, c.salt, c)
  return parsed !== null && key.length === c.hash.length && timingSafeEqual(key, c.hash)
}

/** Whether a hash was made at a lower cost than today's, and should be made again. */
export function needsRehash(stored: string): boolean {
  const p = parse(stored)
  return p === null || p.logN < SCRYPT_COST.logN || p.r < SCRYPT_COST.r || p.p < SCRYPT_COST.p
}

/**
 * Stands in for the hash of a name that has no account, so a sign-in under an unknown name costs
 * the same hash as one under a known name and the answer time does not say which names exist.
 */
export const NO_ACCOUNT_HASH =
  '$scrypt$ln=17,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
