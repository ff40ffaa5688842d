/**
 * Alert channels under attack and under failure, on loopback: hostile input is refused with
 * nothing saved, webhooks never reach private addresses unless the admin allows it (checked when
 * sending, not only when saving), a receiver that fails is retried on the back-off schedule and
 * then given up, and no secret ends up in a delivery record.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ATTEMPTS, type ChannelInput } from '../../src-main/core/alerts'
import { bounded, oneLine, slackPayload } from '../../src-main/core/alerts/messages'
import { ServiceError } from '../../src-main/core/errors'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { ALERT_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { isoTimestamp } from '../../src-main/core/time'
import { startJsonSink, startMailSink, type JsonSink, type MailSink } from '../support/alert-sinks'
import { manualClock } from '../support/clock'

const clock = manualClock('2027-02-01T09:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-alert-channels-'))
let service: Service
let sink: JsonSink
let mail: MailSink

beforeAll(async () => {
  ;[sink, mail] = await Promise.all([startJsonSink('/hooks/secret-token'), startMailSink('robot', 'right-password')])
  service = await openService({ dataDir, clock: clock.clock })
})
afterAll(async () => {
  await service?.close()
  await Promise.all([sink?.close(), mail?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

const allowPrivate = async (on: boolean): Promise<void> =>
  await service.settings.update({ [ALERT_SETTINGS.allowPrivateAddresses]: String(on) })
const smtp = (over: Partial<Extract<ChannelInput, { kind: 'smtp' }>> = {}): ChannelInput => ({
  kind: 'smtp',
  name: 'Ops',
  host: '127.0.0.1',
  port: mail.port,
  security: 'none',
  username: 'robot',
  password: 'right-password',
  from: 'certdesk@reseller.test',
  to: ['ops@reseller.test'],
  ...over
})
const refusal = async (input: unknown): Promise<string> => {
  try {
    await service.alerts.addChannel(input as ChannelInput)
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError)
    expect((err as ServiceError).kind).toBe('invalid')
    return (err as Error).message
  }
  throw new Error('the channel was accepted')
}
const keychainNames = async (): Promise<string[]> =>
  ((await service.ctx.secrets.list?.()) ?? []).map((s) => s.name).filter((n) => n.startsWith('alert_channel.'))

describe('a channel with hostile or wrong values', () => {
  it('is refused with the reason, and neither the store nor the keychain gets anything', async () => {
    await allowPrivate(false)
    const cases: [unknown, RegExp][] = [
      [smtp({ name: 'Ops\r\nBcc: thief@evil.test' }), /name must not hold line breaks/],
      [smtp({ to: ['ops@reseller.test\r\nBcc: thief@evil.test'] }), /to must not hold line breaks/],
      [smtp({ to: ['ops@reseller.test, thief@evil.test'] }), /to must be an email address/],
      [smtp({ from: '"Ops" <ops@reseller.test>; rm -rf /' }), /from must be an email address/],
      [smtp({ to: Array.from({ length: 21 }, (_, i) => `ops${i}@reseller.test`) }), /at most 20 addresses/],
      [
        smtp({ host: 'mail.reseller.test', security: 'none' }),
        /would send the password in clear to mail\.reseller\.test/
      ],
      [smtp({ host: '../../etc/passwd' }), /is not a host name or IP address/],
      [smtp({ port: 70000 }), /port must be from 1 to 65535/],
      [smtp({ security: 'ssl3' as never }), /security must be one of starttls, tls, none/],
      [smtp({ password: 'two\nlines' }), /password must be one line/],
      [smtp({ name: 'x'.repeat(81) }), /name is longer than 80 characters/],
      [{ kind: 'pager', name: 'x', url: 'https://pager.test/' }, /kind must be one of smtp, slack, teams, webhook/],
      [{ kind: 'slack', name: 'Slack', url: 'http://hooks.slack.test/services/x' }, /a slack url must be https:\/\//],
      [{ kind: 'webhook', name: 'Hook', url: 'https://user:pw@hooks.test/' }, /must not carry a user name or password/],
      [{ kind: 'webhook', name: 'Hook', url: 'file:///etc/passwd' }, /must be http:\/\/ or https:\/\//],
      [{ kind: 'webhook', name: 'Hook', url: sink.url }, /is refused: 127\.0\.0\.1 is a loopback address/],
      [{ kind: 'webhook', name: 'Hook', url: 'http://169.254.169.254/latest/meta-data' }, /link-local address/],
      [{ kind: 'teams', name: 'Teams', url: 'https://10.1.2.3/workflows/x' }, /private-use address/],
      [
        { kind: 'webhook', name: 'Hook', url: 'http://[::ffff:127.0.0.1]:8080/' },
        /IPv4-mapped address .* of 127\.0\.0\.1, a loopback address/
      ],
      [{ kind: 'webhook', name: 'Hook', url: 'http://localhost:9/' }, /loopback address/]
    ]
    for (const [input, reason] of cases) expect(await refusal(input)).toMatch(reason)
    expect(await service.alerts.channels.list()).toEqual([])
    expect(await keychainNames()).toEqual([])
  })

  it('does not echo a Slack or Teams URL that is not a URL (it may be a credential)', async () => {
    const message = await refusal({ kind: 'slack', name: 'Slack', url: 'hooks.slack.test/services/T0/B0/s3cr3t' })
    expect(message).not.toMatch(/s3cr3t/)
  })
})

describe('messages', () => {
  it('keep subjects on one bounded line, Slack control sequences escaped, bodies bounded', () => {
    expect(oneLine('Deploy failed\r\nBcc: thief@evil.test\0')).toBe('Deploy failed Bcc: thief@evil.test')
    expect(oneLine('x'.repeat(1000))).toHaveLength(160)
    expect(bounded('a\u0007b\r\nc', 100)).toBe('a b\nc')
    expect(bounded('y'.repeat(5000))).toHaveLength(2000)
    const slack = JSON.parse(
      slackPayload({
        event: 'alert.raised',
        delivery: 'd',
        subject: '<!channel> & co',
        body: '<https://evil.test|click>',
        data: {}
      })
    ) as { text: string }
    expect(slack.text).toBe('*&lt;!channel&gt; &amp; co*\n&lt;https://evil.test|click&gt;')
  })
})

describe('sending', () => {
  it('logs in to the SMTP server with the keychain password; a wrong one fails without showing it', async () => {
    await allowPrivate(true)
    const good = await service.alerts.addChannel(smtp({ name: 'Right' }))
    const bad = await service.alerts.addChannel(smtp({ name: 'Wrong', password: 'wrong-password-123' }))
    expect((await service.alerts.testChannel(good.channel.id)).status).toBe('sent')
    const failed = await service.alerts.testChannel(bad.channel.id)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 })
    expect(failed.lastError).toMatch(/could not send mail through 127\.0\.0\.1:\d+: Invalid login/)
    expect(failed.lastError).not.toMatch(/wrong-password/)
    expect(mail.messages).toHaveLength(1)
    expect(mail.messages[0]).toMatchObject({ user: 'robot', subject: '[CertDesk] CertDesk test alert' })
    expect(mail.refusedLogins).toBeGreaterThanOrEqual(1)
    expect(JSON.stringify(await service.alerts.channels.list())).not.toMatch(/right-password|wrong-password/)
    for (const c of [good, bad]) await service.alerts.removeChannel(c.channel.id)
    expect(await keychainNames()).toEqual([])
  })

  it('retries a failing receiver after 1, 5, 30, 120 and 360 minutes, then gives up', async () => {
    await allowPrivate(true)
    const { channel } = await service.alerts.addChannel({ kind: 'slack', name: 'Flaky', url: sink.url })
    sink.bodies.length = 0
    sink.answers = [500, 503]
    const start = clock.now().getTime()
    const first = await service.alerts.testChannel(channel.id)
    expect(first).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: '2027-02-01 09:01:00' })
    expect(first.lastError).toBe(
      'the receiver at 127.0.0.1:' + new URL(sink.url).port + ' answered 500; only 2xx counts as delivered'
    )
    // Not before its time, then once.
    clock.set(new Date(start + 30_000))
    await service.scheduler.retryDeploys()
    expect(sink.bodies).toHaveLength(1)
    clock.set(new Date(start + 60_000))
    await service.scheduler.retryDeploys()
    await service.scheduler.retryDeploys()
    expect(await service.alerts.delivery(first.id)).toMatchObject({ attempts: 2, nextAttemptAt: '2027-02-01 09:06:00' })
    clock.set(new Date(start + 6 * 60_000))
    await service.scheduler.retryDeploys()
    expect(await service.alerts.delivery(first.id)).toMatchObject({ status: 'sent', attempts: 3, lastError: null })
    expect(sink.bodies).toHaveLength(3)

    // A receiver that never accepts: six attempts in all, then nothing more.
    sink.answers = Array(10).fill(500)
    const down = await service.alerts.testChannel(channel.id)
    const waits = [1, 5, 30, 120, 360]
    for (const minutes of waits) {
      clock.set(new Date(clock.now().getTime() + minutes * 60_000))
      await service.scheduler.retryDeploys()
    }
    expect(await service.alerts.delivery(down.id)).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
      nextAttemptAt: null
    })
    clock.set(new Date(clock.now().getTime() + 7 * 86_400_000))
    await service.scheduler.retryDeploys()
    expect(sink.bodies).toHaveLength(3 + MAX_ATTEMPTS)
    await service.alerts.removeChannel(channel.id)
  })

  it('refuses at sending time a receiver that is now on a private address', async () => {
    await allowPrivate(true)
    const { channel } = await service.alerts.addChannel({ kind: 'webhook', name: 'Lab', url: sink.url })
    await allowPrivate(false)
    sink.bodies.length = 0
    const d = await service.alerts.testChannel(channel.id)
    expect(d.status).toBe('pending')
    expect(d.lastError).toMatch(/could not post to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a loopback address/)
    expect(sink.bodies).toHaveLength(0)
    await service.alerts.removeChannel(channel.id)
  })

  it('refuses at sending time a name that now resolves to a loopback address', async () => {
    await allowPrivate(true)
    const url = sink.url.replace('127.0.0.1', 'localhost')
    const { channel } = await service.alerts.addChannel({ kind: 'webhook', name: 'By name', url })
    await allowPrivate(false)
    sink.bodies.length = 0
    const d = await service.alerts.testChannel(channel.id)
    expect(d.lastError).toMatch(/could not post to localhost:\d+: (127\.0\.0\.1|::1) is .*loopback address/)
    expect(sink.bodies).toHaveLength(0)
    await service.alerts.removeChannel(channel.id)
  })

  it('gives up on a receiver that never answers after its time-out, and tries again later', async () => {
    await allowPrivate(true)
    const sockets = new Set<Socket>()
    const silent = createServer(() => undefined) // reads the request, never answers
    silent.on('connection', (c) => sockets.add(c))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const port = (silent.address() as AddressInfo).port
      const { channel } = await service.alerts.addChannel({
        kind: 'webhook',
        name: 'Silent',
        url: `http://127.0.0.1:${port}/`
      })
      const d = await service.alerts.testChannel(channel.id)
      expect(d).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: isoTimestamp(new Date(clock.now().getTime() + 60_000))
      })
      expect(d.lastError).toMatch(/could not post to 127\.0\.0\.1:\d+: no complete answer within 10 s/)
      await service.alerts.removeChannel(channel.id)
    } finally {
      for (const c of sockets) c.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    }
  }, 30_000)

  it('does not follow a redirect', async () => {
    await allowPrivate(true)
    const { channel } = await service.alerts.addChannel({ kind: 'teams', name: 'Moved', url: sink.url })
    sink.answers = [302]
    const d = await service.alerts.testChannel(channel.id)
    expect(d.lastError).toMatch(/answered 302; only 2xx counts as delivered/)
    await service.alerts.removeChannel(channel.id)
  })
})

describe('rules', () => {
  it('take a validation wait in whole hours and refuse anything else', async () => {
    expect((await service.alerts.updateRule('validation_waiting', { thresholdHours: 6 })).thresholdHours).toBe(6)
    await expect(service.alerts.updateRule('validation_waiting', { thresholdHours: 0 })).rejects.toThrow(
      /whole hours from 1 to 8760/
    )
    await expect(service.alerts.updateRule('validation_waiting', { thresholdHours: 1.5 })).rejects.toThrow(
      /whole hours/
    )
    await expect(service.alerts.updateRule('expiring', { thresholdHours: 5 })).rejects.toThrow(
      /only validation_waiting/
    )
    await expect(service.alerts.updateRule("expiring'; DROP TABLE alerts;--", { enabled: false })).rejects.toThrow(
      /is not one of/
    )
    expect((await service.alerts.updateRule('deploy_failed', { enabled: false })).enabled).toBe(false)
    expect((await service.alerts.rules()).map((r) => [r.rule, r.enabled, r.thresholdHours])).toEqual([
      ['expiring', true, null],
      ['renewal_failed', true, null],
      ['validation_waiting', true, 6],
      ['deploy_failed', false, null],
      ['installation_problem', true, null],
      ['renewal_needs_customer', true, null]
    ])
  })
})
