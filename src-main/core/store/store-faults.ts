/**
 * Failures of the machine rather than of the request: a full disk, a failing write, a store
 * another process holds locked. They are passing conditions, so the caller hears "try again
 * later" (503 with Retry-After, RFC 9110 §15.6.4 and §10.2.3), never a 500. Nothing is left
 * half-written: every change is one SQLite transaction, which SQLite rolls back when a write in
 * it fails (https://sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction").
 */
import { ServiceError } from '../errors'
import { backoff, sleep } from '../mutex'

/** A 503 that says when to try again. */
export class RetryLaterError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number
  ) {
    super('unavailable', message)
    this.name = 'RetryLaterError'
  }
}

/** How long a client should wait after a 503 that carries no better estimate. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5
/** A full disk needs a person to free space: ask for a longer wait than for a lock. */
const DISK_RETRY_AFTER_SECONDS = 30

interface CodedError {
  code?: unknown
  cause?: unknown
}

/**
 * SQLite's primary result codes (https://sqlite.org/rescode.html) and the errno values of a
 * file write (POSIX write(2)) that mean "the machine cannot store this now".
 */
function reasonOf(code: string): { why: string; retryAfter: number } | null {
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT')
    return { why: 'the disk is full', retryAfter: DISK_RETRY_AFTER_SECONDS }
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO')
    return { why: 'the disk refused a write (I/O error)', retryAfter: DISK_RETRY_AFTER_SECONDS }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return { why: 'another process holds the store locked', retryAfter: DEFAULT_RETRY_AFTER_SECONDS }
  if (code === 'SQLITE_NOMEM' || code === 'ENOMEM')
    return { why: 'the machine is out of memory', retryAfter: DEFAULT_RETRY_AFTER_SECONDS }
  return null
}

/**
 * The storage fault behind `err` (itself or any error in its `cause` chain) as a RetryLaterError,
 * or null when `err` is something else. The message names the condition, never a path or a value.
 */
export function storageFault(err: unknown, verb = 'save the change'): RetryLaterError | null {
  if (err instanceof RetryLaterError) return err
  let e: unknown = err
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = (e as CodedError).code
    const reason = typeof code === 'string' ? reasonOf(code) : null
    if (reason) {
      return new RetryLaterError(
        `could not ${verb}: ${reason.why}; nothing was changed, try again in ${reason.retryAfter} s`,
        reason.retryAfter
      )
    }
    e = (e as CodedError).cause
  }
  return null
}

const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/**
 * Runs `step` (synchronous: one better-sqlite3 call on a connection with `busy_timeout = 0`),
 * and while SQLite answers BUSY tries again after a growing pause on a timer, so the event loop
 * serves others meanwhile; after `budgetMs` the caller hears 503 with Retry-After.
 */
export async function untilUnlocked<T>(step: () => T, verb: string, budgetMs: number): Promise<T> {
  const started = performance.now()
  for (let attempt = 1; ; attempt++) {
    try {
      return step()
    } catch (err) {
      if (!isBusy(err)) throw err
      const waited = performance.now() - started
      if (waited >= budgetMs) {
        throw new RetryLaterError(
          `could not ${verb}: another process holds the store locked; nothing was changed, try again in ${DEFAULT_RETRY_AFTER_SECONDS} s`,
          DEFAULT_RETRY_AFTER_SECONDS
        )
      }
      await sleep(Math.min(backoff(attempt, 2, 100), budgetMs - waited))
    }
  }
}
