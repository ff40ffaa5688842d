/**
 * The background work of a serving process (scheduler passes, deploy retries, alert checks and
 * deliveries, installation checks), led by one process at a time.
 *
 * Every serving node runs this loop; only the node holding the store's `background`
 * leadership does the work (`Store.tryLeadership`: a PostgreSQL advisory lock the server frees
 * when the holder's connection dies, so a node killed with -9 gives it up at once). The others
 * ask again at every tick and take over at the first one after the leader is gone. Whether a
 * scheduler pass is due is read from the store (`job_runs`), not from the leader's timer: a new
 * leader runs the pass a dead one cut short at once, and otherwise keeps the interval counted
 * from the last pass any node started. A pass thus runs once per interval across all nodes.
 *
 * On SQLite one process serves the store and always leads; it runs a pass at start, catching
 * up after the machine slept or the app was closed, exactly as before there were nodes.
 */
import type { Installations } from '../installations'
import { startInstallationLoop } from '../installations'
import { DEPLOY_RETRY_INTERVAL_MS, SCHEDULER_INTERVAL_MS, summarize, type Scheduler } from '../scheduler'
import type { CoreContext } from '../context'
import type { Leadership } from '../store'
import { JobRuns } from './job-runs'
import { NODE_NAME } from './leadership'

/** The leadership name of the background work. */
export const BACKGROUND_LEADERSHIP = 'background'
/** The job name of a scheduler pass in `job_runs`. */
export const PASS_JOB = 'scheduler.pass'

export interface BackgroundParts {
  ctx: CoreContext
  scheduler: Scheduler
  installations: Installations
}

export interface BackgroundOptions {
  /** How often a scheduler pass runs (SCHEDULER_INTERVAL_MS unless said). */
  passIntervalMs?: number
  /** What the work did (one line per pass that changed something) and the leadership changes. */
  info(line: string): void
  /** Failures of the work and of the store while asking for the lead. */
  error(line: string): void
}

export interface RunningBackground {
  /** Whether this process leads the background work now. */
  leading(): boolean
  /** Stops the loop, waits for a pass and deploys in flight, and gives the lead up. */
  stop(): Promise<void>
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

export function startBackgroundWork(parts: BackgroundParts, opts: BackgroundOptions): RunningBackground {
  const { scheduler } = parts
  const { store, clock } = parts.ctx
  const interval = opts.passIntervalMs ?? SCHEDULER_INTERVAL_MS
  // Followers ask for the lead, and the leader looks for a due pass and due retries, this often.
  const tickMs = Math.min(DEPLOY_RETRY_INTERVAL_MS, interval)
  const shared = store.engine === 'postgres'
  const jobs = new JobRuns(store)
  let lead: Leadership | null = null
  let stopInstallations: (() => Promise<void>) | null = null
  let firstPass = true
  let stopping = false
  let ticking: Promise<void> | null = null
  let retrying: Promise<void> | null = null
  const passes = new Set<Promise<void>>()

  /** Records a pass as started (awaited, so the next tick sees it), then runs it in the background. */
  const pass = async (): Promise<void> => {
    const id = await jobs.begin(PASS_JOB, NODE_NAME, clock())
    const run = (async () => {
      let outcome: string
      try {
        const r = await scheduler.run()
        outcome = summarize(r)
        if (r.issued.length || r.expired.length || r.validation_needed.length || r.errors.length) opts.info(outcome)
      } catch (err) {
        outcome = `could not run the scheduler: ${message(err)}`
        opts.error(outcome)
      }
      await jobs.finish(id, clock(), outcome)
    })().catch((err: unknown) => opts.error(`could not record the scheduler pass: ${message(err)}`))
    passes.add(run)
    void run.finally(() => passes.delete(run))
  }

  const retry = (): void => {
    if (retrying) return
    retrying = scheduler
      .retryDeploys()
      .catch((err: unknown) => opts.error(`could not retry deploys: ${message(err)}`))
      .finally(() => (retrying = null))
  }

  const letGo = async (): Promise<void> => {
    const stopped = stopInstallations
    stopInstallations = null
    await stopped?.()
    const held = lead
    lead = null
    await held?.release()
  }

  const tick = async (): Promise<void> => {
    if (lead && !lead.held) {
      // The connection holding the lock is gone (a database restart, a network cut): another
      // node may lead already. Work in flight finishes; nothing new starts here.
      opts.error(
        `${NODE_NAME} lost the lead of the background work (its store connection ended); another node takes over`
      )
      await letGo()
    }
    if (!lead) {
      const got = await store.tryLeadership(BACKGROUND_LEADERSHIP)
      if (!got) return
      if (stopping) return void (await got.release())
      lead = got
      if (shared)
        opts.info(`${NODE_NAME} leads the background work (scheduler, deploy retries, alerts, installation checks)`)
      // Orders due an installation check (daily, and right after a deploy) are checked each minute.
      stopInstallations = startInstallationLoop(parts.installations, opts.error)
    }
    // A desk's one process catches up at start (the machine slept, the app was closed); nodes
    // of a shared store go by what the store says was last run.
    const due = (!shared && firstPass) || (await jobs.due(PASS_JOB, NODE_NAME, clock(), interval))
    firstPass = false
    if (due) await pass()
    // At once too: a deploy folder a crash left between its files is finished before anything else.
    retry()
  }

  const safeTick = (): void => {
    if (ticking || stopping) return
    ticking = tick()
      .catch((err: unknown) => opts.error(`could not run the background work: ${message(err)}`))
      .finally(() => (ticking = null))
  }
  safeTick()
  const timer = setInterval(safeTick, tickMs)
  timer.unref()

  return {
    leading: () => lead?.held === true,
    stop: async () => {
      stopping = true
      clearInterval(timer)
      await ticking
      while (passes.size > 0) await Promise.allSettled([...passes])
      await retrying
      await scheduler.idle()
      await letGo()
    }
  }
}
