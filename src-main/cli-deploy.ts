/**
 * `certdesk admin deploy …` and `certdesk admin events list`: deploy targets per order, a
 * manual re-run, the due-retry pass, and the event log, printed as JSON like every admin
 * command. A thin adapter: the rules live in src-main/core/deploy.
 */
import type { DeployRun, DeployTarget, TargetInput } from './core/deploy/deploys'
import type { FolderLayout } from './core/deploy/folder'
import { EVENT_TYPES, type CertEvent, type EventType } from './core/events'
import type { Service } from './core/service'

export const DEPLOY_USAGE = `  certdesk admin [--data-dir D] deploy add --order ID --folder PATH [--layout nginx|apache|haproxy|iis] [--pfx]
  certdesk admin [--data-dir D] deploy add --order ID --command CMD [--timeout SECONDS] [--cwd DIR]
  certdesk admin [--data-dir D] deploy add --order ID --webhook URL
  certdesk admin [--data-dir D] deploy list --order ID
  certdesk admin [--data-dir D] deploy remove --target ID
  certdesk admin [--data-dir D] deploy secret --target ID
  certdesk admin [--data-dir D] deploy run --order ID
  certdesk admin [--data-dir D] deploy retry [--as-of YYYY-MM-DD[ HH:MM:SS]]
  certdesk admin [--data-dir D] events list [--order ID] [--type T] [--limit N] [--offset N]`

type Values = Record<string, string | boolean | undefined>

export const isDeployCommand = (noun: string | undefined): boolean => noun === 'deploy' || noun === 'events'

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** Returns the exit code: 1 when a deploy attempt failed, so scripts notice. */
export async function deployAdmin(
  service: Service,
  words: string[],
  v: Values,
  usage: (m: string) => Error
): Promise<number> {
  const str = (name: string): string => {
    const value = v[name]
    if (typeof value !== 'string' || value === '') throw usage(`--${name} is required`)
    return value
  }
  const int = (name: string): number => {
    const s = str(name)
    if (!/^\d+$/.test(s)) throw usage(`--${name} must be a whole number`)
    return Number(s)
  }
  const optInt = (name: string): number | undefined => (v[name] === undefined ? undefined : int(name))
  const d = service.deploys
  const key = words.slice(0, 2).join(' ')
  switch (key) {
    case 'deploy add': {
      const kinds = ['folder', 'command', 'webhook'].filter((k) => v[k] !== undefined)
      if (kinds.length !== 1) throw usage('give exactly one of --folder, --command or --webhook')
      let input: TargetInput
      if (kinds[0] === 'folder')
        input = {
          kind: 'folder',
          path: str('folder'),
          layout: (v.layout as FolderLayout | undefined) ?? 'nginx',
          pfx: Boolean(v.pfx)
        }
      else if (kinds[0] === 'command')
        input = {
          kind: 'command',
          command: str('command'),
          timeoutSeconds: optInt('timeout'),
          cwd: v.cwd as string | undefined
        }
      else input = { kind: 'webhook', url: str('webhook') }
      const created = d.addTarget(int('order'), input)
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
    case 'deploy list': {
      const orderId = int('order')
      const runs = d.runs(orderId, { limit: 20, offset: 0 })
      print({ success: true, targets: d.targets(orderId).map(targetOut), recent_runs: runs.items.map(runOut) })
      return 0
    }
    case 'deploy remove':
      print({ success: true, target: targetOut(d.removeTarget(int('target'))) })
      return 0
    case 'deploy secret': {
      const secret = d.revealSecret(int('target'))
      print({ success: secret !== null, ...(secret !== null ? { secret } : { error: 'this target has no secret' }) })
      return secret !== null ? 0 : 1
    }
    case 'deploy run': {
      const runs = await d.runOrder(int('order'))
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
      const type = v.type as string | undefined
      if (type !== undefined && !(EVENT_TYPES as readonly string[]).includes(type))
        throw usage(`--type must be one of ${EVENT_TYPES.join(', ')}`)
      const limit = Math.min(optInt('limit') ?? 50, 100)
      const page = service.events.list(
        null,
        { type: type as EventType | undefined, orderId: optInt('order') },
        { limit, offset: optInt('offset') ?? 0 }
      )
      print({
        success: true,
        events: page.items.map(eventOut),
        pagination: { total: page.total, limit: page.limit, offset: page.offset }
      })
      return 0
    }
    default:
      throw usage(`unknown admin command: ${key}`)
  }
}

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

const eventOut = (e: CertEvent) => ({
  id: e.id,
  type: e.type,
  reseller_id: e.resellerId,
  order_id: e.orderId,
  order_number: e.orderNumber,
  message: e.message,
  data: e.data,
  created_at: e.createdAt
})
