/**
 * Waiting for another process's write lock without stopping this one. better-sqlite3 runs every
 * statement on the calling thread, and SQLite's busy handler waits for a lock by sleeping in it
 * (https://sqlite.org/c3ref/busy_timeout.html), so in a server a write that meets the admin CLI's
 * or a backup's lock would freeze every request, reads included, for the whole busy timeout.
 *
 * A process that serves requests therefore turns the busy handler off (`stopWaitingOnLocks`):
 * a statement that meets a lock fails at once with SQLITE_BUSY, never sleeps. Before a request
 * that writes runs its (synchronous) transactions, the transport awaits `whenWritable`, which
 * tries for the write lock and, while another process holds it, waits on timers, so every other
 * request goes on being answered. Readers never need it: in WAL mode a read sees the last
 * committed snapshot while another connection writes (https://sqlite.org/wal.html,
 * "Concurrency"). A process that only runs commands (the admin CLI) keeps the busy handler: it
 * has nobody else to answer.
 */
import type { Db } from './db'
import { storageFault, type RetryLaterError } from './store-faults'

/**
 * How long a request that writes waits for another process's write lock before it answers 503
 * with Retry-After: what the busy timeout allowed before, and several times what the admin CLI
 * holds the lock for a write.
 */
export const WRITE_BUDGET_MS = 5000
/**
 * The budget of background work (a scheduler pass, deploy retries): nobody waits for its answer,
 * and a pass given up waits for the next timer, so it may wait longer.
 */
export const BACKGROUND_WRITE_BUDGET_MS = 60_000

/** The first wait between tries, doubled up to the longest: a CLI write holds the lock for milliseconds. */
const FIRST_WAIT_MS = 2
const LONGEST_WAIT_MS = 100

/** Connections whose busy handler is off: their writers wait through `whenWritable`. */
const nonBlocking = new WeakSet<Db>()

/** From now on a statement of `db` that meets a lock fails at once with SQLITE_BUSY instead of sleeping. */
export function stopWaitingOnLocks(db: Db): void {
  db.pragma('busy_timeout = 0')
  nonBlocking.add(db)
}

const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/** Takes the write lock and gives it back at once; false when another connection holds it. */
function writeLockFree(db: Db): boolean {
  try {
    db.exec('BEGIN IMMEDIATE')
  } catch (err) {
    if (isBusy(err)) return false
    throw err
  }
  db.exec('ROLLBACK')
  return true
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resolves once the write lock is free, so the caller's transactions, run right after, find it
 * free; waits on timers while another process holds it, and after `budgetMs` rejects with the
 * 503 of a locked store (store-faults.ts). Resolves at once on a connection that still waits by
 * itself (the admin CLI) and inside a transaction (the lock is this connection's already).
 * The lock may still be taken between this check and the write: that write then fails at once
 * with the same 503, never stalls.
 */
export async function whenWritable(db: Db, budgetMs = WRITE_BUDGET_MS): Promise<void> {
  if (!nonBlocking.has(db) || db.inTransaction) return
  let waited = 0
  let wait = FIRST_WAIT_MS
  while (!writeLockFree(db)) {
    if (waited >= budgetMs) throw storageFault({ code: 'SQLITE_BUSY' }) as RetryLaterError
    const step = Math.min(wait, budgetMs - waited)
    await sleep(step)
    waited += step
    wait = Math.min(wait * 2, LONGEST_WAIT_MS)
  }
}
