/**
 * Alerts as the bridge carries them (src-main/core/alerts): the rules, the channels (never a
 * credential: the SMTP password, a Slack or Teams URL and a webhook's signing secret stay in the
 * keychain; only a new webhook's secret is answered, once), the alerts raised and their deliveries.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, OneOf, Stamp, NullableStamp } from './schema-kit'

export const ALERT_RULE_NAMES = [
  'expiring',
  'renewal_failed',
  'validation_waiting',
  'deploy_failed',
  'installation_problem',
  'renewal_needs_customer'
] as const
export const ALERT_CHANNEL_KINDS = ['smtp', 'slack', 'teams', 'webhook'] as const

export const AlertRuleView = Type.Object({
  rule: OneOf(ALERT_RULE_NAMES),
  label: Type.String(),
  enabled: Type.Boolean(),
  thresholdHours: Nullable(Type.Integer()),
  updatedAt: NullableStamp
})

export const AlertRuleChange = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ must: 'must be true or false' })),
    thresholdHours: Type.Optional(Type.Integer({ must: 'must be a whole number of hours' }))
  },
  { must: 'must be { enabled, thresholdHours }' }
)

const SmtpChannelInput = Type.Object({
  kind: Type.Literal('smtp'),
  name: Type.String({ must: 'must be text' }),
  host: Type.String({ must: 'must be text' }),
  port: Type.Optional(Type.Integer({ must: 'must be a whole number' })),
  security: Type.Optional(OneOf(['starttls', 'tls', 'none'] as const)),
  username: Type.Optional(Type.String({ must: 'must be text' })),
  password: Type.Optional(Type.String({ must: 'must be text' })),
  from: Type.String({ must: 'must be text' }),
  to: Type.Array(Type.String({ must: 'must be text' }), { maxItems: 20, must: 'must be at most 20 addresses' }),
  digest: Type.Optional(Type.Boolean({ must: 'must be true or false' }))
})
const UrlChannelInput = Type.Object({
  kind: OneOf(['slack', 'teams', 'webhook'] as const),
  name: Type.String({ must: 'must be text' }),
  url: Type.String({ must: 'must be text' })
})
export const AlertChannelInput = Type.Union([SmtpChannelInput, UrlChannelInput], {
  must: 'must be an email channel { kind: smtp, … } or a webhook channel { kind, name, url }'
})

export const AlertChannelView = Type.Object({
  id: Type.Integer(),
  kind: OneOf(ALERT_CHANNEL_KINDS),
  name: Type.String(),
  enabled: Type.Boolean(),
  digest: Type.Boolean(),
  /** Where messages go, as a person reads it (host, port, recipients; a Slack or Teams host only). */
  target: Type.String(),
  createdAt: Stamp
})

export const CreatedAlertChannel = Type.Object({
  channel: AlertChannelView,
  /** The generic webhook's signing secret, answered once; null for other kinds. */
  signingSecret: Nullable(Type.String())
})

export const AlertDeliveryView = Type.Object({
  id: Type.Integer(),
  channelId: Type.Integer(),
  channelName: Type.String(),
  channelKind: OneOf(ALERT_CHANNEL_KINDS),
  kind: OneOf(['alert', 'digest', 'test'] as const),
  alertId: Nullable(Type.Integer()),
  digestWeek: Nullable(Type.String()),
  subject: Type.String(),
  status: OneOf(['pending', 'sent', 'failed'] as const),
  attempts: Type.Integer(),
  nextAttemptAt: NullableStamp,
  lastError: Nullable(Type.String()),
  createdAt: Stamp,
  sentAt: NullableStamp
})

export const AlertView = Type.Object({
  id: Type.Integer(),
  rule: OneOf(ALERT_RULE_NAMES),
  orderId: Type.Integer(),
  orderNumber: Nullable(Type.String()),
  cause: Type.String(),
  subject: Type.String(),
  message: Type.String(),
  raisedAt: Stamp,
  clearedAt: NullableStamp
})

export type AlertRuleViewT = Static<typeof AlertRuleView>
export type AlertChannelViewT = Static<typeof AlertChannelView>
export type AlertDeliveryViewT = Static<typeof AlertDeliveryView>
export type AlertViewT = Static<typeof AlertView>
export type AlertChannelInputT = Static<typeof AlertChannelInput>
