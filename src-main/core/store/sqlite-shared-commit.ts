/**
 * SQLite's shared COMMIT (`TxOptions.shareCommit`), the group commit of the write transactions
 * that arrive in one turn of the event loop.
 *
 * Node runs a request's handler to its first real wait before it reads the next request, and
 * SQLite's statements never wait: one after another, each order's transaction would begin and
 * commit before the next request is even parsed, and every one pays a COMMIT (the WAL write of
 * every page it dirtied, about half of a small order's cost). A transaction that may share its
 * COMMIT, once its function is done, leaves the SQLite transaction open and hands the write
 * lock on; the ones that follow run in a savepoint of it (a refused one is rolled back to it
 * alone), and one COMMIT serves them all. It comes at the end of the first turn of the event
 * loop (`setImmediate`) in which no sharing transaction joined: while orders keep arriving, as
 * they do when reads and writes come mixed on many connections and a turn brings only a few
 * orders between the reads, the COMMIT waits for them, up to the limits below. A lone order
 * commits at the end of its own turn. Each caller hears its answer only after that COMMIT: an
 * answered write is a committed one, and a crash before it loses only writes nobody was told of.
 */
import type { Db } from './db'
import type { Mutex } from '../mutex'

/**
 * At most this many transactions share one COMMIT, and for at most this long from its BEGIN:
 * the first caller's answer waits for the last one's statements and the turns between them.
 */
const SHARED_COMMIT_MAX = 32
const SHARED_COMMIT_MAX_MS = 20

/** Write transactions done and waiting for the COMMIT they share. */
interface OpenCommit {
  began: number
  members: { resolve: () => void; reject: (err: unknown) => void }[]
  /** How many had joined when the end of a turn was last looked at. */
  counted: number
}

export class SharedCommit {
  private open: OpenCommit | null = null

  constructor(
    private readonly db: Db,
    /** The engine's write lock: the COMMIT at the end of a turn takes its turn behind it. */
    private readonly writeLock: Mutex,
    /** Runs COMMIT, waiting out another process's checkpoint within the budget. */
    private readonly commit: (budgetMs?: number) => Promise<void>
  ) {}

  /** A transaction left open that one that shares its COMMIT can join, in a savepoint. */
  get joinable(): boolean {
    return this.open !== null
  }

  /**
   * Called once a sharing transaction's function is done, under the write lock: leaves the
   * transaction open for the ones behind it and answers what to await before answering the
   * caller, or null when it is full or old enough to be committed now (`commitNow`).
   */
  hold(joined: boolean): Promise<void> | null {
    const now = performance.now()
    const open = joined && this.open ? this.open : { began: now, members: [], counted: 0 }
    this.open = open
    if (open.members.length + 1 >= SHARED_COMMIT_MAX || now - open.began >= SHARED_COMMIT_MAX_MS) return null
    const committed = new Promise<void>((resolve, reject) => open.members.push({ resolve, reject }))
    if (!joined) this.afterTurn(open)
    return committed
  }

  /**
   * Commits the transaction in progress under the write lock, with every caller waiting on it:
   * all of them succeed, or all hear why none was written (and so does this caller).
   */
  async commitNow(budgetMs?: number): Promise<void> {
    const open = this.open
    this.open = null
    try {
      await this.commit(budgetMs)
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK')
      for (const m of open?.members ?? []) m.reject(err)
      throw err
    }
    for (const m of open?.members ?? []) m.resolve()
  }

  /**
   * For a holder of the write lock that does not join what is open (another kind of write, a
   * failed one, the close): commits it first; an error reaches only those waiting on it.
   */
  async settle(): Promise<void> {
    if (this.open) await this.commitNow().catch(() => undefined)
  }

  /** SQLite rolled the open transaction back by itself: those waiting on it hear why. */
  fail(err: unknown): void {
    const open = this.open
    this.open = null
    for (const m of open?.members ?? []) m.reject(err)
  }

  /** Looks again at the end of this turn: counts who has joined by then. */
  private afterTurn(open: OpenCommit): void {
    open.counted = open.members.length
    setImmediate(() => void this.atTurnEnd(open))
  }

  private async atTurnEnd(open: OpenCommit): Promise<void> {
    if (this.open !== open) return
    // Others joined during the turn that just ended: more may be on their way in the next one.
    if (open.members.length > open.counted && performance.now() - open.began < SHARED_COMMIT_MAX_MS)
      return this.afterTurn(open)
    const release = await this.writeLock.acquire()
    try {
      if (this.open === open) await this.settle()
    } finally {
      release()
    }
  }
}
