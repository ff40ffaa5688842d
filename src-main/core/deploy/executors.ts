/**
 * Executing one deploy attempt: the target kind picks the executor (folder.ts writes the files,
 * command.ts runs the admin's command after them, webhook.ts delivers a signed POST), and the
 * outcome says what happened for the admin and, in general terms, for the reseller.
 */
import { join } from 'node:path'
import type { CoreContext } from '../context'
import { runCommand, type CommandConfig, type CommandResult } from './command'
import { crashPoint } from '../crash-points'
import {
  dropPrevious,
  heldSerial,
  MissingKeyError,
  restorePrevious,
  writeFolder,
  type FolderConfig,
  type WrittenFiles
} from './folder'
import type { RunRow, RunStatus } from './runs'
import { folderTargets, secretName, type DeployTarget, type OrderInfo, type TargetKind } from './targets'
import { VERIFY_DEADLINE_MS, verifyServed } from './verify'
import { deliverWebhook, type WebhookConfig } from './webhook'
import type { Store } from '../store'

/**
 * Where a private key comes from when CertDesk holds it (keys generated on this machine,
 * kept encrypted); null when it holds none for this certificate. A folder target then needs a
 * key file of its own (folder.ts), or it is not written at all.
 */
export type KeyProvider = (
  orderId: number,
  serial: string,
  certificatePem: string
) => string | null | Promise<string | null>

export interface Outcome {
  ok: boolean
  /** The admin's detail (paths, URLs, error text): kept with the attempt and in the stored event message. */
  summary: string
  /** Why it failed in terms a reseller may read (GET /events): never a path, URL or command. */
  reason?: string
  request?: string | null
  responseCode?: number | null
  output?: string | null
  /**
   * Targets whose succeeded runs of this certificate are to be done again: folders whose
   * previous files were put back after a failed reload, and reloads run again on them.
   */
  reopen?: number[]
}

export async function perform(
  ctx: CoreContext,
  keyProvider: KeyProvider,
  run: RunRow,
  target: DeployTarget,
  order: OrderInfo,
  verifyDeadlineMs = VERIFY_DEADLINE_MS
): Promise<Outcome> {
  if (target.kind === 'folder') {
    const config = target.config as FolderConfig
    const key = await keyProvider(order.id, run.serial, run.certificate_pem)
    const wantsPfx = config.pfx || config.layout === 'iis'
    try {
      const { summary } = await writeFolder(
        config,
        {
          domain: order.domain,
          certificatePem: run.certificate_pem,
          chainPem: run.chain_pem,
          privateKeyPem: key,
          pfxPassword: wantsPfx ? await ctx.secrets.get(secretName(target.id, 'pfx_password')) : null
        },
        // A reload follows: the replaced files are kept until it has taken the new ones.
        { keepPrevious: (await targetsOf(ctx.store, order.id, 'command')).length > 0 }
      )
      return { ok: true, summary }
    } catch (err) {
      if (err instanceof MissingKeyError) return { ok: false, summary: err.message, reason: err.reason }
      throw err
    }
  }
  if (target.kind === 'command') {
    const folders = await folderState(ctx.store, run)
    if (folders !== 'written') {
      // Folders written without the others must not wait for a restart to be served either.
      const failed = {
        ok: false,
        summary: `command not run: ${folders === 'busy' ? 'the folders are still being written' : folders}`,
        reason: 'the command was not run because the certificate files are not written'
      }
      return folders === 'busy' ? failed : putBackPrevious(ctx, run, order, target.id, failed)
    }
    // A folder written for this certificate that holds another one now (put back by a restore
    // whose record a crash lost, or changed by hand) is written again before anything reloads.
    const moved: { id: number; config: FolderConfig }[] = []
    for (const f of await targetsOf(ctx.store, run.order_id, 'folder'))
      if ((await runStatus(ctx.store, f.id, run.serial)) === 'succeeded' && heldSerial(f.config.path) !== run.serial)
        moved.push(f)
    if (moved.length > 0)
      return {
        ok: false,
        summary: `command not run: ${moved.map((f) => f.config.path).join(', ')} no longer holds certificate ${run.serial}; it is written again with the next attempt`,
        reason: 'the command was not run because the certificate files are not written',
        reopen: moved.map((f) => f.id)
      }
    const config = target.config as CommandConfig
    const r = await runCommand(config, await commandEnv(ctx.store, run, order))
    const ran = { responseCode: r.exitCode, output: r.output }
    if (!r.ok)
      return putBackPrevious(ctx, run, order, target.id, {
        ok: false,
        summary: r.summary,
        reason: commandReason(r),
        ...ran
      })
    // A reload that exits 0 has not proven anything yet: the servers must serve the new certificate.
    const mismatch = config.verify?.length
      ? await verifyServed(config.verify, run.certificate_pem, order.domain.replace(/^\*\./, ''), verifyDeadlineMs)
      : null
    if (mismatch)
      return putBackPrevious(ctx, run, order, target.id, {
        ok: false,
        summary: `${r.summary}, but ${mismatch}`,
        reason: 'after the reload the server did not serve the new certificate',
        ...ran
      })
    await settleFolders(ctx.store, run, target.id)
    if (!config.verify?.length) return { ok: true, summary: r.summary, ...ran }
    return {
      ok: true,
      summary: `${r.summary}; ${config.verify.length === 1 ? 'the server serves' : `all ${config.verify.length} servers serve`} certificate ${run.serial}`,
      ...ran
    }
  }
  const secret = await ctx.secrets.get(secretName(target.id, 'webhook_secret'))
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
    Math.floor(ctx.clock().getTime() / 1000)
  )
  return {
    ok: r.ok,
    summary: r.summary,
    reason: r.reason ?? undefined,
    request: r.request,
    responseCode: r.status,
    output: r.response
  }
}

/** The order's targets of one kind with their ids, in the order they run. */
async function targetsOf<K extends 'folder' | 'command'>(
  db: Store,
  orderId: number,
  kind: K
): Promise<{ id: number; config: K extends 'folder' ? FolderConfig : CommandConfig }[]> {
  return (
    (await db.all(
      `SELECT id, config FROM deploy_targets WHERE order_id = ? AND kind = ? AND removed_at IS NULL ORDER BY id`,
      orderId,
      kind
    )) as { id: number; config: string }[]
  ).map((t) => ({ id: t.id, config: JSON.parse(t.config) as K extends 'folder' ? FolderConfig : CommandConfig }))
}

/** The newest run of a target for a certificate: its status, or null when it has none. */
async function runStatus(db: Store, targetId: number, serial: string): Promise<RunStatus | null> {
  return (
    ((await db.value(
      'SELECT status FROM deploy_runs WHERE target_id = ? AND serial = ? ORDER BY id DESC LIMIT 1',
      targetId,
      serial
    )) as RunStatus | undefined) ?? null
  )
}

/**
 * Once every reload of the order has taken this certificate (this one just did), the files it
 * replaced are no longer needed: they are dropped, with the previous private key among them.
 */
async function settleFolders(db: Store, run: RunRow, doneTarget: number): Promise<void> {
  for (const c of await targetsOf(db, run.order_id, 'command'))
    if (c.id !== doneTarget && (await runStatus(db, c.id, run.serial)) !== 'succeeded') return
  for (const f of await targetsOf(db, run.order_id, 'folder')) dropPrevious(f.config.path)
}

/**
 * A reload that failed (or did not run, or left the old certificate served) leaves the server on
 * the previous certificate: the folders written for this certificate get their previous files
 * back, so the next restart does not switch certificates unannounced, and the reloads of the
 * order that had already taken the new files run again to load the previous ones. The outcome
 * says what was put back; the folders and those reloads are done again with the next attempt.
 */
async function putBackPrevious(
  ctx: CoreContext,
  run: RunRow,
  order: OrderInfo,
  failedTarget: number,
  outcome: Outcome
): Promise<Outcome> {
  const db = ctx.store
  const restored: string[] = []
  const notes: string[] = []
  const reopen: number[] = []
  for (const f of await targetsOf(db, run.order_id, 'folder')) {
    try {
      const r = restorePrevious(f.config.path, run.serial)
      if (r.kind === 'restored') {
        restored.push(`${f.config.path} (${r.files.join(', ')})`)
        reopen.push(f.id)
      } else if (r.kind === 'first') {
        notes.push(`left the new files in ${f.config.path}: there were none before (a first deploy)`)
      }
    } catch (err) {
      notes.push(`could not restore the previous files in ${f.config.path}: ${(err as Error).message}`)
    }
  }
  if (restored.length > 0) {
    // The fault tests kill the process here: files put back, the attempt not recorded yet.
    crashPoint('deploy:restored')
    notes.unshift(`restored the previous files in ${restored.join('; ')}`)
    for (const c of await targetsOf(db, run.order_id, 'command')) {
      if (c.id === failedTarget || (await runStatus(db, c.id, run.serial)) !== 'succeeded') continue
      const again = await runCommand(c.config, await commandEnv(db, run, order))
      notes.push(`ran command target ${c.id} again so that its server loads them (${again.summary})`)
      reopen.push(c.id)
    }
  }
  if (notes.length === 0) return outcome
  return {
    ...outcome,
    summary: `${outcome.summary}; ${notes.join('; ')}`,
    reason:
      restored.length > 0
        ? `${outcome.reason ?? FAILED_REASON.command}; the previous certificate files were put back`
        : outcome.reason,
    reopen
  }
}

/**
 * Whether another reload of this certificate is under way (claimed and not expired). The reloads
 * of one order run one at a time, so that one that fails can put the previous files back with no
 * other reload reading the folders meanwhile, and run again the ones that had succeeded.
 */
export async function reloadRunning(db: Store, run: RunRow, now: string): Promise<boolean> {
  return (
    (await db.get(
      `SELECT 1 FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id
          WHERE r.order_id = ? AND r.serial = ? AND t.kind = 'command' AND r.id <> ?
            AND r.status = 'running' AND r.claimed_until > ? LIMIT 1`,
      run.order_id,
      run.serial,
      run.id,
      now
    )) !== undefined
  )
}

/**
 * "After the files are written": a command runs once every folder of this certificate is
 * written; `busy` while a folder's first attempt is still to come or under way (the command is
 * then left for the pass that writes the folder), else why a folder is not written.
 */
export async function folderState(db: Store, run: RunRow): Promise<'written' | 'busy' | string> {
  const rows = (await db.all(
    `SELECT r.target_id, r.status, r.attempts, r.last_error FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id
       WHERE r.order_id = ? AND r.serial = ? AND t.kind = 'folder' AND t.removed_at IS NULL AND r.status <> 'superseded'
         AND r.id = (SELECT MAX(id) FROM deploy_runs x WHERE x.target_id = r.target_id AND x.serial = r.serial)`,
    run.order_id,
    run.serial
  )) as {
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

async function commandEnv(db: Store, run: RunRow, order: OrderInfo): Promise<Record<string, string>> {
  const folders = await folderTargets(db, order.id)
  const env: Record<string, string> = {
    CERTDESK_ORDER_ID: String(order.id),
    CERTDESK_ORDER_NUMBER: order.order_number,
    CERTDESK_DOMAIN: order.domain,
    CERTDESK_SERIAL: run.serial,
    CERTDESK_TRIGGER: run.trigger,
    CERTDESK_VALID_FROM: run.valid_from,
    CERTDESK_VALID_TILL: run.valid_till,
    CERTDESK_DEPLOY_DIRS: folders.map((f) => f.path).join('\n')
  }
  // The first folder target's files under fixed names; every folder's path in CERTDESK_DEPLOY_DIRS.
  const first = folders[0]
  if (first) {
    const files = plannedFiles(first)
    env.CERTDESK_DEPLOY_DIR = first.path
    env.CERTDESK_CERT_FILE = files.cert
    env.CERTDESK_CHAIN_FILE = files.chain
    env.CERTDESK_FULLCHAIN_FILE = files.fullchain
    if (files.key) env.CERTDESK_KEY_FILE = files.key
    if (files.combined) env.CERTDESK_COMBINED_FILE = files.combined
    if (files.pfx) env.CERTDESK_PFX_FILE = files.pfx
  }
  return env
}

/** The paths a folder target writes, the same names writeFolder uses; the key is its own or the named file. */
function plannedFiles(config: FolderConfig): WrittenFiles {
  const at = (name: string): string => join(config.path, name)
  return {
    cert: at('cert.pem'),
    chain: at('chain.pem'),
    fullchain: at('fullchain.pem'),
    key: config.keyFile ?? at('privkey.pem'),
    combined: config.layout === 'haproxy' ? at('haproxy.pem') : null,
    pfx: config.pfx || config.layout === 'iis' ? at('certificate.pfx') : null
  }
}

/** A failure's reason for resellers when nothing more specific and safe is known. */
export const FAILED_REASON: Record<TargetKind, string> = {
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
