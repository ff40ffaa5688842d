/**
 * Deploy targets per order and the runs that put every issued and reissued certificate on
 * them. `Deploys` is the one object callers hold: `targets.ts` keeps the targets, `queue.ts`
 * starts, retries and claims the runs, `executors.ts` performs one attempt, `runs.ts` keeps the
 * runs and their attempts. A deploy never undoes or blocks an issuance.
 */
import { createPrivateKey } from 'node:crypto'
import type { CertificateHandover } from '../certificates/records'
import type { CoreContext } from '../context'
import { invalid } from '../errors'
import { recordEvent } from '../events'
import type { Page, Paging } from '../billing/ledger'
import type { KeyProvider } from './executors'
import { DeployQueue, type DeployedCertificate } from './queue'
import { keyMatchesCertificate, readKeyFile } from './key-file'
import { currentCertificate, listRuns, readRun, type DeployRun } from './runs'
import {
  addTarget,
  deployOrder,
  listTargets,
  readTarget,
  removeTarget,
  revealSecret,
  updateTarget,
  type CreatedTarget,
  type DeployTarget,
  type TargetInput
} from './targets'

export { MAX_ATTEMPTS, RETRY_MINUTES } from './deploy-events'
export type { KeyProvider } from './executors'
export { REISSUE_HOLD_MAX_MS, REISSUE_QUIET_MS, type DeployedCertificate } from './queue'
export type { DeployAttempt, DeployRun, DeployTrigger, RunStatus } from './runs'
export {
  secretName,
  TARGET_KINDS,
  type CreatedTarget,
  type DeployTarget,
  type TargetConfig,
  type TargetInput,
  type TargetKind
} from './targets'

export class Deploys {
  private readonly queue: DeployQueue

  constructor(private readonly ctx: CoreContext) {
    this.queue = new DeployQueue(ctx)
  }

  /** Registered by whoever keeps private keys (one call at start-up). */
  setKeyProvider(provider: KeyProvider): void {
    this.queue.keyProvider = provider
  }

  /**
   * How long a reloaded server has to serve the new certificate before the deploy counts as
   * failed (default 15 s; a test with servers that reload in milliseconds shortens it).
   */
  setVerifyDeadline(ms: number): void {
    this.queue.verifyDeadlineMs = ms
  }

  async addTarget(orderId: number, input: TargetInput): Promise<CreatedTarget> {
    return await addTarget(this.ctx, orderId, input)
  }

  async targets(orderId: number, includeRemoved = false): Promise<DeployTarget[]> {
    return await listTargets(this.ctx.store, orderId, includeRemoved)
  }

  async target(targetId: number): Promise<DeployTarget> {
    return await readTarget(this.ctx.store, targetId)
  }

  /** Stops using a target and deletes its secrets; its runs and attempts stay as history. */
  async removeTarget(targetId: number): Promise<DeployTarget> {
    return await removeTarget(this.ctx, targetId)
  }

  /** A folder target's key file, or the servers a command target verifies after the reload. */
  async updateTarget(targetId: number, change: { keyFile?: string | null; verify?: string[] }): Promise<DeployTarget> {
    return await updateTarget(this.ctx, targetId, change)
  }

  /**
   * A key file the admin hands over to be kept (`deploy keep-key`): it must belong to the
   * order's current certificate, so a kept key is never paired with a certificate it does not
   * match. Answers the key as PKCS #8 for the key vault, and whose order it is.
   */
  async keyToKeep(orderId: number, keyFile: string): Promise<{ resellerId: number; pkcs8Pem: string }> {
    const order = await deployOrder(this.ctx.store, orderId)
    const current = await currentCertificate(this.ctx.store, order.id)
    if (!current) throw invalid(`could not keep the key of order ${order.order_number}: it has no certificate yet`)
    let pem: string
    try {
      pem = readKeyFile(keyFile)
    } catch (err) {
      throw invalid(`could not keep the key of order ${order.order_number}: ${(err as Error).message}`)
    }
    if (!keyMatchesCertificate(pem, current.certificatePem))
      throw invalid(
        `could not keep the key of order ${order.order_number}: it does not belong to the order's current certificate`
      )
    return {
      resellerId: order.reseller_id,
      pkcs8Pem: createPrivateKey(pem).export({ type: 'pkcs8', format: 'pem' }).toString()
    }
  }

  /** The webhook secret or PFX password, for the desktop user to copy again. */
  async revealSecret(targetId: number): Promise<string | null> {
    return await revealSecret(this.ctx, targetId)
  }

  /**
   * Records the certificate's event and the pending runs, starts them in the background and
   * returns at once; `idle()` waits for them (a CLI run before it exits).
   */
  async certificateStored(c: DeployedCertificate): Promise<number[]> {
    return await this.queue.certificateStored(c)
  }

  /**
   * The one call the certificate code makes after committing a certificate. It never throws:
   * the certificate is stored whatever happens here (a deploy never undoes or blocks an
   * issuance); what went wrong is put in the event log, and `deploy run` can redo it.
   */
  async afterCertificateStored(c: CertificateHandover): Promise<void> {
    const trigger = c.reason === 'initial' ? 'issued' : c.reason === 'reissue' ? 'reissued' : 'auto_reissue'
    try {
      await this.certificateStored({
        orderId: c.orderId,
        trigger,
        certificatePem: c.certificatePem,
        chainPem: c.chainPem
      })
    } catch (err) {
      try {
        const order = await deployOrder(this.ctx.store, c.orderId)
        await recordEvent(this.ctx.store, this.ctx.clock(), {
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

  /** Runs attempted by this process since the last call, for the scheduler's report. */
  takeAttempted(): Promise<DeployRun[]> {
    return this.queue.takeAttempted()
  }

  /**
   * `certdesk admin deploy run --order ID`: deploys the order's current certificate to every
   * target again, now, and waits for the outcome.
   */
  runOrder(orderId: number): Promise<DeployRun[]> {
    return this.queue.runOrder(orderId)
  }

  /** One pass over every run whose next attempt is due by ctx.clock; returns what it ran. */
  runDue(): Promise<DeployRun[]> {
    return this.queue.runDue()
  }

  /** Resolves when every background run started by `certificateStored` has finished. */
  idle(): Promise<void> {
    return this.queue.idle()
  }

  async runs(orderId: number, page: Paging): Promise<Page<DeployRun>> {
    return await listRuns(this.ctx.store, orderId, page)
  }

  async run(runId: number): Promise<DeployRun> {
    return await readRun(this.ctx.store, runId)
  }
}
