/**
 * The bridge methods behind the Alerts screen, called the way both transports call them
 * (`callHandler`): rules, channels with a test message to a real receiver on loopback, and the
 * deliveries. Wrong types and hostile values are a 400 with nothing changed; no answer ever
 * carries a credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { ALERT_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { API_VERSION } from '../../src-main/http/server'
import type { AppMethod } from '../../src-preload/contract'
import { startJsonSink, type JsonSink } from '../support/alert-sinks'
import { startServer, type TestServer } from '../support/server'

type Body = { success: boolean; result?: unknown; error?: string }
let s: TestServer
let app: AppHandlers
let sink: JsonSink

beforeAll(async () => {
  ;[s, sink] = await Promise.all([startServer(), startJsonSink('/services/T1/B1/bridgesecret')])
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
})
afterAll(async () => {
  await Promise.all([s.close(), sink.close()])
})

const call = async (method: AppMethod, ...args: unknown[]) => {
  const r = await callHandler(app, method, args)
  return { status: r.status, body: r.body as Body }
}

describe('alert rules over the bridge', () => {
  it('lists the six rules and changes one', async () => {
    const rules = await call('alertRules')
    expect((rules.body.result as { rule: string }[]).map((r) => r.rule)).toEqual([
      'expiring',
      'renewal_failed',
      'validation_waiting',
      'deploy_failed',
      'installation_problem',
      'renewal_needs_customer'
    ])
    const changed = await call('updateAlertRule', 'validation_waiting', { thresholdHours: 24 })
    expect(changed.body.result).toMatchObject({ rule: 'validation_waiting', enabled: true, thresholdHours: 24 })
  })

  it('refuses wrong types and unknown rules with a 400, and changes nothing', async () => {
    for (const args of [
      ['validation_waiting', { thresholdHours: '24; DROP TABLE alert_rules' }],
      ['validation_waiting', { thresholdHours: 100000 }],
      ["expiring' OR 1=1 --", { enabled: false }],
      ['expiring', { enabled: 'no' }]
    ]) {
      const r = await call('updateAlertRule', ...args)
      expect(r.status, JSON.stringify(args)).toBe(400)
      expect(r.body.success).toBe(false)
    }
    const rules = (await call('alertRules')).body.result as { rule: string; enabled: boolean; thresholdHours: number }[]
    expect(rules.every((r) => r.enabled)).toBe(true)
    expect(rules.find((r) => r.rule === 'validation_waiting')?.thresholdHours).toBe(24)
  })
})

describe('alert channels over the bridge', () => {
  it('adds a Slack channel, sends a test to it and shows the delivery, never the URL', async () => {
    const refused = await call('addAlertChannel', { kind: 'slack', name: 'Slack', url: sink.url })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatch(/a slack url must be https:\/\//)
    expect((await call('alertChannels')).body.result).toEqual([])

    await s.service.settings.update({ [ALERT_SETTINGS.allowPrivateAddresses]: 'true' })
    const added = await call('addAlertChannel', { kind: 'slack', name: 'Slack #certs', url: sink.url })
    expect(added.status).toBe(200)
    const channel = (added.body.result as { channel: { id: number; target: string }; signingSecret: null }).channel
    expect(channel.target).toMatch(/^127\.0\.0\.1:\d+ \(the URL is in the keychain\)$/)
    const test = await call('testAlertChannel', channel.id)
    expect(test.body.result).toMatchObject({ status: 'sent', attempts: 1, kind: 'test', channelName: 'Slack #certs' })
    expect(sink.bodies).toHaveLength(1)
    const deliveries = await call('alertDeliveries', { limit: 10 })
    expect(deliveries.body.result).toMatchObject({
      total: 1,
      items: [{ subject: 'CertDesk test alert', status: 'sent' }]
    })
    for (const m of ['alertChannels', 'alertDeliveries'] as const)
      expect(JSON.stringify((await call(m, { limit: 10 })).body)).not.toContain('bridgesecret')
  })

  it('answers a webhook signing secret once, and refuses bad input with a 400', async () => {
    const added = await call('addAlertChannel', { kind: 'webhook', name: 'Tickets', url: sink.url })
    expect((added.body.result as { signingSecret: string }).signingSecret).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify((await call('alertChannels')).body)).not.toContain(
      (added.body.result as { signingSecret: string }).signingSecret
    )
    for (const input of [
      { kind: 'smtp', name: 'Mail', host: 'relay.test', from: 'a@b.test', to: 'ops@b.test' },
      { kind: 'smtp', name: 'Mail', host: 'relay.test', from: 'a@b.test', to: Array(21).fill('ops@b.test') },
      { kind: 'pager', name: 'x', url: 'https://x.test' },
      { kind: 'webhook', name: 'x' }
    ]) {
      const r = await call('addAlertChannel', input)
      expect(r.status, JSON.stringify(input)).toBe(400)
    }
    expect(((await call('alertChannels')).body.result as unknown[]).length).toBe(2)
    expect((await call('removeAlertChannel', 999)).status).toBe(404)
    expect((await call('removeAlertChannel', -1)).status).toBe(400)
  })
})
