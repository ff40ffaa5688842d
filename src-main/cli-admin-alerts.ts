/**
 * `certdesk admin alerts …`: the alert rules, the channels alerts go to, a test message, and the
 * record of deliveries, printed as JSON like every admin command. A thin adapter over
 * src-main/core/alerts. Credentials never travel as arguments (`ps` and the shell history would
 * show them): the SMTP password and a Slack or Teams URL are read from the environment or from
 * the first line of stdin.
 */
import { commandKey, int, need, optionalInt, print, UsageError, type Values } from './cli-args'
import type { Channel, ChannelInput } from './core/alerts'
import type { Service } from './core/service'

export const ALERTS_USAGE = `  certdesk admin [--data-dir D] alerts rules
  certdesk admin [--data-dir D] alerts rule --rule RULE [--enable|--disable] [--hours N]
  certdesk admin [--data-dir D] alerts channels
  certdesk admin [--data-dir D] alerts add-email --name N --host H [--port P] [--security starttls|tls|none]
      [--user U] --from ADDRESS --to ADDRESS[,ADDRESS…] [--digest]   (password: CERTDESK_SMTP_PASSWORD or stdin)
  certdesk admin [--data-dir D] alerts add-slack|add-teams --name N    (URL: CERTDESK_ALERT_URL or stdin)
  certdesk admin [--data-dir D] alerts add-webhook --name N --url URL
  certdesk admin [--data-dir D] alerts remove|test|secret --channel ID
  certdesk admin [--data-dir D] alerts deliveries [--limit N] [--offset N]
  certdesk admin [--data-dir D] alerts list [--open] [--limit N] [--offset N]
  certdesk admin [--data-dir D] alerts run`

export const isAlertsCommand = (noun: string | undefined): boolean => noun === 'alerts'

/** The credential from `env`, else the first line of piped stdin. */
async function credential(env: string, what: string): Promise<string> {
  const fromEnv = process.env[env]
  if (fromEnv) return fromEnv
  if (process.stdin.isTTY) throw new UsageError(`give the ${what} in ${env} or as the first line of stdin`)
  let text = ''
  for await (const chunk of process.stdin) text += String(chunk)
  const line = text.split(/\r?\n/)[0] ?? ''
  if (!line) throw new UsageError(`no ${what}: set ${env} or pipe it on stdin`)
  return line
}

const channelOut = (c: Channel): Record<string, unknown> => ({
  id: c.id,
  kind: c.kind,
  name: c.name,
  enabled: c.enabled,
  digest: c.digest,
  ...c.config,
  created_at: c.createdAt
})

const page = (v: Values): { limit: number; offset: number } => ({
  limit: Math.min(optionalInt(v, 'limit') ?? 20, 100),
  offset: optionalInt(v, 'offset') ?? 0
})

export async function alertsAdmin(service: Service, words: string[], v: Values): Promise<number> {
  const alerts = service.alerts
  switch (commandKey(words)) {
    case 'alerts rules':
      print({ success: true, rules: await alerts.rules() })
      return 0
    case 'alerts rule': {
      if (v.enable && v.disable) throw new UsageError('give --enable or --disable, not both')
      const rule = await alerts.updateRule(need(v, 'rule'), {
        enabled: v.enable ? true : v.disable ? false : undefined,
        thresholdHours: optionalInt(v, 'hours')
      })
      print({ success: true, rule })
      return 0
    }
    case 'alerts channels':
      print({ success: true, channels: (await alerts.channels.list()).map(channelOut) })
      return 0
    case 'alerts add-email':
    case 'alerts add-slack':
    case 'alerts add-teams':
    case 'alerts add-webhook': {
      const kind = words[1].slice('add-'.length)
      let input: ChannelInput
      if (kind === 'email') {
        const username = v.user
        input = {
          kind: 'smtp',
          name: need(v, 'name'),
          host: need(v, 'host'),
          port: optionalInt(v, 'port'),
          security: v.security as 'starttls' | 'tls' | 'none' | undefined,
          username,
          password: username ? await credential('CERTDESK_SMTP_PASSWORD', 'SMTP password') : undefined,
          from: need(v, 'from'),
          to: need(v, 'to')
            .split(',')
            .map((a) => a.trim()),
          digest: Boolean(v.digest)
        }
      } else if (kind === 'webhook') {
        input = { kind: 'webhook', name: need(v, 'name'), url: need(v, 'url') }
      } else {
        if (v.url)
          throw new UsageError(`a ${kind} URL is a credential: give it in CERTDESK_ALERT_URL or on stdin, not --url`)
        input = {
          kind: kind as 'slack' | 'teams',
          name: need(v, 'name'),
          url: await credential('CERTDESK_ALERT_URL', `${kind} URL`)
        }
      }
      const created = await alerts.addChannel(input)
      print({
        success: true,
        channel: channelOut(created.channel),
        ...(created.signingSecret ? { signing_secret: created.signingSecret } : {})
      })
      return 0
    }
    case 'alerts remove':
      await alerts.removeChannel(int(v, 'channel'))
      print({ success: true })
      return 0
    case 'alerts test': {
      const delivery = await alerts.testChannel(int(v, 'channel'))
      print({ success: delivery.status === 'sent', delivery })
      return delivery.status === 'sent' ? 0 : 1
    }
    case 'alerts secret':
      print({ success: true, signing_secret: await alerts.channels.signingSecret(int(v, 'channel')) })
      return 0
    case 'alerts deliveries':
      print({ success: true, ...(await alerts.deliveries(page(v))) })
      return 0
    case 'alerts list':
      print({ success: true, ...(await alerts.list({ open: Boolean(v.open) }, page(v))) })
      return 0
    case 'alerts run':
      await alerts.tick()
      print({ success: true, deliveries: (await alerts.deliveries({ limit: 20, offset: 0 })).items })
      return 0
    default:
      throw new UsageError(`unknown command ${words.join(' ')}`)
  }
}
