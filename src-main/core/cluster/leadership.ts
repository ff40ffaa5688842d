/**
 * Leadership over the store port (`Store.tryLeadership`): at most one holder of a name at a
 * time across every process on the store (PostgreSQL: a session advisory lock the server frees
 * when the holder's connection dies; SQLite: within the one process that serves the file).
 */
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { SecretStore } from '../secrets'
import type { Leadership, Store } from '../store'

/**
 * This process as the job records name it: the machine and the process id say where to look,
 * the random part keeps two processes that reuse a pid (a container restarted) apart.
 */
export const NODE_NAME = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`

/** Pause between two tries for a name another holds, doubled up to LEADERSHIP_RETRY_MAX_MS. */
const LEADERSHIP_RETRY_MS = 50
const LEADERSHIP_RETRY_MAX_MS = 1_000

/**
 * Leadership of `name`, waiting up to `waitMs` while another holds it (for a short piece of
 * work all nodes may want at once, such as making a shared key); null when it stayed taken.
 */
export async function awaitLeadership(store: Store, name: string, waitMs: number): Promise<Leadership | null> {
  const deadline = performance.now() + waitMs
  for (let pause = LEADERSHIP_RETRY_MS; ; pause = Math.min(pause * 2, LEADERSHIP_RETRY_MAX_MS)) {
    const held = await store.tryLeadership(name)
    if (held) return held
    const left = deadline - performance.now()
    if (left <= 0) return null
    await new Promise((r) => setTimeout(r, Math.min(pause, left)))
  }
}

/** Runs `fn` as the one holder of `name`, waiting up to `waitMs`; throws when it stayed taken. */
export async function asLeader<T>(store: Store, name: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  const held = await awaitLeadership(store, name, waitMs)
  if (!held) throw new Error(`could not take the lead for ${name}: another node held it for ${waitMs} ms`)
  try {
    return await fn()
  } finally {
    await held.release()
  }
}

/** How long a process waits for another that is making the same secret. */
const SECRET_WAIT_MS = 15_000

/**
 * The secret `name` from the secret store, made with `make` the first time. Read-or-create runs
 * one at a time: under the store's leadership for the name (nodes of a team started together,
 * which share one secret store) and inside a write transaction (SQLite's write lock keeps the
 * admin CLI of a desk out too). Two makers would otherwise each keep their own value, the last
 * one overwriting the first, and whatever the first had sealed with it could not be opened again.
 */
export async function secretOnce(
  ctx: { store: Store; secrets: SecretStore },
  name: string,
  make: () => string | Promise<string>
): Promise<string> {
  const existing = await ctx.secrets.get(name)
  if (existing) return existing
  return asLeader(ctx.store, `secret:${name}`, SECRET_WAIT_MS, () =>
    ctx.store.tx(async (): Promise<string> => {
      const made = await ctx.secrets.get(name)
      if (made) return made
      const value = await make()
      await ctx.secrets.set(name, value)
      if ((await ctx.secrets.get(name)) !== value)
        throw new Error(`could not keep the secret ${name}: the secret store did not return it`)
      return value
    })
  )
}
