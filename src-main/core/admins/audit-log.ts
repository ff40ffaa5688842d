/**
 * The audit log: who did what to the book, when and from where. Append-only: this module only
 * inserts and reads, and the store's triggers (migration 0017) refuse any UPDATE or DELETE of an
 * entry or an outcome, whoever sends it.
 *
 * An action's entry is written before the action runs, so nothing runs unrecorded (an entry that
 * cannot be written stops the action); its outcome is added once it has ended. What is kept is
 * the action's name, the ids it named and how it ended, never an argument's text, so no
 * password, key or code can reach the log.
 */
import type { CoreContext } from '../context'
import type { SqlArg } from '../store'
import type { Page, Paging } from '../billing/ledger'
import { invalid } from '../errors'
import { isValidDate, isoTimestamp, parseDate } from '../time'
import type { AuditEntry, AuditFilter, AuditOutcome, AuditTargets } from '../../../src-shared/admin-records'
import { type ADMIN_ROLES, AUDIT_OUTCOMES } from '../../../src-shared/constants'

export type { AuditEntry, AuditFilter, AuditOutcome, AuditTargets } from '../../../src-shared/admin-records'

/** Who acts, and from where. */
export interface Actor {
  /** An admin's name, `desktop`, `cli:<os user>`. */
  name: string
  adminId: number | null
  role: (typeof ADMIN_ROLES)[number] | null
  /** The client's address, `desktop window`, `cli on <host>`. */
  source: string
}

export interface ActionStart {
  actor: Actor
  /** The bridge method, `signIn`/`signOut`, or `cli <noun> <verb>`. */
  action: string
  targets: AuditTargets
}

/** The outcome of an HTTP-like status: 2xx ok, 401/403/429 denied, other 4xx refused, 5xx failed. */
export function outcomeOf(status: number): AuditOutcome {
  if (status < 400) return 'ok'
  if (status === 401 || status === 403 || status === 429) return 'denied'
  if (status < 500) return 'refused'
  return 'failed'
}

// Bounds on what one entry holds: names and addresses are short; an action naming many ids keeps
// the first few (a page of order ids for badges), so no call can make an entry large.
const MAX_TEXT = 200
const MAX_IDS_PER_TARGET = 20
const MAX_TARGETS = 8
const bounded = (s: string): string => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s)

function boundedTargets(targets: AuditTargets): string {
  const kept = Object.entries(targets)
    .slice(0, MAX_TARGETS)
    .map(([k, v]) => [
      bounded(k),
      Array.isArray(v) ? v.slice(0, MAX_IDS_PER_TARGET) : typeof v === 'string' ? bounded(v) : v
    ])
  return JSON.stringify(Object.fromEntries(kept))
}

interface EntryRow {
  id: number
  at: string
  actor: string
  admin_id: number | null
  role: AuditEntry['role']
  source: string
  action: string
  targets: string
  outcome: AuditOutcome | null
  status: number | null
  finished_at: string | null
}

const entryOf = (r: EntryRow): AuditEntry => ({
  id: r.id,
  at: r.at,
  actor: r.actor,
  adminId: r.admin_id,
  role: r.role,
  source: r.source,
  action: r.action,
  targets: JSON.parse(r.targets) as AuditTargets,
  outcome: r.outcome,
  status: r.status,
  finishedAt: r.finished_at
})

/** The query filter of a list, checked: a calendar day, a known outcome, bounded text. */
export interface AuditQuery {
  actor?: string
  action?: string
  outcome?: AuditOutcome
  since?: Date
}

export function auditQuery(f: AuditFilter): AuditQuery {
  const text = (v: string | undefined): string | undefined => v?.trim() || undefined
  const since = text(f.since)
  if (since !== undefined && !isValidDate(since))
    throw invalid('could not list the audit log: since must be a calendar day (YYYY-MM-DD)')
  if (f.outcome !== undefined && !(AUDIT_OUTCOMES as readonly string[]).includes(f.outcome))
    throw invalid(`could not list the audit log: outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`)
  return {
    actor: text(f.actor),
    action: text(f.action),
    outcome: f.outcome,
    since: since === undefined ? undefined : parseDate(since)
  }
}

export class AuditLog {
  /** The log needs only the store and its clock (a store copy writes into its target with them). */
  constructor(private readonly ctx: Pick<CoreContext, 'store' | 'clock'>) {}

  /** Writes an action's entry before it runs; its id is what `finish` takes. */
  async begin(start: ActionStart): Promise<number> {
    const { actor, action, targets } = start
    return await this.ctx.store.insert(
      'INSERT INTO audit_log (at, actor, admin_id, role, source, action, targets) VALUES (?, ?, ?, ?, ?, ?, ?)',
      isoTimestamp(this.ctx.clock()),
      bounded(actor.name),
      actor.adminId,
      actor.role,
      bounded(actor.source),
      bounded(action),
      boundedTargets(targets)
    )
  }

  /** Adds the outcome of an entry; an entry takes one outcome, once. */
  async finish(id: number, status: number): Promise<void> {
    await this.ctx.store.run(
      'INSERT INTO audit_outcomes (audit_id, outcome, status, finished_at) VALUES (?, ?, ?, ?)',
      id,
      outcomeOf(status),
      status,
      isoTimestamp(this.ctx.clock())
    )
  }

  /** An action that ended before it began (refused at the door): entry and outcome at once. */
  async record(start: ActionStart, status: number): Promise<number> {
    const db = this.ctx.store
    return await db.tx(async () => {
      const id = await this.begin(start)
      await this.finish(id, status)
      return id
    })
  }

  /** Newest first; filters compare whole values (an actor's name, a method), `since` a UTC day. */
  async list(filter: AuditQuery, page: Paging): Promise<Page<AuditEntry>> {
    const where: string[] = []
    const args: SqlArg[] = []
    if (filter.actor !== undefined) {
      where.push('a.actor = ?')
      args.push(filter.actor)
    }
    if (filter.action !== undefined) {
      where.push('a.action = ?')
      args.push(filter.action)
    }
    if (filter.outcome !== undefined) {
      where.push('o.outcome = ?')
      args.push(filter.outcome)
    }
    if (filter.since !== undefined) {
      // Timestamps are fixed-width UTC text, so text order is time order.
      where.push('a.at >= ?')
      args.push(isoTimestamp(filter.since))
    }
    const sqlWhere = where.length ? `WHERE ${where.join(' AND ')}` : ''
    const from = 'FROM audit_log a LEFT JOIN audit_outcomes o ON o.audit_id = a.id'
    const db = this.ctx.store
    // The page and its total from one snapshot.
    const { rows, n } = await db.tx(
      async () => ({
        rows: await db.all<EntryRow>(
          `SELECT a.*, o.outcome, o.status, o.finished_at ${from} ${sqlWhere} ORDER BY a.id DESC LIMIT ? OFFSET ?`,
          ...args,
          page.limit,
          page.offset
        ),
        n: (await db.value<number>(`SELECT COUNT(*) AS n ${from} ${sqlWhere}`, ...args)) ?? 0
      }),
      { readOnly: true }
    )
    return { items: rows.map(entryOf), total: n, ...page }
  }

  /** Every actor that appears in the log, for the filter's choices. */
  async actors(): Promise<string[]> {
    return (await this.ctx.store.column('SELECT DISTINCT actor FROM audit_log ORDER BY actor')) as string[]
  }
}
