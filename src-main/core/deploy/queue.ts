/**
 * The deploy queue: every stored certificate becomes one pending run per target of its order,
 * started in the background (a reissue on request after a short quiet period, so a burst
 * deploys once). A deploy never undoes or blocks an issuance; a failed attempt is kept, shown
 * in the event log and retried on a backoff schedule computed from ctx.clock and stored, so a
 * due pass (`runDue`, driven by the scheduler or `certdesk admin deploy retry`) picks it up.
 * Processes share the queue through SQLite: an attempt is claimed for a while before it runs.
 */
import type { StoredCertificate } from '../certificates/records'
import type { CoreContext } from '../context'
import { conflict, invalid } from '../errors'
import { recordEvent } from '../events'
import { inOrder } from '../pool'
import { isoTimestamp } from '../time'
import { MAX_COMMAND_TIMEOUT_SECONDS } from './command'
import { MAX_ATTEMPTS, RETRY_MINUTES } from './deploy-events'
import { FAILED_REASON, folderState, perform, reloadRunning, type KeyProvider, type Outcome } from './executors'
import { recoverFolder, type FolderConfig } from './folder'
import { VERIFY_DEADLINE_MS } from './verify'
import {
  createRuns,
  currentCertificate,
  parseCertificate,
  readRun,
  reopenRuns,
  revocationOf,
  type DeployRun,
  type DeployTrigger,
  type RunRow
} from './runs'
import { deployOrder, describeTarget, readTarget } from './targets'

/** A certificate handed to the deploys, and what made it. */
export type DeployedCertificate = Pick<StoredCertificate, 'orderId' | 'certificatePem' | 'chainPem'> & {
  trigger: Exclude<DeployTrigger, 'manual'>
}

/** How long one process owns a running attempt; past it another process may take it over. */
const CLAIM_MINUTES = MAX_COMMAND_TIMEOUT_SECONDS / 60 + 5

/**
 * A certificate reissued on request waits this long for a newer one before its deploys start:
 * a script that reissues several times in a row (each answer comes in well under a second; an
 * RSA key for the next CSR takes a second or two) gets one reload and one webhook for the last
 * certificate, not one per reissue. Nothing is lost by waiting: the old certificate stays valid.
 */
export const REISSUE_QUIET_MS = 5_000
/** Under a steady stream of reissues the deploys start at the latest this long after the first. */
export const REISSUE_HOLD_MAX_MS = 60_000

/** Runs of one certificate go folder, then command (it reloads what the folders wrote), then webhook. */
const KIND_ORDER = `CASE t.kind WHEN 'folder' THEN 0 WHEN 'command' THEN 1 ELSE 2 END`

const allFolderTargets = async (db: CoreContext['store']): Promise<FolderConfig[]> =>
  (
    (await db.all(`SELECT config FROM deploy_targets WHERE kind = 'folder' AND removed_at IS NULL`)) as {
      config: string
    }[]
  ).map((r) => JSON.parse(r.config) as FolderConfig)

const addMinutes = (d: Date, m: number): Date => new Date(d.getTime() + m * 60_000)

interface Hold {
  timer: ReturnType<typeof setTimeout>
  since: Date
  /** Settles the promise `idle()` waits for with the pass that ends the hold. */
  settle: (pass: Promise<unknown>) => void
}

export class DeployQueue {
  private readonly inFlight = new Set<Promise<unknown>>()
  private readonly attempted: number[] = []
  /** Orders whose reissued certificate waits for the quiet period before its deploys run. */
  private readonly held = new Map<number, Hold>()
  /** Orders a pass of their own is running now (after an issue), with how many such passes. */
  private readonly passing = new Map<number, number>()
  /** Registered by whoever keeps private keys (one call at start-up). */
  keyProvider: KeyProvider = () => null
  /** How long a reloaded server has to serve the new certificate (verify.ts). */
  verifyDeadlineMs = VERIFY_DEADLINE_MS

  constructor(private readonly ctx: CoreContext) {}

  /**
   * The hook the certificate code calls after committing a certificate (initial issue, manual
   * and automatic reissue). Records the event and the pending runs, starts them in the
   * background and returns at once; `idle()` waits for them (a CLI run before it exits).
   */
  async certificateStored(c: DeployedCertificate): Promise<number[]> {
    const order = await deployOrder(this.ctx.store, c.orderId)
    const cert = parseCertificate(c.certificatePem)
    const now = this.ctx.clock()
    const db = this.ctx.store
    const runIds = await db.tx(async () => {
      const reissue = c.trigger !== 'issued'
      await recordEvent(db, now, {
        type: reissue ? 'certificate.reissued' : 'certificate.issued',
        resellerId: order.reseller_id,
        orderId: order.id,
        message: `Certificate ${cert.serial} for ${order.domain || order.order_number} ${reissue ? (c.trigger === 'auto_reissue' ? 'reissued automatically' : 'reissued') : 'issued'}, valid till ${cert.validTill}`,
        data: { serial: cert.serial, valid_from: cert.validFrom, valid_till: cert.validTill, trigger: c.trigger }
      })
      return await createRuns(this.ctx.store, order.id, c.trigger, cert, c.certificatePem, c.chainPem, now)
    })
    if (runIds.length === 0) return runIds
    // A reissue on request may be the first of a burst: its deploys wait for the quiet period,
    // and a newer certificate arriving meanwhile takes over the same runs (createRuns).
    if (c.trigger === 'reissued') {
      this.hold(order.id)
    } else {
      const pass = this.runPending({ orderId: order.id })
      this.endHold(order.id)?.settle(pass)
      void this.track(pass)
    }
    return runIds
  }

  /** (Re)starts the quiet period of an order; its deploy pass runs when the period ends. */
  private hold(orderId: number): void {
    const now = this.ctx.clock()
    const existing = this.held.get(orderId)
    if (existing) clearTimeout(existing.timer)
    const since = existing?.since ?? now
    const wait = Math.max(0, Math.min(REISSUE_QUIET_MS, REISSUE_HOLD_MAX_MS - (now.getTime() - since.getTime())))
    let settle = existing?.settle
    if (!settle) {
      let finish: (pass: Promise<unknown>) => void = () => undefined
      void this.track(new Promise<unknown>((resolve) => (finish = resolve)))
      settle = finish
    }
    const hold: Hold = {
      since,
      settle,
      timer: setTimeout(() => this.endHold(orderId)?.settle(this.runPending({ orderId })), wait)
    }
    // A process that stops meanwhile need not wait: the runs are pending and due in SQLite, and
    // the next due pass (the scheduler's, of this process or the next) runs them.
    hold.timer.unref?.()
    this.held.set(orderId, hold)
  }

  /** Ends the quiet period of an order, if any; the caller settles it with the pass it runs. */
  private endHold(orderId: number): Hold | null {
    const hold = this.held.get(orderId)
    if (!hold) return null
    clearTimeout(hold.timer)
    this.held.delete(orderId)
    return hold
  }

  /** Run ids attempted by this process since the last call, for the scheduler's report. */
  takeAttempted(): Promise<DeployRun[]> {
    const ids = [...new Set(this.attempted)]
    this.attempted.length = 0
    return inOrder(ids, (id) => readRun(this.ctx.store, id))
  }

  /**
   * `certdesk admin deploy run --order ID`: deploys the order's current certificate to every
   * target again, now, and waits for the outcome.
   */
  async runOrder(orderId: number): Promise<DeployRun[]> {
    const order = await deployOrder(this.ctx.store, orderId)
    const current = await currentCertificate(this.ctx.store, order.id)
    if (!current) throw invalid(`could not deploy order ${order.order_number}: it has no certificate yet`)
    const parsed = parseCertificate(current.certificatePem)
    const revoked = await revocationOf(this.ctx.store, order.id, parsed.serial)
    if (revoked) {
      throw conflict(
        `could not deploy order ${order.order_number}: its certificate ${parsed.serial} was revoked on ${revoked.at} (${revoked.reason}); reissue it first`
      )
    }
    const now = this.ctx.clock()
    const ids = await this.ctx.store.tx(
      async () =>
        await createRuns(this.ctx.store, order.id, 'manual', parsed, current.certificatePem, current.chainPem, now)
    )
    if (ids.length === 0) throw invalid(`could not deploy order ${order.order_number}: it has no deploy targets`)
    const pass = this.runPending({ orderId: order.id })
    this.endHold(order.id)?.settle(pass)
    await pass
    return inOrder(ids, (id) => readRun(this.ctx.store, id))
  }

  /** One pass over every run whose next attempt is due by ctx.clock; returns what it ran. */
  async runDue(): Promise<DeployRun[]> {
    // A set a crash left half renamed is finished first (folder.ts), before anything reloads.
    for (const f of await allFolderTargets(this.ctx.store)) {
      try {
        recoverFolder(f.path, { dropUnfinished: false })
      } catch {
        // The folder's next attempt reports what is wrong with it.
      }
    }
    return inOrder(await this.track(this.runPending({})), (id) => readRun(this.ctx.store, id))
  }

  /** Resolves when every background run started by `certificateStored` has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }

  /** Remembers work in progress so `idle()` (before the store closes) waits for it. */
  private track<T>(p: Promise<T>): Promise<T> {
    // A background failure is already an attempt row and an event; a failure to write those
    // leaves the run pending, and the next due pass takes it up again after its claim expires.
    const settled = p.catch(() => undefined)
    this.inFlight.add(settled)
    void settled.finally(() => this.inFlight.delete(settled))
    return p
  }

  /** Runs the due runs (of one order, or all), folder before command before webhook. */
  private async runPending(scope: { orderId?: number }): Promise<number[]> {
    const one = scope.orderId
    if (one === undefined) return this.runPendingOf(scope)
    this.passing.set(one, (this.passing.get(one) ?? 0) + 1)
    try {
      return await this.runPendingOf(scope)
    } finally {
      const left = (this.passing.get(one) ?? 1) - 1
      if (left > 0) this.passing.set(one, left)
      else this.passing.delete(one)
    }
  }

  private async runPendingOf(scope: { orderId?: number }): Promise<number[]> {
    const at = this.ctx.clock()
    const now = isoTimestamp(at)
    // A due pass over all orders leaves the ones in their quiet period to the pass that ends it,
    // and those a pass of their own is deploying: that pass keeps the order of kinds.
    const held = scope.orderId === undefined ? [...this.held.keys(), ...this.passing.keys()] : []
    const notHeld = this.ctx.store.inList(held, true)
    // The same for another process (a node of a shared store): an order with a run claimed
    // right now is being deployed by its own pass, and a reissued certificate not attempted
    // yet is still in its quiet period on the node that stored it.
    const elsewhere =
      scope.orderId === undefined
        ? `AND NOT EXISTS (SELECT 1 FROM deploy_runs x WHERE x.order_id = r.order_id AND x.status = 'running' AND x.claimed_until > ?)
           AND NOT (r.status = 'pending' AND r.attempts = 0 AND r.trigger = 'reissued' AND r.updated_at > ?)`
        : ''
    const rows = (await this.ctx.store.all(
      `SELECT r.id FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id
         WHERE ((r.status = 'pending' AND r.next_attempt_at <= ?) OR (r.status = 'running' AND r.claimed_until <= ?))
           ${scope.orderId !== undefined ? 'AND r.order_id = ?' : ''}
           AND r.order_id ${notHeld.sql} ${elsewhere}
         ORDER BY r.order_id, ${KIND_ORDER}, r.id`,
      now,
      now,
      ...(scope.orderId !== undefined ? [scope.orderId] : []),
      notHeld.arg,
      ...(scope.orderId === undefined ? [now, isoTimestamp(new Date(at.getTime() - REISSUE_QUIET_MS))] : [])
    )) as { id: number }[]
    const ran: number[] = []
    for (const { id } of rows) {
      if (await this.attempt(id)) ran.push(id)
    }
    return ran
  }

  /** One attempt of one run; false when another process holds it or it is no longer due. */
  private async attempt(runId: number): Promise<boolean> {
    const db = this.ctx.store
    const start = this.ctx.clock()
    const ts = isoTimestamp(start)
    // A command whose folders are being written is left alone before it is claimed: claiming it
    // and handing it back would make the pass writing those folders find it taken and skip it,
    // and the reload would wait for the next due pass (a scheduler pass and an issuance's pass
    // run side by side).
    const pending = (await db.get('SELECT * FROM deploy_runs WHERE id = ?', runId)) as RunRow | undefined
    const waits = async (r: RunRow): Promise<boolean> =>
      (await readTarget(this.ctx.store, r.target_id)).kind === 'command' &&
      ((await folderState(db, r)) === 'busy' || (await reloadRunning(db, r, isoTimestamp(this.ctx.clock()))))
    if (pending && (await waits(pending))) return false
    const claimed = await db.run(
      `UPDATE deploy_runs SET status = 'running', claimed_until = ?, updated_at = ?
         WHERE id = ? AND ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'running' AND claimed_until <= ?))`,
      isoTimestamp(addMinutes(start, CLAIM_MINUTES)),
      ts,
      runId,
      ts,
      ts
    )
    if (claimed.changes === 0) return false
    this.attempted.push(runId)
    const run = (await db.get('SELECT * FROM deploy_runs WHERE id = ?', runId)) as RunRow
    const target = await readTarget(this.ctx.store, run.target_id)
    const order = await deployOrder(this.ctx.store, run.order_id)
    if (await waits(run)) {
      // Another pass (or process) is writing the folders right now and runs the command after,
      // or runs another reload of this certificate: the next pass takes this one.
      await db.run(`UPDATE deploy_runs SET status = 'pending', claimed_until = NULL WHERE id = ?`, runId)
      this.attempted.pop()
      return false
    }

    // A revoked certificate is never installed again, whichever run was waiting for it.
    const revoked = await revocationOf(db, run.order_id, run.serial)
    if (revoked) {
      await db.run(
        `UPDATE deploy_runs SET status = 'superseded', claimed_until = NULL, next_attempt_at = NULL, last_error = ?, updated_at = ?
         WHERE id = ?`,
        `not deployed: certificate ${run.serial} was revoked on ${revoked.at} (${revoked.reason})`,
        ts,
        runId
      )
      return true
    }

    let outcome: Outcome
    try {
      outcome = await perform(this.ctx, this.keyProvider, run, target, order, this.verifyDeadlineMs)
    } catch (err) {
      outcome = { ok: false, summary: (err as Error).message, reason: FAILED_REASON[target.kind] }
    }

    const end = this.ctx.clock()
    const attempt = run.attempts + 1
    const gaveUp = !outcome.ok && attempt >= MAX_ATTEMPTS
    const next = outcome.ok || gaveUp ? null : addMinutes(end, RETRY_MINUTES[attempt - 1])
    const where = describeTarget(target)
    await db.tx(async () => {
      await db.run(
        `INSERT INTO deploy_attempts (run_id, attempt, ok, summary, request, response_code, output, started_at, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        runId,
        attempt,
        outcome.ok ? 1 : 0,
        outcome.summary,
        outcome.request ?? null,
        outcome.responseCode ?? null,
        outcome.output ?? null,
        ts,
        isoTimestamp(end)
      )
      await db.run(
        `UPDATE deploy_runs SET status = ?, attempts = ?, next_attempt_at = ?, claimed_until = NULL, last_error = ?, updated_at = ?
         WHERE id = ?`,
        outcome.ok ? 'succeeded' : gaveUp ? 'failed' : 'pending',
        attempt,
        next ? isoTimestamp(next) : null,
        outcome.ok ? null : outcome.summary,
        isoTimestamp(end),
        runId
      )
      if (outcome.reopen?.length) {
        await reopenRuns(
          db,
          run,
          outcome.reopen,
          next,
          `restored the previous files: command target ${target.id} failed; deployed again with its next attempt ${next ? `at ${isoTimestamp(next)}` : '(none: it made its last attempt)'}`,
          end
        )
      }
      await recordEvent(db, end, {
        type: outcome.ok ? 'deploy.succeeded' : 'deploy.failed',
        resellerId: order.reseller_id,
        orderId: order.id,
        message: outcome.ok
          ? `Certificate ${run.serial} deployed to ${where}: ${outcome.summary}`
          : `Deploy of certificate ${run.serial} to ${where} failed (attempt ${attempt} of ${MAX_ATTEMPTS}): ${outcome.summary}; ${
              next ? `next attempt at ${isoTimestamp(next)}` : 'no more attempts'
            }`,
        data: {
          run_id: runId,
          target_id: target.id,
          kind: target.kind,
          serial: run.serial,
          trigger: run.trigger,
          attempt,
          next_attempt_at: next ? isoTimestamp(next) : null,
          gave_up: gaveUp,
          ...(outcome.ok ? {} : { reason: outcome.reason ?? FAILED_REASON[target.kind] })
        }
      })
    })
    return true
  }
}
