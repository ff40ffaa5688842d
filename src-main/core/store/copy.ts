/**
 * Copies every row of one store into another, SQLite into PostgreSQL and back (docs/store.md,
 * "Moving a book"). The whole copy is one transaction on the target: it starts by checking the
 * target holds no book, loads each table in batches read from one snapshot of the source, keeps
 * every id, moves PostgreSQL's identity sequences past them, then checks the copy against the
 * source before it commits: the row count of every table, and every reseller's balance against
 * the sum of its ledger rows and against the source's balance. Anything wrong rolls the whole
 * copy back: the target is left as it was.
 */
import { copyPlan, type CopyPlan, type CopyTable } from './copy-plan'
import { openSnapshot, type Snapshot } from './copy-snapshot'
import type { SqlArg, Store } from './port'
import { StoreOpenError } from './postgres-errors'

/** sysexits(3) codes the copy ends with when it refuses or fails. */
export const EXIT_DATAERR = 65
export const EXIT_NOINPUT = 66
export const EXIT_SOFTWARE = 70
export const EXIT_CANTCREAT = 73
export const EXIT_NOPERM = 77

/**
 * A copy refused or undone: one line for the admin and the exit code the CLI ends with, as for
 * a store that cannot be opened (a target refused while it is being opened ends the open).
 */
export class StoreCopyError extends StoreOpenError {
  constructor(message: string, exitCode: number) {
    super(message, exitCode)
    this.name = 'StoreCopyError'
  }
}

export interface CopyProgress {
  table: string
  /** Rows of this table copied so far, of `total`. */
  rows: number
  total: number
  /** Tables done before this one, of `tables`. */
  index: number
  tables: number
}

export interface CopyResult {
  /** Rows per table, in load order: the source's count, equal to the copy's. */
  tables: { name: string; rows: number }[]
  rows: number
  resellers: number
  /** The sum of all resellers' balances, in cents, equal on both sides. */
  balanceCents: number
}

export interface CopyOptions {
  /** Rows read and written per batch (default 500). */
  batch?: number
  /** Called as each table starts, after each batch and when it is done; the copy waits for it. */
  onProgress?: (p: CopyProgress) => void | Promise<void>
  /** Names the target in messages (its URL without the password, or its file). */
  targetName: string
}

/**
 * Tables a CertDesk start fills by itself (the migrations, the seeded catalogue, the install id,
 * the local CA, the default alert rules, the keeper triggers' bookkeeping): a database a server
 * was started on once, to try the connection, holds no book yet, and the copy replaces these.
 */
export const FILLED_BY_START = new Set([
  'settings',
  'reseller_groups',
  'products',
  'product_prices',
  'ca_keys',
  // the local CA's revocation list, made with the CA where the schema has one
  'local_ca_crls',
  'cache_generations',
  'alert_rules',
  'alert_state'
])

/** What an admin counts as a book: these with any row make a target not empty. */
const BOOK = [
  ['resellers', 'reseller', 'resellers'],
  ['orders', 'order', 'orders'],
  ['credit_transactions', 'ledger row', 'ledger rows']
] as const

/** Parameters per statement, under both engines' limits (SQLite 32766, PostgreSQL 65535). */
const MAX_PARAMS = 16_000

const q = (name: string): string => `"${name}"`

/**
 * Why a store with these answers to "is there a row?" is no target, or null when it is one.
 * `rows(sql)` answers the first column of the first row of `sql`.
 */
export async function notEmpty(plan: CopyPlan, rows: (sql: string) => Promise<number>): Promise<string | null> {
  const held: string[] = []
  for (const [table, one, many] of BOOK) {
    const n = await rows(`SELECT COUNT(*) FROM ${q(table)}`)
    if (n > 0) held.push(`${n} ${n === 1 ? one : many}`)
  }
  const book = new Set<string>(BOOK.map(([t]) => t))
  const others: string[] = []
  for (const t of plan.tables) {
    // A table kept by triggers has rows only when the tables it follows have.
    if (book.has(t.name) || FILLED_BY_START.has(t.name) || t.keptByTriggers) continue
    if ((await rows(`SELECT COUNT(*) FROM (SELECT 1 FROM ${q(t.name)} LIMIT 1) AS x`)) > 0) others.push(t.name)
  }
  if (others.length > 0) held.push(`rows in ${others.join(', ')}`)
  return held.length > 0 ? held.join(', ') : null
}

/** Copies `source` into `target`; throws StoreCopyError (and keeps nothing) when it cannot. */
export async function copyStore(source: Store, target: Store, opts: CopyOptions): Promise<CopyResult> {
  const plan = copyPlan()
  const batch = opts.batch ?? 500
  // A retried transaction (PostgreSQL, 40001) starts again from a new snapshot.
  return target.tx(
    async () => {
      const why = await notEmpty(plan, async (sql) => (await target.value<number>(sql)) ?? 0)
      if (why) throw notEmptyError(opts.targetName, why)
      const snapshot = await openSnapshot(source)
      try {
        return await copyIn(plan, snapshot, target, batch, opts)
      } finally {
        await snapshot.close()
      }
    },
    // No other writer is expected on a target that holds no book; a rare retry may wait long.
    { budgetMs: 60_000 }
  )
}

export const notEmptyError = (targetName: string, why: string): StoreCopyError =>
  new StoreCopyError(
    `could not copy the store to ${targetName}: it already holds a book (${why}); copy into an empty database or a new file; nothing was changed`,
    EXIT_CANTCREAT
  )

/**
 * Refuses a source this CertDesk cannot copy faithfully: a schema at another version (tables or
 * columns it does not know would be left behind), or books that do not balance (the copy is
 * checked by its balances, and a book that does not balance needs a look first).
 */
export async function checkSource(source: Store): Promise<void> {
  const snapshot = await openSnapshot(source)
  try {
    await sourceBooks(copyPlan(), snapshot)
  } finally {
    await snapshot.close()
  }
}

async function sourceBooks(plan: CopyPlan, snapshot: Snapshot): Promise<Map<number, Books>> {
  const version = await snapshot.version()
  if (version !== plan.version) {
    throw new StoreCopyError(
      `could not copy the store: it is at schema version ${version} and this CertDesk copies version ${plan.version}; copy it with the CertDesk that wrote it`,
      EXIT_DATAERR
    )
  }
  const books = await balances((sql) => snapshot.all(sql))
  const unbalanced = [...books.entries()].filter(([, b]) => b.balance !== b.ledger)
  if (unbalanced.length > 0) {
    throw new StoreCopyError(
      `could not copy the store: its books do not balance (${unbalanced.slice(0, 5).map(describeUnbalanced).join('; ')}); nothing was copied`,
      EXIT_DATAERR
    )
  }
  return books
}

async function copyIn(
  plan: CopyPlan,
  snapshot: Snapshot,
  target: Store,
  batch: number,
  opts: CopyOptions
): Promise<CopyResult> {
  // Checked again in the snapshot the rows are read from.
  const before = await sourceBooks(plan, snapshot)
  const totals = new Map<string, number>()
  for (const t of plan.tables) {
    const [row] = await snapshot.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${q(t.name)}`)
    totals.set(t.name, Number(row?.n ?? 0))
  }

  const copied: { name: string; rows: number }[] = []
  await withoutTriggers(plan, target, opts.targetName, async () => {
    // What a first start of the target filled goes first.
    for (const t of [...plan.tables].reverse()) await target.run(`DELETE FROM ${q(t.name)}`)
    for (const [index, t] of plan.tables.entries()) {
      const total = totals.get(t.name) ?? 0
      const report = async (rows: number) =>
        await opts.onProgress?.({ table: t.name, rows, total, index, tables: plan.tables.length })
      await report(0)
      const rows = await copyTable(t, snapshot, target, batch, report)
      if (rows !== total) {
        throw mismatch(opts.targetName, [`${t.name}: ${total} rows counted in the source, ${rows} read`])
      }
      copied.push({ name: t.name, rows })
    }
    if (target.engine === 'postgres') await moveSequences(plan.tables, target)
  })
  return verify(copied, before, target, opts.targetName)
}

async function copyTable(
  t: CopyTable,
  snapshot: Snapshot,
  target: Store,
  batch: number,
  report: (rows: number) => Promise<void>
): Promise<number> {
  const perStatement = Math.max(1, Math.min(batch, Math.floor(MAX_PARAMS / t.columns.length)))
  const self = t.selfReferences.map((c) => t.columns.indexOf(c))
  const idAt = t.columns.indexOf('id')
  const later: [id: SqlArg, column: string, value: SqlArg][] = []
  const statements = new Map<number, string>()
  const insertOf = (n: number): string => {
    let sql = statements.get(n)
    if (!sql) {
      const row = `(${t.columns.map(() => '?').join(', ')})`
      sql = `INSERT INTO ${q(t.name)} (${t.columns.map(q).join(', ')}) VALUES ${Array(n).fill(row).join(', ')}`
      statements.set(n, sql)
    }
    return sql
  }
  let done = 0
  const select = `SELECT ${t.columns.map(q).join(', ')} FROM ${q(t.name)}${t.hasId ? ' ORDER BY id' : ''}`
  const read = await snapshot.each(
    select,
    async (rows) => {
      for (let i = 0; i < rows.length; i += perStatement) {
        const chunk = rows.slice(i, i + perStatement)
        const args: SqlArg[] = []
        for (const row of chunk) {
          for (let c = 0; c < row.length; c++) {
            let v = row[c] as SqlArg
            if (v !== null && self.includes(c)) {
              // Set once every row it may point at is in.
              later.push([row[idAt] as SqlArg, t.columns[c], v])
              v = null
            }
            args.push(v)
          }
        }
        const { changes } = await target.run(insertOf(chunk.length), ...args)
        if (changes !== chunk.length) {
          throw new StoreCopyError(
            `could not copy the store: the target kept ${changes} of ${chunk.length} rows written to ${t.name} (a rule or trigger of its own?); nothing was kept`,
            EXIT_SOFTWARE
          )
        }
        done += chunk.length
      }
      await report(done)
    },
    batch
  )
  for (const [id, column, value] of later) {
    await target.run(`UPDATE ${q(t.name)} SET ${q(column)} = ? WHERE id = ?`, value, id)
  }
  return read
}

/**
 * The load runs with the tables' own triggers off, inside the copy's transaction, so they are
 * back on when it commits or rolls back; foreign keys stay checked. What the triggers keep
 * (tallies, cache generations, the installation schedule, counts kept on rows) is copied from
 * the source like every other row, and a trigger would change rows already copied or count
 * them twice. On PostgreSQL they are also what made a large load quadratic: a row updated again
 * and again in one transaction leaves a version behind each time that every later update walks
 * past, and the triggers move one reseller's tallies once per order (a million-order copy ran
 * for half an hour without finishing its orders). PostgreSQL: ALTER TABLE … DISABLE TRIGGER
 * USER, which only the tables' owner may run; SQLite has no such switch, so the triggers are
 * dropped and created again from this CertDesk's schema in the same transaction (the target is a
 * file this copy made); the ones keeping SQLite's search index stay, and fill it.
 */
async function withoutTriggers(
  plan: CopyPlan,
  target: Store,
  targetName: string,
  load: () => Promise<void>
): Promise<void> {
  if (target.engine === 'sqlite') {
    for (const t of plan.triggers) await target.run(`DROP TRIGGER ${q(t.name)}`)
    await load()
    for (const t of plan.triggers) await target.run(t.sql)
    return
  }
  try {
    for (const t of plan.tables) await target.run(`ALTER TABLE ${q(t.name)} DISABLE TRIGGER USER`)
  } catch (err) {
    if ((err as { code?: unknown }).code !== '42501') throw err
    throw new StoreCopyError(
      `could not copy the store to ${targetName}: its user does not own the tables, and the copy loads them with their triggers off (ALTER TABLE … DISABLE TRIGGER); copy as the database's owner; nothing was changed`,
      EXIT_NOPERM
    )
  }
  await load()
  for (const t of plan.tables) await target.run(`ALTER TABLE ${q(t.name)} ENABLE TRIGGER USER`)
}

/**
 * A row inserted with its id given does not move an identity sequence (postgres-migrate.ts,
 * `syncIdentitySequences`): each goes past the largest id, or the next order would collide.
 */
async function moveSequences(tables: CopyTable[], target: Store): Promise<void> {
  for (const t of tables.filter((x) => x.hasId)) {
    await target.value(
      `SELECT setval(pg_get_serial_sequence(?, 'id'), COALESCE((SELECT MAX(id) FROM ${q(t.name)}), 0) + 1, false)`,
      q(t.name)
    )
  }
}

interface Books {
  balance: number
  ledger: number
}

/** Every reseller's balance and the sum of its ledger rows, in cents; the same SQL on both engines. */
async function balances(all: (sql: string) => Promise<unknown[]>): Promise<Map<number, Books>> {
  const rows = (await all(
    `SELECT r.id AS id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
       FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id
      GROUP BY r.id, r.credit_balance_cents ORDER BY r.id`
  )) as { id: number; balance: number; ledger: number }[]
  return new Map(rows.map((r) => [Number(r.id), { balance: Number(r.balance), ledger: Number(r.ledger) }]))
}

const usd = (cents: number): string => `${cents < 0 ? '-' : ''}${(Math.abs(cents) / 100).toFixed(2)}`
const describeUnbalanced = ([id, b]: [number, Books]): string =>
  `reseller ${id}: balance ${usd(b.balance)} USD, its ledger rows sum to ${usd(b.ledger)} USD`

async function verify(
  copied: { name: string; rows: number }[],
  before: Map<number, Books>,
  target: Store,
  targetName: string
): Promise<CopyResult> {
  const wrong: string[] = []
  for (const t of copied) {
    const n = (await target.value<number>(`SELECT COUNT(*) FROM ${q(t.name)}`)) ?? 0
    if (n !== t.rows) wrong.push(`${t.name}: ${t.rows} rows in the source, ${n} in the copy`)
  }
  const after = await balances((sql) => target.all(sql))
  for (const [id, b] of after) {
    const was = before.get(id)
    if (b.balance !== b.ledger)
      wrong.push(`reseller ${id}: balance ${usd(b.balance)} USD but its ledger rows sum to ${usd(b.ledger)} USD`)
    if (!was) wrong.push(`reseller ${id}: not in the source`)
    else if (was.balance !== b.balance)
      wrong.push(`reseller ${id}: balance ${usd(b.balance)} USD in the copy, ${usd(was.balance)} USD in the source`)
  }
  for (const id of before.keys()) if (!after.has(id)) wrong.push(`reseller ${id}: missing from the copy`)
  if (wrong.length > 0) throw mismatch(targetName, wrong)
  let total = 0
  for (const b of after.values()) total += b.balance
  return {
    tables: copied,
    rows: copied.reduce((s, t) => s + t.rows, 0),
    resellers: after.size,
    balanceCents: total
  }
}

function mismatch(targetName: string, wrong: string[]): StoreCopyError {
  const shown = wrong.slice(0, 5).join('; ') + (wrong.length > 5 ? `; and ${wrong.length - 5} more` : '')
  return new StoreCopyError(
    `could not copy the store to ${targetName}: the copy does not match the source (${shown}); nothing was kept`,
    EXIT_SOFTWARE
  )
}
