/**
 * Deploy targets and runs as the desktop app shows them: the target's settings without its
 * secrets (the webhook secret and the PFX password stay in the keychain), and the newest run of
 * each target.
 */
import type { CoreContext } from '../context'
import type { DeployRunView, DeployTargetView } from '../../../src-shared/records'
import type { CommandConfig } from './command'
import type { DeployRun, DeployTarget, Deploys } from './deploys'
import type { FolderConfig } from './folder'
import { inOrder } from '../pool'
import { endpointText } from './verify'
import type { WebhookConfig } from './webhook'

export function deployRunView(r: DeployRun): DeployRunView {
  const { orderId: _orderId, history, ...run } = r
  return { ...run, summary: history.at(-1)?.summary ?? null }
}

export function deployTargetView(t: DeployTarget, lastRun: DeployRun | null): DeployTargetView {
  const folder = t.kind === 'folder' ? (t.config as FolderConfig) : null
  const command = t.kind === 'command' ? (t.config as CommandConfig) : null
  return {
    id: t.id,
    kind: t.kind,
    path: folder?.path ?? null,
    layout: folder?.layout ?? null,
    pfx: folder?.pfx ?? false,
    keyFile: folder?.keyFile ?? null,
    command: command?.command ?? null,
    timeoutSeconds: command?.timeoutSeconds ?? null,
    verify: (command?.verify ?? []).map(endpointText),
    url: t.kind === 'webhook' ? (t.config as WebhookConfig).url : null,
    createdAt: t.createdAt,
    lastRun: lastRun && deployRunView(lastRun)
  }
}

/**
 * The newest run of each target of an order, however many runs the order has: run ids grow
 * with time, so the newest run of a target is its highest id.
 */
export async function latestRunPerTarget(
  ctx: CoreContext,
  deploys: Deploys,
  orderId: number
): Promise<Map<number, DeployRun>> {
  const rows = (await ctx.store.all(
    'SELECT target_id AS targetId, MAX(id) AS id FROM deploy_runs WHERE order_id = ? GROUP BY target_id',
    orderId
  )) as { targetId: number; id: number }[]
  return new Map(await inOrder(rows, async (r) => [r.targetId, await deploys.run(r.id)] as const))
}

/** An order's live targets with the newest run of each. */
export async function deployTargetViews(
  ctx: CoreContext,
  deploys: Deploys,
  orderId: number
): Promise<DeployTargetView[]> {
  const latest = await latestRunPerTarget(ctx, deploys, orderId)
  return (await deploys.targets(orderId)).map((t) => deployTargetView(t, latest.get(t.id) ?? null))
}
