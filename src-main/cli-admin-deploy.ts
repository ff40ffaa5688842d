/**
 * `certdesk admin deploy …` and `certdesk admin events list`: deploy targets per order, a
 * manual re-run, the due-retry pass, and the event log, printed as JSON like every admin
 * command. A thin adapter: the rules live in src-main/core/deploy. Events are printed through
 * the reseller API's presenter (GET /events), with the reseller each belongs to beside it.
 */
import { commandKey, int, need, optionalInt, print, UsageError, type Values } from './cli-args'
import type { DeployRun, DeployTarget, TargetInput } from './core/deploy/deploys'
import type { FolderLayout } from './core/deploy/folder'
import { ADMIN_LOG_TYPES, type AdminEventFilter, type AdminLogEvent, type CertEvent } from './core/events'
import type { Service } from './core/service'
import { eventJson, paginationJson } from './http/present'

export const DEPLOY_USAGE = `  certdesk admin [--data-dir D] deploy add --order ID --folder PATH [--layout nginx|apache|haproxy|iis] [--pfx] [--key-file PATH]
  certdesk admin [--data-dir D] deploy add --order ID --command CMD [--timeout SECONDS] [--cwd DIR] [--verify HOST:PORT[,HOST:PORT…]]
  certdesk admin [--data-dir D] deploy set --target ID (--key-file PATH|'' | --verify HOST:PORT[,…]|'')
  certdesk admin [--data-dir D] deploy keep-key --order ID --key-file PATH
  certdesk admin [--data-dir D] deploy add --order ID --webhook URL
  certdesk admin [--data-dir D] deploy list --order ID
  certdesk admin [--data-dir D] deploy remove --target ID
  certdesk admin [--data-dir D] deploy secret --target ID
  certdesk admin [--data-dir D] deploy run --order ID
  certdesk admin [--data-dir D] deploy retry [--as-of YYYY-MM-DD[ HH:MM:SS]]
  certdesk admin [--data-dir D] events list [--order ID] [--type T] [--limit N] [--offset N]`

export const isDeployCommand = (noun: string | undefined): boolean => noun === 'deploy' || noun === 'events'

/** Returns the exit code: 1 when a deploy attempt failed, so scripts notice. */
export async function deployAdmin(service: Service, words: string[], v: Values): Promise<number> {
  const d = service.deploys
  const key = commandKey(words)
  switch (key) {
    case 'deploy add': {
      const kinds = (['folder', 'command', 'webhook'] as const).filter((k) => v[k] !== undefined)
      if (kinds.length !== 1) throw new UsageError('give exactly one of --folder, --command or --webhook')
      let input: TargetInput
      if (kinds[0] === 'folder')
        input = {
          kind: 'folder',
          path: need(v, 'folder'),
          layout: (v.layout as FolderLayout | undefined) ?? 'nginx',
          pfx: Boolean(v.pfx),
          keyFile: v['key-file']
        }
      else if (kinds[0] === 'command')
        input = {
          kind: 'command',
          command: need(v, 'command'),
          timeoutSeconds: optionalInt(v, 'timeout'),
          cwd: v.cwd,
          verify: endpoints(v.verify)
        }
      else input = { kind: 'webhook', url: need(v, 'webhook') }
      const created = d.addTarget(int(v, 'order'), input)
      print({
        success: true,
        target: targetOut(created.target),
        ...(created.secret
          ? {
              [created.secret.name]: created.secret.value,
              note: 'Shown once here; CertDesk keeps it in the OS keychain (`deploy secret --target ID` shows it again on this machine).'
            }
          : {})
      })
      return 0
    }
    case 'deploy set': {
      const keyFile = v['key-file']
      if ((keyFile === undefined) === (v.verify === undefined))
        throw new UsageError('give exactly one of --key-file or --verify')
      const change =
        keyFile !== undefined
          ? { keyFile: keyFile.trim() === '' ? null : keyFile }
          : { verify: endpoints(v.verify) ?? [] }
      print({ success: true, target: targetOut(d.updateTarget(int(v, 'target'), change)) })
      return 0
    }
    case 'deploy keep-key': {
      const orderId = int(v, 'order')
      const { resellerId, pkcs8Pem } = d.keyToKeep(orderId, need(v, 'key-file'))
      service.keyVault.store(resellerId, orderId, pkcs8Pem)
      print({
        success: true,
        order_id: orderId,
        note: 'CertDesk keeps this key now; `deploy run --order ID` deploys it.'
      })
      return 0
    }
    case 'deploy list': {
      const orderId = int(v, 'order')
      const runs = d.runs(orderId, { limit: 20, offset: 0 })
      print({ success: true, targets: d.targets(orderId).map(targetOut), recent_runs: runs.items.map(runOut) })
      return 0
    }
    case 'deploy remove':
      print({ success: true, target: targetOut(d.removeTarget(int(v, 'target'))) })
      return 0
    case 'deploy secret': {
      const secret = d.revealSecret(int(v, 'target'))
      print({ success: secret !== null, ...(secret !== null ? { secret } : { error: 'this target has no secret' }) })
      return secret !== null ? 0 : 1
    }
    case 'deploy run': {
      const runs = await d.runOrder(int(v, 'order'))
      const ok = runs.every((r) => r.status === 'succeeded')
      print({ success: ok, runs: runs.map(runOut) })
      return ok ? 0 : 1
    }
    case 'deploy retry': {
      const runs = await d.runDue()
      await d.idle()
      const ok = runs.every((r) => r.status === 'succeeded')
      print({ success: ok, ran: runs.length, runs: runs.map(runOut) })
      return ok ? 0 : 1
    }
    case 'events list': {
      const type = v.type
      // The admin's log: every reseller's events and the admin's own alert events (docs/alerts.md).
      if (type !== undefined && !(ADMIN_LOG_TYPES as readonly string[]).includes(type))
        throw new UsageError(`--type must be one of ${ADMIN_LOG_TYPES.join(', ')}`)
      const limit = Math.min(optionalInt(v, 'limit') ?? 50, 100)
      const page = service.events.adminLog(
        null,
        { type: type as AdminEventFilter['type'], orderId: optionalInt(v, 'order') },
        { limit, offset: optionalInt(v, 'offset') ?? 0 }
      )
      print({ success: true, events: page.items.map(eventOut), pagination: paginationJson(page) })
      return 0
    }
    default:
      throw new UsageError(`unknown admin command: ${key || '(none)'}`)
  }
}

/** `--verify a:443,b:8443`: the servers a command target checks after its reload. */
const endpoints = (text: string | undefined): string[] | undefined =>
  text === undefined
    ? undefined
    : text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean)

// Deploy targets and their runs are the desktop user's configuration: the reseller API shows
// them to a reseller only as events that name a target by kind and number, so these shapes are
// the CLI's own.
const targetOut = (t: DeployTarget) => ({
  id: t.id,
  order_id: t.orderId,
  kind: t.kind,
  config: t.config,
  created_at: t.createdAt,
  removed_at: t.removedAt
})

const runOut = (r: DeployRun) => ({
  id: r.id,
  target_id: r.targetId,
  kind: r.kind,
  serial: r.serial,
  trigger: r.trigger,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.nextAttemptAt,
  last_error: r.lastError,
  history: r.history.map((h) => ({
    attempt: h.attempt,
    ok: h.ok,
    summary: h.summary,
    response_code: h.responseCode,
    output: h.output,
    started_at: h.startedAt,
    finished_at: h.finishedAt
  }))
})

/** GET /events's event, with the reseller it belongs to (the desktop user sees every reseller's). */
// An alert event has the shape of every other event; only its type is not one GET /events lists.
const eventOut = (e: AdminLogEvent) => ({ ...eventJson(e as CertEvent), reseller_id: e.resellerId })
