/**
 * The admin CLI's audit entries. The machine's shell owns the book (it can read the data dir and
 * the keychain anyway), so `certdesk admin …` needs no sign-in, but every admin command is an
 * admin action in the book's audit log: actor `cli:<os user>`, from `cli on <host>`, the command
 * (`cli reseller add`), the ids its options named, and how it ended. The entry is written before
 * the command runs, on the store's own clock (never `--as-of`); a command whose entry cannot be
 * written does not run.
 */
import { hostname, userInfo } from 'node:os'
import { commandKey, databaseOf, UsageError, type Values } from './cli-args'
import type { ActionStart } from './core/admins'
import { ServiceError } from './core/errors'
import { openService, type Service } from './core/service'
import { storageFault } from './core/store/store-faults'
import { STATUS_OF } from './http/errors'

/** Options that name a record by id, as the commands take them. */
const ID_OPTIONS = ['reseller', 'order', 'key-id', 'target', 'channel', 'imported', 'group'] as const

function osUser(): string {
  try {
    return userInfo().username
  } catch {
    return String(process.getuid?.() ?? 'unknown')
  }
}

export function cliActionStart(words: string[], v: Values): ActionStart {
  const targets: ActionStart['targets'] = {}
  for (const o of ID_OPTIONS) {
    const value = v[o]
    if (typeof value === 'string' && /^\d{1,15}$/.test(value)) targets[o] = Number(value)
  }
  // Admin names are what the admins commands act on; no other text option is kept.
  if (words[0] === 'admins' && typeof v.name === 'string' && v.name.length <= 64) targets.name = v.name
  return {
    actor: { name: `cli:${osUser()}`, adminId: null, role: 'owner', source: `cli on ${hostname()}` },
    action: `cli ${commandKey(words)}`.trim(),
    targets
  }
}

/** The HTTP-like status a command's end had, as the audit log keeps outcomes. */
function statusOf(result: { code: number } | { error: unknown }): number {
  if ('code' in result) return result.code === 0 ? 200 : result.code === 2 ? 400 : 500
  const err = result.error
  if (err instanceof UsageError) return 400
  if (err instanceof ServiceError) return STATUS_OF[err.kind]
  if (err instanceof RangeError) return 400
  return storageFault(err) ? 503 : 500
}

/**
 * Runs an admin command between its audit entry and its outcome. `restore` writes a store that
 * does not exist before it runs: its entry is written into the restored store once it has.
 */
export async function audited(
  dataDir: string,
  words: string[],
  v: Values,
  run: () => Promise<number>
): Promise<number> {
  const start = cliActionStart(words, v)
  const target = { dataDir, database: databaseOf(v) }
  if (words[0] === 'restore') {
    const code = await run()
    if (code === 0) await withStore(target, (s) => s.admins.audit.record(start, 200))
    return code
  }
  const entry = await withStore(target, (s) => s.admins.audit.begin(start))
  let status: number
  try {
    const code = await run()
    status = statusOf({ code })
    return code
  } catch (error) {
    status = statusOf({ error })
    throw error
  } finally {
    try {
      await withStore(target, (s) => s.admins.audit.finish(entry, status))
    } catch (err) {
      // The command has run; its entry stays without an outcome, and the shell hears why.
      process.stderr.write(`certdesk: could not record the outcome in the audit log: ${(err as Error).message}\n`)
    }
  }
}

/** A short-lived handle on the store for the audit log alone, on the real clock. */
async function withStore<T>(
  target: { dataDir: string; database: string | undefined },
  fn: (s: Service) => Promise<T>
): Promise<T> {
  const service = await openService(target)
  try {
    return await fn(service)
  } finally {
    await service.close()
  }
}
