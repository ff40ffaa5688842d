/**
 * Alerts end to end on loopback: a real store, real validation servers, an SMTP server that
 * requires a login, Slack- and Teams-style receivers and a receiver that checks the webhook
 * signature. Four kinds of trouble are made for real (a certificate near its end with no renewal
 * planned, a validation left waiting, a deploy that gave up, a server that cannot be reached);
 * two scheduler passes later every channel has exactly one message per alert, and the weekly
 * digest arrives once.
 */
import { readFileSync, rmSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { ALERT_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { INSTALLATION_SETTINGS } from '../../src-main/core/installations'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { startJsonSink, startMailSink, type JsonSink, type MailSink } from '../support/alert-sinks'
import { manualClock } from '../support/clock'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startReceiver, unreachableUrl, type Receiver } from '../support/webhook-receiver'
import { opensslCsr } from '../support/csr'

const PASSWORD = 'p4ss "word"; with ../ and ; 𝄞'
const clock = manualClock('2026-06-01T09:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-alerts-'))
let service: Service
let web: WebServer
let dns: DnsServer
let mail: MailSink
let slack: JsonSink
let teams: JsonSink
let hook: Receiver
let resellerId: number
let lastId: number
let waitingId: number

beforeAll(async () => {
  ;[web, dns, mail, slack, teams, hook] = await Promise.all([
    startWeb(),
    startDns(),
    startMailSink('alerts@reseller.test', PASSWORD),
    startJsonSink('/services/T0001/B0001/slacksecretpath'),
    startJsonSink('/workflows/teamssecretpath/triggers/manual/run'),
    startReceiver({ clock: clock.clock })
  ])
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  await service.settings.set(INSTALLATION_SETTINGS.timeoutSeconds, '1')
  await service.settings.update({ [ALERT_SETTINGS.allowPrivateAddresses]: 'true' })
  resellerId = (await service.resellers.create({ name: 'Alerts', email: 'ops@alerts.test', groupId: 1 })).id
  await service.ledger.topUp(resellerId, 100_000)
  const reseller = await service.resellers.get(resellerId)
  lastId = (await service.orders.create(reseller, { productId: 2, domain: 'last.example.com', period: 12 })).order.id
  const publish = await configureOverHttp(service, web, resellerId, lastId, 'last.example.com')
  publish()
  await service.certificates.status(resellerId, lastId)

  await service.alerts.addChannel({
    kind: 'smtp',
    name: 'Ops mail',
    host: '127.0.0.1',
    port: mail.port,
    security: 'none',
    username: 'alerts@reseller.test',
    password: PASSWORD,
    from: 'CertDesk <certdesk@reseller.test>',
    to: ['ops@reseller.test', 'oncall@reseller.test'],
    digest: true
  })
  await service.alerts.addChannel({ kind: 'slack', name: 'Slack #certs', url: slack.url })
  await service.alerts.addChannel({ kind: 'teams', name: 'Teams Ops', url: teams.url })
  const created = await service.alerts.addChannel({ kind: 'webhook', name: 'Ticketing', url: hook.url })
  hook.secret = created.signingSecret as string

  // The reissue of 2026-12-04 is the subscription's last certificate (it ends 2027-05-31, the
  // subscription 2027-06-01): no renewal follows it.
  clock.set('2026-12-04T00:00:00Z')
  expect((await service.scheduler.run()).issued).toHaveLength(1)
}, 60_000)

afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close(), mail?.close(), slack?.close(), teams?.close(), hook?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

const slackTexts = () => slack.bodies.map((b) => String(b.body.text))
const teamsTitles = () =>
  teams.bodies.map((b) => {
    const card = (b.body.attachments as { content: { body: { text: string }[] } }[])[0].content
    return card.body[0].text
  })

describe('alerts across two scheduler passes', () => {
  it('raises each kind of trouble once and every channel receives one message per alert', async () => {
    // A validation that never passes: its file is never published.
    clock.set('2027-03-20T08:00:00Z')
    const reseller = await service.resellers.get(resellerId)
    waitingId = (await service.orders.create(reseller, { productId: 2, domain: 'waiting.example.com', period: 12 }))
      .order.id
    await service.certificates.configure(resellerId, {
      orderId: waitingId,
      csr: opensslCsr(['waiting.example.com']),
      dcvMethod: 'http'
    })
    const first = await service.scheduler.run()
    expect(first.errors).toEqual([])
    // Nothing is due yet (a third of the last certificate's 178 days is left only from 2027-04-02):
    // the mail so far is the weekly digest, sent in the first pass of each week for the week before.
    expect(mail.messages.map((m) => m.subject)).toEqual([
      '[CertDesk] CertDesk weekly digest 2026-W48: 0 alerts, 0 open',
      '[CertDesk] CertDesk weekly digest 2027-W10: 0 alerts, 0 open'
    ])
    expect(slack.bodies).toHaveLength(0)
    const digestsBefore = mail.messages.length

    // A deploy to a receiver that is down, retried until it gives up.
    await service.deploys.addTarget(lastId, { kind: 'webhook', url: await unreachableUrl() })
    await service.deploys.runOrder(lastId)
    for (let i = 0; i < 6; i++) {
      clock.set(new Date(clock.now().getTime() + 13 * 3_600_000))
      await service.deploys.runDue()
    }
    const runs = (await service.deploys.runs(lastId, { limit: 1, offset: 0 })).items
    expect(runs[0]).toMatchObject({ status: 'failed', attempts: 6 })

    // A server that does not answer on the certificate's name.
    const check = await service.installations.check(resellerId, lastId)
    expect(check.verdict).not.toBe('ok')

    clock.set('2027-04-05T10:00:00Z')
    const pass1 = await service.scheduler.run()
    clock.set('2027-04-05T11:00:00Z')
    const pass2 = await service.scheduler.run()
    expect(pass1.errors).toEqual([])
    expect(pass2.errors).toEqual([])

    const subjects = [
      /^Certificate expiring in 56 days, no renewal planned: ORD-2026-\d{6} \(last\.example\.com\)$/,
      /^Validation waiting over 48 h: ORD-2027-\d{6} \(waiting\.example\.com\)$/,
      /^Deploy failed: ORD-2026-\d{6} \(last\.example\.com\)$/,
      /^Installation problem: ORD-2026-\d{6} \(last\.example\.com\)$/
    ]
    const open = await service.alerts.list({ open: true }, { limit: 50, offset: 0 })
    expect(open.total).toBe(4)
    expect(open.items.map((a) => a.rule).sort()).toEqual([
      'deploy_failed',
      'expiring',
      'installation_problem',
      'validation_waiting'
    ])

    // Mail: four messages, each to both recipients, after a login with the keychain's password.
    // 2027-04-05 is a Monday: its first pass also sends the digest of the week before.
    const alertMails = mail.messages.slice(digestsBefore).filter((m) => !/weekly digest/.test(m.subject))
    expect(mail.messages.slice(digestsBefore).map((m) => m.subject)).toContain(
      '[CertDesk] CertDesk weekly digest 2027-W13: 0 alerts, 4 open'
    )
    expect(alertMails).toHaveLength(4)
    expect(mail.refusedLogins).toBe(0)
    for (const m of alertMails) {
      expect(m.user).toBe('alerts@reseller.test')
      expect(m.from).toBe('certdesk@reseller.test')
      expect(m.to.sort()).toEqual(['oncall@reseller.test', 'ops@reseller.test'])
    }
    const mailSubjects = alertMails.map((m) => m.subject.replace(/^\[CertDesk\] /, ''))
    for (const re of subjects) expect(mailSubjects.filter((s) => re.test(s))).toHaveLength(1)

    // Slack and Teams: the same four, once each.
    expect(slack.bodies).toHaveLength(4)
    for (const re of subjects)
      expect(slackTexts().filter((t) => re.test(t.split('\n')[0].replace(/^\*|\*$/g, '')))).toHaveLength(1)
    expect(teams.bodies).toHaveLength(4)
    for (const re of subjects) expect(teamsTitles().filter((t) => re.test(t))).toHaveLength(1)

    // The generic webhook: four signed deliveries, each naming its alert.
    expect(hook.deliveries).toHaveLength(4)
    for (const d of hook.deliveries) {
      expect(d.signatureValid).toBe(true)
      expect(d.headers['x-certdesk-event']).toBe('alert.raised')
    }
    expect(hook.deliveries.map((d) => (d.body.alert as { rule: string }).rule).sort()).toEqual(
      open.items.map((a) => a.rule).sort()
    )
    expect(new Set(hook.deliveries.map((d) => d.headers['x-certdesk-delivery'])).size).toBe(4)

    // Recorded: 16 deliveries (and three digests), all sent on the first attempt.
    const deliveries = await service.alerts.deliveries({ limit: 50, offset: 0 })
    expect(deliveries.items.filter((d) => d.kind === 'alert')).toHaveLength(16)
    expect(deliveries.total).toBe(19)
    expect(deliveries.items.every((d) => d.status === 'sent' && d.attempts === 1)).toBe(true)
    const raised = await service.events.listAdmin('alert.raised', { limit: 50, offset: 0 })
    expect(raised.total).toBe(4)
    expect(raised.items.map((e) => e.orderId).sort()).toEqual([lastId, lastId, lastId, waitingId].sort())
    // Admin-only: the reseller's event log (GET /events) does not carry alerts.
    const resellerLog = await service.events.list(resellerId, {}, { limit: 100, offset: 0 })
    expect(resellerLog.items.some((e) => e.type.startsWith('alert.'))).toBe(false)
  }, 120_000)

  it('sends the weekly digest once, with the week it covers', async () => {
    clock.set('2027-04-12T06:00:00Z') // Monday of ISO week 2027-W15
    await service.scheduler.run()
    clock.set('2027-04-12T07:00:00Z')
    await service.scheduler.run()
    const digests = mail.messages.filter((m) => /weekly digest 2027-W14/.test(m.subject))
    expect(digests).toHaveLength(1)
    expect(digests[0].subject).toBe('[CertDesk] CertDesk weekly digest 2027-W14: 4 alerts, 4 open')
    expect(digests[0].text).toMatch(/CertDesk alerts of week 2027-W14 \(2027-04-05 to 2027-04-11, UTC\)/)
    expect(digests[0].text).toMatch(/Deploy failed: ORD-2026-\d{6}/)
    // The digest goes by email only.
    expect(slack.bodies).toHaveLength(4)
    expect(hook.deliveries).toHaveLength(4)
  })

  it('clears the validation alert once the order no longer waits, and says so in the event log', async () => {
    expect((await service.orders.get(resellerId, waitingId)).status).toBe('validation_pending')
    // The admin stops the validation: the order no longer waits on it.
    await service.certificates.cancelValidation(resellerId, waitingId)
    clock.set('2027-04-12T08:00:00Z')
    await service.scheduler.run()
    const open = (await service.alerts.list({ open: true }, { limit: 50, offset: 0 })).items.map((a) => a.rule)
    expect(open).not.toContain('validation_waiting')
    expect((await service.events.listAdmin('alert.cleared', { limit: 10, offset: 0 })).items[0].message).toMatch(
      /^Cleared: Validation waiting over 48 h/
    )
  })

  it('raises a failed issuance once, however many passes fail the same way', async () => {
    clock.set('2027-04-12T09:00:00Z')
    const reseller = await service.resellers.get(resellerId)
    const stuckId = (await service.orders.create(reseller, { productId: 2, domain: 'stuck.example.com', period: 12 }))
      .order.id
    await configureOverHttp(service, web, resellerId, stuckId, 'stuck.example.com').then((publish) => publish())
    const before = slack.bodies.length
    // A clock stepped back behind the newest certificate: the scheduler refuses to issue (BR §6.3.2).
    clock.set('2026-11-20T00:00:00Z')
    const a = await service.scheduler.run()
    clock.set('2026-11-20T01:00:00Z')
    const b = await service.scheduler.run()
    for (const r of [a, b])
      expect(r.errors).toEqual([
        expect.objectContaining({ order_id: stuckId, error: expect.stringMatching(/clock .* is behind/) })
      ])
    const failed = (await service.alerts.list({ open: true }, { limit: 50, offset: 0 })).items.filter(
      (x) => x.rule === 'renewal_failed'
    )
    expect(failed).toHaveLength(1)
    expect(failed[0].subject).toMatch(/^Issuance failed: ORD-2027-\d{6} \(stuck\.example\.com\)$/)
    expect(slack.bodies.length - before).toBe(1)
    expect(hook.deliveries.filter((d) => (d.body.alert as { rule: string }).rule === 'renewal_failed')).toHaveLength(1)

    // The clock set right, the certificate is issued and the alert is over.
    clock.set('2027-04-12T10:00:00Z')
    const c = await service.scheduler.run()
    expect(c.issued.map((i) => i.order_id)).toContain(stuckId)
    expect(
      (await service.alerts.list({ open: true }, { limit: 50, offset: 0 })).items.map((x) => x.rule)
    ).not.toContain('renewal_failed')
  })

  it('keeps the SMTP password and the Slack and Teams URLs out of the store', () => {
    const bytes = readFileSync(join(dataDir, 'certdesk.sqlite')).toString('latin1')
    const wal = (() => {
      try {
        return readFileSync(join(dataDir, 'certdesk.sqlite-wal')).toString('latin1')
      } catch {
        return ''
      }
    })()
    for (const secret of ['p4ss', 'slacksecretpath', 'teamssecretpath', hook.secret]) {
      expect(bytes.includes(secret)).toBe(false)
      expect(wal.includes(secret)).toBe(false)
    }
  })
})
