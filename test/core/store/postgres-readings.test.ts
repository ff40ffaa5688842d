/**
 * What the PostgreSQL engine does to spare round trips, and what it must never give up for it:
 *  - scope readings asked for while one is on its way share the next statement, yet each caller
 *    is answered by a statement sent after it asked, so a reading asked for after another
 *    node's commit always sees that commit;
 *  - inside a transaction, the catalogue version and the schema token are read once and kept
 *    until the transaction writes (its snapshot would answer the same);
 *  - transactions naming one queue run one after another, in this process and across two stores
 *    on one database (two nodes): none is refused for serialization and run again, where side by
 *    side most of them are;
 *  - an order-shaped transaction (queue lock, BEGIN, scope reading, writes, scope reading, COMMIT,
 *    unlock) sends the statements it starts together without waiting for answers in between: its
 *    first reading and ids right behind the lock, its writes once the lock is answered (never
 *    behind a lock that failed), its COMMIT and unlock in one message; and it reads what the
 *    separate statements would have read.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PostgresStore, ScopeVersions } from '../../../src-main/core/store'
import { engineFixture, type EngineFixture } from './engines'

let fx: EngineFixture
let store: PostgresStore
let other: PostgresStore

/**
 * Counts the statements `store` sends through its pools (the main one and the readers', which
 * takes the statements that only read), on its own or on a connection it holds for a while (the
 * shared scope reading's), and can hold an answer back.
 */
function watchPool(s: PostgresStore) {
  type Query = (config: { text: string }, ...rest: unknown[]) => Promise<unknown>
  type Watched = { query: Query; connect: (...a: unknown[]) => Promise<{ query: Query }> }
  const pools = [...new Set([s.pool, s.readers])] as unknown as Watched[]
  const seen: string[] = []
  let hold: Promise<void> | null = null
  const undo: (() => void)[] = []
  const watched =
    (original: Query): Query =>
    async (config, ...rest) => {
      seen.push(config.text)
      const held = hold
      const answer = await original(config, ...rest)
      if (held) await held
      return answer
    }
  for (const pool of pools) {
    const { query, connect } = pool
    pool.query = watched(query.bind(pool))
    // A connection taken with a promise (pool.query takes its own with a callback, seen above).
    pool.connect = async (...a: unknown[]) => {
      if (a.length > 0) return connect.apply(pool, a)
      const client = await connect.apply(pool, a)
      const own = client.query
      client.query = watched(own.bind(client))
      undo.push(() => void (client.query = own))
      return client
    }
    undo.push(() => Object.assign(pool, { query, connect }))
  }
  return {
    seen,
    /** Answers of statements sent from now on wait for the returned release. */
    holdAnswers(): () => void {
      let release!: () => void
      hold = new Promise((r) => (release = r))
      return () => {
        hold = null
        release()
      }
    },
    restore: () => undo.splice(0).forEach((f) => f())
  }
}

const bump = (s: PostgresStore, scope: string) =>
  s.run('UPDATE cache_generations SET gen = gen + 1 WHERE scope = ?', scope)

beforeAll(async () => {
  fx = await engineFixture('postgres')
  store = (await fx.open()) as PostgresStore
  other = (await fx.open()) as PostgresStore
  await store.run(
    `INSERT INTO cache_generations (scope, gen) VALUES ('reseller:1', 1), ('reseller:2', 1), ('catalogue', 1)`
  )
})
afterAll(async () => fx?.dispose())

describe('PostgreSQL scope readings', () => {
  it('answers many callers with one statement, each with its own reseller', async () => {
    const watch = watchPool(store)
    try {
      const ids = Array.from({ length: 60 }, (_, i) => (i % 3) + 1)
      const read = await Promise.all(ids.map((id) => store.scopeVersions(id)))
      // The first caller's statement, then one for everyone who asked while it was away.
      expect(watch.seen.length).toBeLessThanOrEqual(2)
      expect(read.map((v) => v.reseller)).toEqual(ids.map((id) => (id === 3 ? '0' : '1')))
    } finally {
      watch.restore()
    }
  })

  it('never answers a caller with a statement sent before it asked', async () => {
    const watch = watchPool(store)
    try {
      const release = watch.holdAnswers()
      // Read at the server now, its answer held back: it is on its way when the commit lands.
      const early = store.scopeVersions(1)
      await new Promise((r) => setTimeout(r, 50))
      await bump(other, 'reseller:1')
      const late = store.scopeVersions(1)
      release()
      const [a, b] = await Promise.all([early, late])
      expect(Number(b.reseller)).toBe(Number(a.reseller) + 1)
      expect(watch.seen.length).toBe(2)
    } finally {
      watch.restore()
    }
  })
  it('gives its reading connection back when no one waits, and takes a new one after it was cut', async () => {
    await Promise.all([1, 2, 3].map((id) => store.scopeVersions(id)))
    await new Promise((r) => setImmediate(r))
    expect(store.readers.idleCount).toBe(store.readers.totalCount)
    // Cut every connection of this database but the one asking (a failover, a restart).
    await other.run(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`
    )
    // And while readings follow one another on the held connection: the process lives on.
    const busy = Array.from({ length: 200 }, () => store.scopeVersions(1).catch(() => null))
    await other.run(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`
    )
    await Promise.all(busy)
    const outcomes: string[] = []
    for (let i = 0; i < 5; i++) {
      outcomes.push(
        await store.scopeVersions(1).then(
          (v) => `read ${v.reseller}`,
          (err: Error) => `failed: ${err.message}`
        )
      )
    }
    // A connection cut while idle may fail the one reading that finds it; the rest are read anew.
    expect(outcomes.slice(1)).toEqual(Array(4).fill(outcomes[outcomes.length - 1]))
    expect(outcomes[outcomes.length - 1]).toMatch(/^read \d+$/)
    for (const o of outcomes) expect(o).not.toMatch(/password|postgres:\/\//)
  })
})

describe('PostgreSQL readings inside a transaction', () => {
  it('reads the catalogue version once until the transaction writes, then again', async () => {
    const statements: string[] = []
    await store.tx(async (t) => {
      const client = (store as unknown as { current(): { root: { client: pg.PoolClient } } }).current().root.client
      const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>
      ;(client as unknown as { query: typeof query }).query = (c: unknown, ...rest: unknown[]) => {
        statements.push(typeof c === 'string' ? c : (c as { text: string }).text)
        return query(c, ...rest)
      }
      try {
        // Asked for while the scope reading is on its way, the catalogue version waits for it.
        const [scope, before] = await Promise.all([store.scopeVersions(1), store.catalogueVersion()])
        expect(before).toBe(scope.catalogue)
        const read = () => statements.filter((x) => !x.startsWith('BEGIN'))
        expect(read()).toHaveLength(1)
        expect(await store.catalogueVersion()).toBe(before)
        expect(read()).toHaveLength(1)
        await t.run(`UPDATE cache_generations SET gen = gen + 1 WHERE scope = 'catalogue'`)
        const after = await store.catalogueVersion()
        expect(after).not.toBe(before)
        // The schema token was kept: the second reading asks for the generation alone.
        expect(read()[2]).toMatch(/^SELECT gen FROM cache_generations/)
      } finally {
        ;(client as unknown as { query: typeof query }).query = query
      }
    })
  })
})

describe('PostgreSQL transaction queues', () => {
  const place = (
    queue: string | undefined,
    tally: { runs: number; active: number; most: number },
    on: PostgresStore = store
  ) =>
    on.tx(
      async (t) => {
        tally.runs++
        // Its first statement answered, the transaction holds its queue's turn (the statements
        // that only read go out behind the queue's lock before it is granted).
        const gen = await t.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)
        tally.active++
        tally.most = Math.max(tally.most, tally.active)
        try {
          await new Promise((r) => setTimeout(r, 2))
          await t.run(`UPDATE cache_generations SET gen = ? WHERE scope = 'reseller:2'`, (gen ?? 0) + 1)
        } finally {
          tally.active--
        }
      },
      queue ? { queue } : {}
    )

  it('runs the transactions of one queue one after another: each once, none lost', async () => {
    const start = await store.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)
    const tally = { runs: 0, active: 0, most: 0 }
    await Promise.all(Array.from({ length: 20 }, () => place('reseller:2', tally)))
    expect(tally.most).toBe(1)
    expect(tally.runs).toBe(20)
    expect(await store.value(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)).toBe((start ?? 0) + 20)
  })

  it('runs the transactions of one queue on two nodes one after another too', async () => {
    // `other` is a second store on the same database, as another node's is: its own pools and
    // its own in-process queues, so only the lock they share at the server can order them.
    const start = await store.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)
    const tally = { runs: 0, active: 0, most: 0 }
    await Promise.all(Array.from({ length: 20 }, (_, i) => place('reseller:2', tally, i % 2 ? other : store)))
    expect(tally.most).toBe(1)
    expect(tally.runs).toBe(20)
    expect(await store.value(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)).toBe((start ?? 0) + 20)
  })

  it('side by side without a queue the same transactions are refused and run again', async () => {
    const start = await store.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)
    const tally = { runs: 0, active: 0, most: 0 }
    await Promise.all(Array.from({ length: 20 }, () => place(undefined, tally)))
    expect(tally.most).toBeGreaterThan(1)
    expect(tally.runs).toBeGreaterThan(20)
    // Still none lost: SERIALIZABLE and the retries keep them right, at the price of the re-runs.
    expect(await store.value(`SELECT gen FROM cache_generations WHERE scope = 'reseller:2'`)).toBe((start ?? 0) + 20)
  })

  /** Advisory locks held on this test's database, read in PostgreSQL's own dialect. */
  const heldAdvisory = async () =>
    Number(
      (
        await store.pool.query(`SELECT COUNT(*) AS n FROM pg_locks
           WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
      ).rows[0].n
    )

  /**
   * What `on` sends on the connections its transactions check out, and when the answers come:
   * `send <text>` and `answer <text>` in the order they happen.
   */
  function watchClients(on: PostgresStore) {
    const texts: string[] = []
    const events: string[] = []
    const pool = on.pool as unknown as { connect: () => Promise<pg.PoolClient> }
    const connect = pool.connect.bind(pool)
    pool.connect = async () => {
      const client = await connect()
      const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>
      ;(client as unknown as { query: typeof query }).query = (c: unknown, ...rest: unknown[]) => {
        const text = typeof c === 'string' ? c : (c as { text: string }).text
        texts.push(text)
        events.push(`send ${text}`)
        const answer = query(c, ...rest) as Promise<unknown>
        // The pool's own use of the connection later passes a callback and gets no promise.
        void (answer as Promise<unknown> | undefined)?.then(
          () => events.push(`answer ${text}`),
          () => events.push(`failed ${text}`)
        )
        return answer
      }
      return client
    }
    return { texts, events, restore: () => void (pool.connect = connect) }
  }

  it('sends what a transaction starts together without waiting in between, COMMIT and the unlock in one message', async () => {
    const outside = await store.scopeVersions(2)
    const watch = watchClients(store)
    let readings: [ScopeVersions, ScopeVersions] | undefined
    let ids: number[] = []
    try {
      readings = await store.tx(
        async (t) => {
          const [from, ...taken] = await Promise.all([store.scopeVersions(2), t.nextId('orders'), t.nextId('invoices')])
          ids = taken
          await Promise.all([
            bump(store, 'reseller:2'),
            t.run(`UPDATE cache_generations SET gen = gen WHERE scope = 'reseller:1'`)
          ])
          return [from, await store.scopeVersions(2)]
        },
        { queue: 'reseller:2' }
      )
    } finally {
      watch.restore()
    }
    const at = (prefix: string, pattern: RegExp) =>
      watch.events.findIndex((e) => e.startsWith(prefix) && pattern.test(e))
    const lock = /pg_advisory_lock\(.*; COMMIT; BEGIN ISOLATION LEVEL SERIALIZABLE$/s
    // The lock first; the reading and both ids behind it before its answer: one round trip.
    expect(watch.events[0]).toMatch(/^send SELECT pg_advisory_lock\(/)
    for (const early of [/cache_generations g/, /nextval.*'orders'/, /nextval.*'invoices'/])
      expect(at('send', early)).toBeLessThan(at('answer', lock))
    // The writes wait for the lock's answer, then go out together.
    const writes = [/gen = gen \+ 1/, /gen = gen WHERE/].map((w) => at('send', w))
    for (const w of writes) expect(w).toBeGreaterThan(at('answer', lock))
    expect(Math.max(...writes)).toBeLessThan(at('answer', /gen = gen \+ 1/))
    expect(watch.texts[watch.texts.length - 1]).toMatch(/^COMMIT; SELECT pg_advisory_unlock\(/)
    expect(readings?.[0]).toEqual(outside)
    expect(Number(readings?.[1].reseller)).toBe(Number(outside.reseller) + 1)
    expect(ids[1]).toBeGreaterThan(0)
    // Nothing of the queue's lock is left behind: another node takes it at once.
    expect(await heldAdvisory()).toBe(0)
  })

  it('never sends a write behind a lock that failed: it does not happen, and the queue goes on', async () => {
    // Another node holds the queue's lock; the transaction's lock is cancelled while it waits.
    const holder = await other.pool.connect()
    await holder.query(`SELECT pg_advisory_lock(hashtextextended('certdesk-tx:reseller:2', 0))`)
    const before = await store.value<number>(`SELECT gen FROM cache_generations WHERE scope = 'reseller:1'`)
    let read: ScopeVersions | undefined
    const tx = store.tx(
      async (t) => {
        read = await store.scopeVersions(2)
        await t.run(`UPDATE cache_generations SET gen = gen + 100 WHERE scope = 'reseller:1'`)
      },
      { queue: 'reseller:2' }
    )
    const refused = expect(tx).rejects.toThrow()
    try {
      for (let i = 0; ; i++) {
        const waiting = await holder.query(
          `SELECT pg_cancel_backend(pid) AS ok FROM pg_stat_activity WHERE wait_event = 'advisory' AND pid <> pg_backend_pid()`
        )
        if (waiting.rows.length > 0 || i > 200) break
        await new Promise((r) => setTimeout(r, 10))
      }
      await refused
    } finally {
      await holder.query(`SELECT pg_advisory_unlock(hashtextextended('certdesk-tx:reseller:2', 0))`)
      holder.release()
    }
    // The reading behind the lock went out and was answered; the write was never sent.
    expect(read).toBeDefined()
    expect(await store.value(`SELECT gen FROM cache_generations WHERE scope = 'reseller:1'`)).toBe(before)
    expect(await heldAdvisory()).toBe(0)
    const tally = { runs: 0, active: 0, most: 0 }
    await place('reseller:2', tally)
    expect(tally.runs).toBe(1)
  })

  it('sends a queue name that cannot be written into the text as a value, and still releases its lock', async () => {
    const hostile = `reseller:2'; SELECT pg_sleep(5); --`
    const watch = watchClients(store)
    try {
      await store.tx(
        async (t) => void (await t.run(`UPDATE cache_generations SET gen = gen WHERE scope = 'reseller:2'`)),
        { queue: hostile }
      )
    } finally {
      watch.restore()
    }
    expect(watch.texts.join('\n')).not.toContain('pg_sleep')
    expect(await heldAdvisory()).toBe(0)
    // Two stores take turns on it as on any queue.
    const tally = { runs: 0, active: 0, most: 0 }
    await Promise.all(Array.from({ length: 6 }, (_, i) => place(hostile, tally, i % 2 ? other : store)))
    expect(tally.most).toBe(1)
  })
})
