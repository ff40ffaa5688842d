/**
 * The record of background jobs that run once across all nodes (`job_runs`, migration 0021):
 * when each run started and ended, and on which node. The newest run of a job decides when the
 * next is due, so a node that takes the lead after another died neither runs a pass the dead
 * one had just run nor waits a whole interval after a pass the dead one never finished.
 */
import type { Store } from '../store'
import { isoTimestamp, parseDate } from '../time'

/** Runs kept per job, by age: two weeks of hourly passes, and any node's history for a look back. */
const KEEP_DAYS = 14
/**
 * How long these writes wait for another process's lock (SQLite) or retry conflicts
 * (PostgreSQL): like the pass's own writes, nobody waits for them.
 */
const BUDGET_MS = 60_000

export interface JobRun {
  id: number
  job: string
  node: string
  startedAt: string
  finishedAt: string | null
  outcome: string | null
}

type JobRunRow = {
  id: number
  job: string
  node: string
  started_at: string
  finished_at: string | null
  outcome: string | null
}

const toRun = (r: JobRunRow): JobRun => ({
  id: r.id,
  job: r.job,
  node: r.node,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  outcome: r.outcome
})

export class JobRuns {
  constructor(private readonly store: Store) {}

  /** The newest run of `job`, or null. */
  async last(job: string): Promise<JobRun | null> {
    const r = await this.store.get<JobRunRow>('SELECT * FROM job_runs WHERE job = ? ORDER BY id DESC LIMIT 1', job)
    return r ? toRun(r) : null
  }

  /**
   * Whether `job` is due at `now` for `node`, which holds the job's leadership: never run; its
   * last run was cut short on another node (unfinished, and that node no longer holds the lead,
   * since this one does); or its last run started `intervalMs` ago or more.
   */
  async due(job: string, node: string, now: Date, intervalMs: number): Promise<boolean> {
    const last = await this.last(job)
    if (!last) return true
    if (last.finishedAt === null && last.node !== node) return true
    return now.getTime() - parseDate(last.startedAt).getTime() >= intervalMs
  }

  /** Records the start of a run and drops runs older than KEEP_DAYS; answers its id. */
  async begin(job: string, node: string, now: Date): Promise<number> {
    return this.store.tx(
      async () => {
        await this.store.run(
          'DELETE FROM job_runs WHERE job = ? AND started_at < ?',
          job,
          isoTimestamp(new Date(now.getTime() - KEEP_DAYS * 86_400_000))
        )
        return this.store.insert(
          'INSERT INTO job_runs (job, node, started_at) VALUES (?, ?, ?)',
          job,
          node,
          isoTimestamp(now)
        )
      },
      { budgetMs: BUDGET_MS }
    )
  }

  /** Records the end of a run, with one line on what it did. */
  async finish(id: number, now: Date, outcome: string): Promise<void> {
    const sql = 'UPDATE job_runs SET finished_at = ?, outcome = ? WHERE id = ?'
    await this.store.tx(() => this.store.run(sql, isoTimestamp(now), outcome.slice(0, 500), id), {
      budgetMs: BUDGET_MS
    })
  }
}
