/**
 * Deploy targets per order and the runs that put every issued and reissued certificate on
 * them (issue 6). The certificate code calls `certificateStored` after it has committed a
 * certificate: that records the event and one pending run per target in SQLite, and starts them
 * in the background (a reissue on request after a short quiet period, so a burst deploys once). A deploy never undoes or blocks an issuance; a failed attempt is kept, shown
 * in the event log and retried on a backoff schedule computed from ctx.clock and stored, so a
 * due pass (`runDue`, driven by the scheduler or `certdesk admin deploy retry`) picks it up.
 */
import { randomBytes, X509Certificate } from 'node:crypto'
import { isAbsolute, join } from 'node:path'
import type { CoreContext } from '../context'
import { invalid, notFound } from '../errors'
import { recordEvent } from '../events'
import type { Page, Paging } from '../ledger'
import { isoTimestamp } from '../time'
import {
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  MAX_COMMAND_TIMEOUT_SECONDS,
  runCommand,
  type CommandConfig,
  type CommandResult
} from './command'
import { FOLDER_LAYOUTS, writeFolder, type FolderConfig, type FolderLayout, type WrittenFiles } from './folder'
import { MAX_ATTEMPTS, RETRY_MINUTES } from './deploy-events'
import { deliverWebhook, validateWebhookUrl, type WebhookConfig } from './webhook'

export const TARGET_KINDS = ['folder', 'command', 'webhook'] as const
export type TargetKind = (typeof TARGET_KINDS)[number]
export type DeployTrigger = 'issued' | 'reissued' | 'auto_reissue' | 'manual'
export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'superseded'

export { MAX_ATTEMPTS, RETRY_MINUTES }
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

export type TargetInput =
  | { kind: 'folder'; path: string; layout?: FolderLayout; pfx?: boolean }
  | { kind: 'command'; command: string; timeoutSeconds?: number; cwd?: string }
  | { kind: 'webhook'; url: string; secret?: string }

export type TargetConfig = FolderConfig | CommandConfig | WebhookConfig

export interface DeployTarget {
  id: number
  orderId: number
  kind: TargetKind
  config: TargetConfig
  createdAt: string
  removedAt: string | null
}

export interface CreatedTarget {
  target: DeployTarget
  /** Shown once: the webhook secret or the PFX password CertDesk created in the keychain. */
  secret: { name: 'webhook_secret' | 'pfx_password'; value: string } | null
}

/** What the certificate code hands over after storing a certificate. */
export interface StoredCertificate {
  orderId: number
  trigger: Exclude<DeployTrigger, 'manual'>
  certificatePem: string
  chainPem: string
}

/**
 * Where a private key comes from when CertDesk holds it (keys generated on this machine,
 * kept encrypted); null when the customer kept the key, and privkey.pem is then not written.
 */
export type KeyProvider = (
  orderId: number,
  serial: string,
  certificatePem: string
) => string | null | Promise<string | null>

export interface DeployAttempt {
  attempt: number
  ok: boolean
  summary: string
  request: string | null
  responseCode: number | null
  output: string | null
  startedAt: string
  finishedAt: string
}

export interface DeployRun {
  id: number
  targetId: number
  kind: TargetKind
  orderId: number
  serial: string
  trigger: DeployTrigger
  status: RunStatus
  attempts: number
  nextAttemptAt: string | null
  lastError: string | null
  createdAt: string
  updatedAt: string
  history: DeployAttempt[]
}

interface TargetRow {
  id: number
  order_id: number
  kind: TargetKind
  config: string
  created_at: string
  removed_at: string | null
}

interface RunRow {
  id: number
  target_id: number
  order_id: number
  serial: string
  certificate_pem: string
  chain_pem: string
  valid_from: string
  valid_till: string
  trigger: DeployTrigger
  status: RunStatus
  attempts: number
  next_attempt_at: string | null
  last_error: string | null
  created_at: string
  updated_at: string
}

interface OrderInfo {
  id: number
  reseller_id: number
  order_number: string
  domain: string
}

interface Outcome {
  ok: boolean
  /** The admin's detail (paths, URLs, error text): kept with the attempt and in the stored event message. */
  summary: string
  /** Why it failed in terms a reseller may read (GET /events): never a path, URL or command. */
  reason?: string
  request?: string | null
  responseCode?: number | null
  output?: string | null
}

/** Runs of one certificate go folder, then command (it reloads what the folders wrote), then webhook. */
const KIND_ORDER = `CASE t.kind WHEN 'folder' THEN 0 WHEN 'command' THEN 1 ELSE 2 END`

export const secretName = (targetId: number, kind: 'webhook_secret' | 'pfx_password'): string =>
  `deploy-target-${targetId}-${kind === 'webhook_secret' ? 'webhook-secret' : 'pfx-password'}`

const addMinutes = (d: Date, m: number): Date => new Date(d.getTime() + m * 60_000)

interface Hold {
  timer: ReturnType<typeof setTimeout>
  since: Date
  /** Settles the promise `idle()` waits for with the pass that ends the hold. */
  settle: (pass: Promise<unknown>) => void
}

export class Deploys {
  private readonly inFlight = new Set<Promise<unknown>>()
  private keyProvider: KeyProvider = () => null
  private readonly attempted: number[] = []
  /** Orders whose reissued certificate waits for the quiet period before its deploys run. */
  private readonly held = new Map<number, Hold>()

  constructor(private readonly ctx: CoreContext) {}

  /** Registered by whoever keeps private keys (one call at start-up). */
  setKeyProvider(provider: KeyProvider): void {
    this.keyProvider = provider
  }

  addTarget(orderId: number, input: TargetInput): CreatedTarget {
    const order = this.order(orderId)
    const db = this.ctx.db
    const now = isoTimestamp(this.ctx.clock())
    const { config, secret } = this.checkTarget(input)
    return db
      .transaction((): CreatedTarget => {
        const info = db
          .prepare('INSERT INTO deploy_targets (order_id, kind, config, created_at) VALUES (?, ?, ?, ?)')
          .run(order.id, input.kind, JSON.stringify(config), now)
        const id = Number(info.lastInsertRowid)
        // Inside the transaction: if the keychain refuses, the target is not created either.
        if (secret) this.ctx.secrets.set(secretName(id, secret.name), secret.value)
        return { target: this.target(id), secret }
      })
      .immediate()
  }

  targets(orderId: number, includeRemoved = false): DeployTarget[] {
    this.order(orderId)
    const rows = this.ctx.db
      .prepare(
        `SELECT * FROM deploy_targets WHERE order_id = ? ${includeRemoved ? '' : 'AND removed_at IS NULL'} ORDER BY id`
      )
      .all(orderId) as TargetRow[]
    return rows.map(toTarget)
  }

  target(targetId: number): DeployTarget {
    const row = this.ctx.db.prepare('SELECT * FROM deploy_targets WHERE id = ?').get(targetId) as TargetRow | undefined
    if (!row) throw notFound(`deploy target ${targetId} not found`)
    return toTarget(row)
  }

  /** Stops using a target and deletes its secrets; its runs and attempts stay as history. */
  removeTarget(targetId: number): DeployTarget {
    const t = this.target(targetId)
    if (t.removedAt) throw notFound(`deploy target ${targetId} not found`)
    const db = this.ctx.db
    const now = isoTimestamp(this.ctx.clock())
    db.transaction(() => {
      db.prepare('UPDATE deploy_targets SET removed_at = ? WHERE id = ?').run(now, targetId)
      db.prepare(
        `UPDATE deploy_runs SET status = 'superseded', last_error = 'target removed', next_attempt_at = NULL, updated_at = ?
         WHERE target_id = ? AND status IN ('pending', 'running')`
      ).run(now, targetId)
    }).immediate()
    for (const name of ['webhook_secret', 'pfx_password'] as const) {
      if (this.ctx.secrets.get(secretName(targetId, name)) !== null) this.ctx.secrets.delete(secretName(targetId, name))
    }
    return this.target(targetId)
  }

  /** The webhook secret or PFX password, for the desktop user to copy again. */
  revealSecret(targetId: number): string | null {
    const t = this.target(targetId)
    if (t.kind === 'webhook') return this.ctx.secrets.get(secretName(targetId, 'webhook_secret'))
    if (t.kind === 'folder') return this.ctx.secrets.get(secretName(targetId, 'pfx_password'))
    return null
  }

  /**
   * The hook the certificate code calls after committing a certificate (initial issue, manual
   * and automatic reissue). Records the event and the pending runs, starts them in the
   * background and returns at once; `idle()` waits for them (a CLI run before it exits).
   */
  certificateStored(c: StoredCertificate): number[] {
    const order = this.order(c.orderId)
    const cert = parseCertificate(c.certificatePem)
    const now = this.ctx.clock()
    const db = this.ctx.db
    const runIds = db
      .transaction(() => {
        const reissue = c.trigger !== 'issued'
        recordEvent(db, now, {
          type: reissue ? 'certificate.reissued' : 'certificate.issued',
          resellerId: order.reseller_id,
          orderId: order.id,
          message: `Certificate ${cert.serial} for ${order.domain || order.order_number} ${reissue ? (c.trigger === 'auto_reissue' ? 'reissued automatically' : 'reissued') : 'issued'}, valid till ${cert.validTill}`,
          data: { serial: cert.serial, valid_from: cert.validFrom, valid_till: cert.validTill, trigger: c.trigger }
        })
        return this.createRuns(order.id, c.trigger, cert, c.certificatePem, c.chainPem, now)
      })
      .immediate()
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

  /**
   * The one call the certificate code makes after committing a certificate. It never throws:
   * the certificate is stored whatever happens here (issue 6: a deploy never undoes or blocks
   * an issuance); what went wrong is put in the event log, and `deploy run` can redo it.
   */
  afterCertificateStored(c: {
    orderId: number
    reason: 'initial' | 'reissue' | 'auto_reissue'
    certificatePem: string
    chainPem: string
  }): void {
    const trigger = c.reason === 'initial' ? 'issued' : c.reason === 'reissue' ? 'reissued' : 'auto_reissue'
    try {
      this.certificateStored({ orderId: c.orderId, trigger, certificatePem: c.certificatePem, chainPem: c.chainPem })
    } catch (err) {
      try {
        const order = this.order(c.orderId)
        recordEvent(this.ctx.db, this.ctx.clock(), {
          type: 'deploy.failed',
          resellerId: order.reseller_id,
          orderId: order.id,
          message: `could not start the deploys of order ${order.order_number}: ${(err as Error).message}`,
          data: { trigger }
        })
      } catch {
        // The store itself is failing; the certificate was committed before this call.
      }
    }
  }

  /** Run ids attempted by this process since the last call, for the scheduler's report. */
  takeAttempted(): DeployRun[] {
    const ids = [...new Set(this.attempted)]
    this.attempted.length = 0
    return ids.map((id) => this.run(id))
  }

  /**
   * `certdesk admin deploy run --order ID`: deploys the order's current certificate to every
   * target again, now, and waits for the outcome.
   */
  async runOrder(orderId: number): Promise<DeployRun[]> {
    const order = this.order(orderId)
    const current = this.currentCertificate(order.id)
    if (!current) throw invalid(`could not deploy order ${order.order_number}: it has no certificate yet`)
    const now = this.ctx.clock()
    const ids = this.ctx.db
      .transaction(() =>
        this.createRuns(
          order.id,
          'manual',
          parseCertificate(current.certificatePem),
          current.certificatePem,
          current.chainPem,
          now
        )
      )
      .immediate()
    if (ids.length === 0) throw invalid(`could not deploy order ${order.order_number}: it has no deploy targets`)
    const pass = this.runPending({ orderId: order.id })
    this.endHold(order.id)?.settle(pass)
    await pass
    return ids.map((id) => this.run(id))
  }

  /** One pass over every run whose next attempt is due by ctx.clock; returns what it ran. */
  async runDue(): Promise<DeployRun[]> {
    return (await this.track(this.runPending({}))).map((id) => this.run(id))
  }

  /** Resolves when every background run started by `certificateStored` has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }

  runs(orderId: number, page: Paging): Page<DeployRun> {
    this.order(orderId)
    const ids = this.ctx.db
      .prepare('SELECT id FROM deploy_runs WHERE order_id = ? ORDER BY id DESC LIMIT ? OFFSET ?')
      .all(orderId, page.limit, page.offset) as { id: number }[]
    const { n } = this.ctx.db.prepare('SELECT COUNT(*) AS n FROM deploy_runs WHERE order_id = ?').get(orderId) as {
      n: number
    }
    return { items: ids.map((r) => this.run(r.id)), total: n, ...page }
  }

  run(runId: number): DeployRun {
    const r = this.ctx.db
      .prepare('SELECT r.*, t.kind FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id WHERE r.id = ?')
      .get(runId) as (RunRow & { kind: TargetKind }) | undefined
    if (!r) throw notFound(`deploy run ${runId} not found`)
    const history = this.ctx.db
      .prepare(
        `SELECT attempt, ok, summary, request, response_code AS responseCode, output, started_at AS startedAt,
           finished_at AS finishedAt FROM deploy_attempts WHERE run_id = ? ORDER BY attempt`
      )
      .all(runId) as (Omit<DeployAttempt, 'ok'> & { ok: number })[]
    return {
      id: r.id,
      targetId: r.target_id,
      kind: r.kind,
      orderId: r.order_id,
      serial: r.serial,
      trigger: r.trigger,
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      lastError: r.last_error,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      history: history.map((h) => ({ ...h, ok: h.ok === 1 }))
    }
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

  private createRuns(
    orderId: number,
    trigger: DeployTrigger,
    cert: ParsedCertificate,
    certificatePem: string,
    chainPem: string,
    now: Date
  ): number[] {
    const db = this.ctx.db
    const ts = isoTimestamp(now)
    const targets = db
      .prepare('SELECT id FROM deploy_targets WHERE order_id = ? AND removed_at IS NULL ORDER BY id')
      .all(orderId) as { id: number }[]
    // A run not attempted yet (a reissue in its quiet period) takes the newer certificate in
    // place: one run per target for a burst, and its webhook delivery id stays the same.
    const waiting = new Map(
      (
        db
          .prepare(
            `SELECT target_id, MAX(id) AS id FROM deploy_runs WHERE order_id = ? AND status = 'pending' AND attempts = 0
             GROUP BY target_id`
          )
          .all(orderId) as { target_id: number; id: number }[]
      ).map((r) => [r.target_id, r.id])
    )
    const retake = db.prepare(
      `UPDATE deploy_runs SET serial = ?, certificate_pem = ?, chain_pem = ?, valid_from = ?, valid_till = ?, trigger = ?,
         next_attempt_at = ?, last_error = NULL, updated_at = ? WHERE id = ?`
    )
    const insert = db.prepare(
      `INSERT INTO deploy_runs (target_id, order_id, serial, certificate_pem, chain_pem, valid_from, valid_till, trigger,
         status, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`
    )
    const ids = targets.map((t) => {
      const id = waiting.get(t.id)
      if (id !== undefined) {
        retake.run(cert.serial, certificatePem, chainPem, cert.validFrom, cert.validTill, trigger, ts, ts, id)
        return id
      }
      return Number(
        insert.run(
          t.id,
          orderId,
          cert.serial,
          certificatePem,
          chainPem,
          cert.validFrom,
          cert.validTill,
          trigger,
          ts,
          ts,
          ts
        ).lastInsertRowid
      )
    })
    // A newer certificate replaces whatever an older run was still retrying.
    db.prepare(
      `UPDATE deploy_runs SET status = 'superseded', next_attempt_at = NULL, updated_at = ?
       WHERE order_id = ? AND status = 'pending' AND serial <> ?`
    ).run(ts, orderId, cert.serial)
    return ids
  }

  /** Runs the due runs (of one order, or all), folder before command before webhook. */
  private async runPending(scope: { orderId?: number }): Promise<number[]> {
    const now = isoTimestamp(this.ctx.clock())
    // A due pass over all orders leaves the ones in their quiet period to the pass that ends it.
    const held = scope.orderId === undefined ? [...this.held.keys()] : []
    const rows = this.ctx.db
      .prepare(
        `SELECT r.id FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id
         WHERE ((r.status = 'pending' AND r.next_attempt_at <= ?) OR (r.status = 'running' AND r.claimed_until <= ?))
           ${scope.orderId !== undefined ? 'AND r.order_id = ?' : ''}
           AND r.order_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY r.order_id, ${KIND_ORDER}, r.id`
      )
      .all(now, now, ...(scope.orderId !== undefined ? [scope.orderId] : []), JSON.stringify(held)) as { id: number }[]
    const ran: number[] = []
    for (const { id } of rows) {
      if (await this.attempt(id)) ran.push(id)
    }
    return ran
  }

  /** One attempt of one run; false when another process holds it or it is no longer due. */
  private async attempt(runId: number): Promise<boolean> {
    const db = this.ctx.db
    const start = this.ctx.clock()
    const ts = isoTimestamp(start)
    const claimed = db
      .prepare(
        `UPDATE deploy_runs SET status = 'running', claimed_until = ?, updated_at = ?
         WHERE id = ? AND ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'running' AND claimed_until <= ?))`
      )
      .run(isoTimestamp(addMinutes(start, CLAIM_MINUTES)), ts, runId, ts, ts)
    if (claimed.changes === 0) return false
    this.attempted.push(runId)
    const run = db.prepare('SELECT * FROM deploy_runs WHERE id = ?').get(runId) as RunRow
    const target = this.target(run.target_id)
    const order = this.order(run.order_id)
    if (target.kind === 'command' && this.folderState(run) === 'busy') {
      // Another pass (or process) is writing the folders right now and runs the command after.
      db.prepare(`UPDATE deploy_runs SET status = 'pending', claimed_until = NULL WHERE id = ?`).run(runId)
      this.attempted.pop()
      return false
    }

    let outcome: Outcome
    try {
      outcome = await this.perform(run, target, order)
    } catch (err) {
      outcome = { ok: false, summary: (err as Error).message, reason: FAILED_REASON[target.kind] }
    }

    const end = this.ctx.clock()
    const attempt = run.attempts + 1
    const gaveUp = !outcome.ok && attempt >= MAX_ATTEMPTS
    const next = outcome.ok || gaveUp ? null : addMinutes(end, RETRY_MINUTES[attempt - 1])
    const where = describeTarget(target)
    db.transaction(() => {
      db.prepare(
        `INSERT INTO deploy_attempts (run_id, attempt, ok, summary, request, response_code, output, started_at, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
      ).run(
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
      db.prepare(
        `UPDATE deploy_runs SET status = ?, attempts = ?, next_attempt_at = ?, claimed_until = NULL, last_error = ?, updated_at = ?
         WHERE id = ?`
      ).run(
        outcome.ok ? 'succeeded' : gaveUp ? 'failed' : 'pending',
        attempt,
        next ? isoTimestamp(next) : null,
        outcome.ok ? null : outcome.summary,
        isoTimestamp(end),
        runId
      )
      recordEvent(db, end, {
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
    }).immediate()
    return true
  }

  private async perform(run: RunRow, target: DeployTarget, order: OrderInfo): Promise<Outcome> {
    if (target.kind === 'folder') {
      const config = target.config as FolderConfig
      const key = await this.keyProvider(order.id, run.serial, run.certificate_pem)
      const wantsPfx = config.pfx || config.layout === 'iis'
      const { summary } = await writeFolder(config, {
        domain: order.domain,
        certificatePem: run.certificate_pem,
        chainPem: run.chain_pem,
        privateKeyPem: key,
        pfxPassword: wantsPfx ? this.ctx.secrets.get(secretName(target.id, 'pfx_password')) : null
      })
      return { ok: true, summary }
    }
    if (target.kind === 'command') {
      const folders = this.folderState(run)
      if (folders !== 'written')
        return {
          ok: false,
          summary: `command not run: ${folders === 'busy' ? 'the folders are still being written' : folders}`,
          reason: 'the command was not run because the certificate files are not written'
        }
      const key = await this.keyProvider(order.id, run.serial, run.certificate_pem)
      const r = await runCommand(target.config as CommandConfig, this.commandEnv(run, order, key !== null))
      return { ok: r.ok, summary: r.summary, reason: commandReason(r), responseCode: r.exitCode, output: r.output }
    }
    const secret = this.ctx.secrets.get(secretName(target.id, 'webhook_secret'))
    if (!secret) {
      const summary = 'could not sign webhook: its secret is missing from the OS keychain'
      return { ok: false, summary, reason: summary }
    }
    const attempt = run.attempts + 1
    const r = await deliverWebhook(
      target.config as WebhookConfig,
      secret,
      {
        type:
          run.trigger === 'issued'
            ? 'certificate.issued'
            : run.trigger === 'manual'
              ? 'certificate.deployed'
              : 'certificate.reissued',
        delivery: `run-${run.id}`,
        attempt,
        trigger: run.trigger,
        order_id: order.id,
        order_number: order.order_number,
        domain: order.domain,
        serial: run.serial,
        valid_from: run.valid_from,
        valid_till: run.valid_till,
        certificate_pem: run.certificate_pem,
        ca_bundle: run.chain_pem
      },
      Math.floor(this.ctx.clock().getTime() / 1000)
    )
    return { ok: r.ok, summary: r.summary, reason: r.reason ?? undefined, request: r.request, responseCode: r.status, output: r.response }
  }

  /**
   * "After the files are written": a command runs once every folder of this certificate is
   * written; `busy` while a folder's first attempt is still to come or under way (the command is
   * then left for the pass that writes the folder), else why a folder is not written.
   */
  private folderState(run: RunRow): 'written' | 'busy' | string {
    const rows = this.ctx.db
      .prepare(
        `SELECT r.target_id, r.status, r.attempts, r.last_error FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id
         WHERE r.order_id = ? AND r.serial = ? AND t.kind = 'folder' AND t.removed_at IS NULL AND r.status <> 'superseded'
           AND r.id = (SELECT MAX(id) FROM deploy_runs x WHERE x.target_id = r.target_id AND x.serial = r.serial)`
      )
      .all(run.order_id, run.serial) as {
      target_id: number
      status: RunStatus
      attempts: number
      last_error: string | null
    }[]
    if (rows.some((r) => r.status === 'running' || (r.status === 'pending' && r.attempts === 0))) return 'busy'
    const notDone = rows.find((r) => r.status !== 'succeeded')
    if (!notDone) return 'written'
    return `folder target ${notDone.target_id} is not written${notDone.last_error ? ` (${notDone.last_error})` : ''}`
  }

  private commandEnv(run: RunRow, order: OrderInfo, hasKey: boolean): Record<string, string> {
    const folders = this.ctx.db
      .prepare(`SELECT * FROM deploy_targets WHERE order_id = ? AND kind = 'folder' AND removed_at IS NULL ORDER BY id`)
      .all(order.id) as TargetRow[]
    const env: Record<string, string> = {
      CERTDESK_ORDER_ID: String(order.id),
      CERTDESK_ORDER_NUMBER: order.order_number,
      CERTDESK_DOMAIN: order.domain,
      CERTDESK_SERIAL: run.serial,
      CERTDESK_TRIGGER: run.trigger,
      CERTDESK_VALID_FROM: run.valid_from,
      CERTDESK_VALID_TILL: run.valid_till,
      CERTDESK_DEPLOY_DIRS: folders.map((f) => (JSON.parse(f.config) as FolderConfig).path).join('\n')
    }
    // The first folder target's files under fixed names; every folder's path in CERTDESK_DEPLOY_DIRS.
    const first = folders[0]
    if (first) {
      const files = plannedFiles(JSON.parse(first.config) as FolderConfig, hasKey)
      env.CERTDESK_DEPLOY_DIR = (JSON.parse(first.config) as FolderConfig).path
      env.CERTDESK_CERT_FILE = files.cert
      env.CERTDESK_CHAIN_FILE = files.chain
      env.CERTDESK_FULLCHAIN_FILE = files.fullchain
      if (files.key) env.CERTDESK_KEY_FILE = files.key
      if (files.combined) env.CERTDESK_COMBINED_FILE = files.combined
      if (files.pfx) env.CERTDESK_PFX_FILE = files.pfx
    }
    return env
  }

  /** The order's current certificate: the newest in the certificate store, else the last one deployed. */
  private currentCertificate(orderId: number): { certificatePem: string; chainPem: string } | null {
    const row = this.ctx.db
      .prepare(
        'SELECT certificate_pem AS certificatePem, chain_pem AS chainPem FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1'
      )
      .get(orderId) as { certificatePem: string; chainPem: string } | undefined
    if (row) return row
    const last = this.ctx.db
      .prepare(
        'SELECT certificate_pem AS certificatePem, chain_pem AS chainPem FROM deploy_runs WHERE order_id = ? ORDER BY id DESC LIMIT 1'
      )
      .get(orderId) as { certificatePem: string; chainPem: string } | undefined
    return last ?? null
  }

  private order(orderId: number): OrderInfo {
    const row = this.ctx.db
      .prepare('SELECT id, reseller_id, order_number, domain FROM orders WHERE id = ?')
      .get(orderId) as OrderInfo | undefined
    if (!row) throw notFound(`order ${orderId} not found`)
    return row
  }

  private checkTarget(input: TargetInput): { config: TargetConfig; secret: CreatedTarget['secret'] } {
    switch (input.kind) {
      case 'folder': {
        const path = input.path?.trim()
        if (!path || !isAbsolute(path))
          throw invalid('could not add folder target: path must be an absolute folder path')
        const layout = input.layout ?? 'nginx'
        if (!FOLDER_LAYOUTS.includes(layout))
          throw invalid(`could not add folder target: layout must be one of ${FOLDER_LAYOUTS.join(', ')}`)
        const pfx = Boolean(input.pfx) || layout === 'iis'
        return {
          config: { path, layout, pfx },
          secret: pfx ? { name: 'pfx_password', value: randomBytes(18).toString('base64url') } : null
        }
      }
      case 'command': {
        const command = input.command?.trim()
        if (!command) throw invalid('could not add command target: command is empty')
        if (command.length > 4096) throw invalid('could not add command target: command is longer than 4096 characters')
        const timeoutSeconds = input.timeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS
        if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > MAX_COMMAND_TIMEOUT_SECONDS) {
          throw invalid(`could not add command target: timeout must be 1 to ${MAX_COMMAND_TIMEOUT_SECONDS} seconds`)
        }
        if (input.cwd !== undefined && !isAbsolute(input.cwd))
          throw invalid('could not add command target: cwd must be an absolute path')
        return { config: { command, timeoutSeconds, ...(input.cwd ? { cwd: input.cwd } : {}) }, secret: null }
      }
      case 'webhook': {
        const problem = validateWebhookUrl(input.url ?? '')
        if (problem) throw invalid(`could not add webhook target: url ${problem}`)
        if (input.secret !== undefined && input.secret.length < 16)
          throw invalid('could not add webhook target: a secret needs at least 16 characters')
        return {
          config: { url: input.url },
          secret: { name: 'webhook_secret', value: input.secret ?? `whsec_${randomBytes(32).toString('base64url')}` }
        }
      }
      default:
        throw invalid(`could not add deploy target: kind must be one of ${TARGET_KINDS.join(', ')}`)
    }
  }
}

interface ParsedCertificate {
  serial: string
  validFrom: string
  validTill: string
}

function parseCertificate(pem: string): ParsedCertificate {
  let c: X509Certificate
  try {
    c = new X509Certificate(pem)
  } catch (err) {
    throw invalid(`could not read certificate: ${(err as Error).message}`)
  }
  return {
    serial: c.serialNumber.toUpperCase(),
    validFrom: isoTimestamp(new Date(c.validFrom)),
    validTill: isoTimestamp(new Date(c.validTo))
  }
}

/** The paths a folder target writes, the same names writeFolder uses. */
function plannedFiles(config: FolderConfig, hasKey: boolean): WrittenFiles {
  const at = (name: string): string => join(config.path, name)
  return {
    cert: at('cert.pem'),
    chain: at('chain.pem'),
    fullchain: at('fullchain.pem'),
    key: hasKey ? at('privkey.pem') : null,
    combined: config.layout === 'haproxy' ? at('haproxy.pem') : null,
    pfx: config.pfx || config.layout === 'iis' ? at('certificate.pfx') : null
  }
}

/** A failure's reason for resellers when nothing more specific and safe is known. */
const FAILED_REASON: Record<TargetKind, string> = {
  folder: 'the certificate files could not be written',
  command: 'the command did not complete',
  webhook: 'the webhook could not be delivered'
}

/** How a command ended, without the command or its output (both the admin's). */
function commandReason(r: CommandResult): string | undefined {
  if (r.ok) return undefined
  if (r.timedOut) return 'the command ran past its time limit'
  if (r.signal) return `the command was stopped by ${r.signal}`
  if (r.exitCode !== null) return `the command exited with ${r.exitCode}`
  return 'the command could not be started'
}

/** The admin's description of a target (stored event messages, never shown to a reseller). */
function describeTarget(t: DeployTarget): string {
  if (t.kind === 'folder') return `folder ${(t.config as FolderConfig).path}`
  if (t.kind === 'command') return `command target ${t.id}`
  return `webhook ${(t.config as WebhookConfig).url}`
}

function toTarget(r: TargetRow): DeployTarget {
  return {
    id: r.id,
    orderId: r.order_id,
    kind: r.kind,
    config: JSON.parse(r.config) as TargetConfig,
    createdAt: r.created_at,
    removedAt: r.removed_at
  }
}
