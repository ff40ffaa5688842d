/**
 * A first-come, first-served lock for async code. One SQLite connection runs one transaction
 * at a time; since a transaction's function awaits between its statements, another caller's
 * statements would otherwise run inside it.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve()
  private waiting = 0

  /** Resolves with the release function once every earlier holder has released. */
  async acquire(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((resolve) => (release = resolve))
    const before = this.tail
    this.tail = before.then(() => next)
    this.waiting++
    await before
    this.waiting--
    let released = false
    return () => {
      if (released) return
      released = true
      release()
    }
  }

  /** Callers queued behind the holder. */
  get queued(): number {
    return this.waiting
  }
}

/**
 * A first-come, first-served lock per key, kept only while someone holds or waits for it: work
 * under one key runs one piece after another, in the order it asked; other keys go on.
 */
export class KeyedMutex<K> {
  private readonly locks = new Map<K, Mutex>()

  async run<T>(key: K, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(key)
    if (!lock) this.locks.set(key, (lock = new Mutex()))
    const release = await lock.acquire()
    try {
      return await fn()
    } finally {
      release()
      if (lock.queued === 0 && this.locks.get(key) === lock) this.locks.delete(key)
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The wait before try number `attempt` (from 1) of something another party holds: doubling
 * from `firstMs` up to `maxMs`, each drawn at random from its upper half, so waiters that
 * failed together do not all come back at the same moment.
 */
export function backoff(attempt: number, firstMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, firstMs * 2 ** Math.min(attempt - 1, 20))
  return ceiling / 2 + Math.random() * (ceiling / 2)
}
