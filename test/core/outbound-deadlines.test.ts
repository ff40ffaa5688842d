/**
 * Every connection CertDesk opens to someone else's server ends by a total deadline, whatever
 * the peer does: a web server that sends one byte every two seconds (in its headers or its body),
 * one that reads the request and never answers, one that sends an endless body, and an SMTP relay
 * that trickles its EHLO reply. An idle time-out alone never ends these exchanges; each check
 * below fails with a clear reason (or, for an endless body, reads only what it keeps) and leaves
 * no socket open, while a good peer beside them passes.
 *
 * The bounds asserted are generous upper limits (the machine is shared and slow), never speed.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { ChallengeFailure, checkHttp01 } from '../../src-main/core/dcv/acme-challenges'
import { postJson } from '../../src-main/core/alerts/transport'
import { checkHttp, DCV_SETTINGS, dcvFileContent, dcvFilePath, type DcvNetwork } from '../../src-main/core/dcv/dcv'
import { OUTPUT_LIMIT } from '../../src-main/core/deploy/command'
import { deliverWebhook } from '../../src-main/core/deploy/webhook'
import { probe } from '../../src-main/core/installations/probe'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { ALERT_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { manualClock } from '../support/clock'
import { opensslCsr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import {
  startSlowSmtp,
  startSlowWeb,
  startTricklingGreeting,
  until,
  within,
  type Behaviour,
  type SlowWeb
} from '../support/slow-peers'

/** Far above every deadline CertDesk sets (the longest, SMTP's, is 30 s): a hung exchange fails it. */
const BOUND_MS = 90_000
/** Room for the bound itself to fire and be reported. */
const TEST_MS = BOUND_MS + 30_000

const token = { md5: 'A'.repeat(32), sha256: 'B'.repeat(64), unique: 'slowpeers1' }
let dns: DnsServer
let web: SlowWeb
let tlsWeb: SlowWeb
let net: DcvNetwork
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-outbound-'))
let service: Service

beforeAll(async () => {
  ;[dns, web, tlsWeb] = await Promise.all([startDns(), startSlowWeb(), startSlowWeb({ tls: true })])
  net = { resolver: dns.address, httpPort: web.port, httpsPort: tlsWeb.port, allowPrivateAddresses: true }
  for (const w of [web, tlsWeb]) {
    w.behave('good.example', 'good')
    w.put('good.example', dcvFilePath(token), dcvFileContent(token))
    for (const b of ['trickle-head', 'trickle-body', 'silent', 'flood'] as Behaviour[]) w.behave(`${b}.example`, b)
  }
  service = await openService({ dataDir, clock: manualClock('2026-11-21T09:00:00Z').clock })
})
afterAll(async () => {
  await service?.close()
  await Promise.all([dns?.close(), web?.close(), tlsWeb?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

/** Runs `work`, failing the test if it has not settled within BOUND_MS; answers what it gave. */
const bounded = <T>(work: () => Promise<T>): Promise<T> => within(work(), BOUND_MS, 'the exchange')

describe.concurrent('domain validation fetches (BR §3.2.2.4.18) against slow web servers', { timeout: TEST_MS }, () => {
  for (const scheme of ['http', 'https'] as const) {
    it(`${scheme}: a trickled answer or none fails with the reason; the good server beside them passes`, async ({
      expect
    }) => {
      const hosts = ['good.example', 'trickle-head.example', 'trickle-body.example', 'silent.example']
      const results = await bounded(() => Promise.all(hosts.map((h) => checkHttp(scheme, h, token, net))))
      expect(results[0]).toMatchObject({ ok: true })
      for (const [i, host] of hosts.entries()) {
        if (i === 0) continue
        expect(results[i].ok, host).toBe(false)
        expect(results[i].detail).toMatch(
          new RegExp(
            `^could not fetch ${scheme}://${host.replace(/\./g, '\\.')}/\\.well-known/pki-validation/A{32}\\.txt: no complete answer within \\d+ s$`
          )
        )
      }
      // Nothing is left open at the peers.
      const w = scheme === 'http' ? web : tlsWeb
      await until(() => hosts.every((h) => w.stats(h).open === 0), 10_000, 'the connections to close')
    })
  }

  it('http: an endless body is cut at the size a validation file may have', async ({ expect }) => {
    const r = await bounded(() => checkHttp('http', 'flood.example', token, net))
    expect(r.ok).toBe(false)
    expect(r.detail).toMatch(/could not fetch http:\/\/flood\.example\/.*: the file is larger than 64 KiB$/)
  })
})

describe.concurrent('ACME http-01 checks (RFC 8555 §8.3) against slow web servers', { timeout: TEST_MS }, () => {
  for (const host of ['trickle-head.example', 'trickle-body.example'])
    it(`${host}: fails as a connection problem that names the deadline`, async ({ expect }) => {
      const err = await bounded(() =>
        checkHttp01(host, 'tok', 'tok.thumb', {
          resolver: dns.address,
          http01Port: web.port,
          allowPrivateAddresses: true,
          timeoutMs: 10_000
        }).then(
          () => null,
          (e: unknown) => e
        )
      )
      expect(err).toBeInstanceOf(ChallengeFailure)
      expect((err as ChallengeFailure).type).toBe('connection')
      expect((err as Error).message).toMatch(
        new RegExp(`could not connect to ${host.replace(/\./g, '\\.')} .*: no complete answer within 10 s`)
      )
    })
})

describe.concurrent('webhook and chat deliveries against slow receivers', { timeout: TEST_MS }, () => {
  /** A receiver of its own: webhook URLs name an address, so one behaviour per server. */
  async function receiver(b: Behaviour): Promise<SlowWeb> {
    const w = await startSlowWeb()
    w.behave('127.0.0.1', b)
    return w
  }

  it('an alert webhook that trickles its answer fails with the deadline as the reason', async ({ expect }) => {
    const w = await receiver('trickle-head')
    try {
      const err = await bounded(() =>
        postJson(`http://127.0.0.1:${w.port}/hook`, {}, '{}', true).then(
          () => null,
          (e: unknown) => e
        )
      )
      expect((err as Error).message).toMatch(/^could not post to 127\.0\.0\.1:\d+: no complete answer within 10 s$/)
      await until(() => w.total.open === 0, 10_000, 'the connection to close')
    } finally {
      await w.close()
    }
  })

  it('an alert webhook that answers 200 with an endless body is delivered, its answer cut short', async ({
    expect
  }) => {
    const w = await receiver('flood')
    try {
      const res = await bounded(() => postJson(`http://127.0.0.1:${w.port}/hook`, {}, '{}', true))
      expect(res.status).toBe(200)
      expect(res.answer.length).toBeLessThanOrEqual(2048)
      await until(() => w.total.open === 0, 10_000, 'the connection to close')
    } finally {
      await w.close()
    }
  })

  it('a deploy webhook that trickles its body fails with the deadline as the reason', async ({ expect }) => {
    const w = await receiver('trickle-body')
    try {
      const url = `http://127.0.0.1:${w.port}/deploy`
      const r = await bounded(() =>
        deliverWebhook({ url }, 'secret', { type: 'certificate.deployed', delivery: 'd1' }, 1)
      )
      expect(r.ok).toBe(false)
      expect(r.summary).toBe(`could not deliver webhook to ${url}: no complete answer within 10 s`)
      expect(r.reason).toBe('the receiver did not answer completely within 10 s')
      await until(() => w.total.open === 0, 10_000, 'the connection to close')
    } finally {
      await w.close()
    }
  })

  it('a deploy webhook that answers 200 with an endless body is delivered, its answer cut short', async ({
    expect
  }) => {
    const w = await receiver('flood')
    try {
      const r = await bounded(() =>
        deliverWebhook({ url: `http://127.0.0.1:${w.port}/deploy` }, 'secret', { type: 'x', delivery: 'd2' }, 1)
      )
      expect(r).toMatchObject({ ok: true, status: 200 })
      expect(r.response.length).toBeLessThanOrEqual(OUTPUT_LIMIT)
      await until(() => w.total.open === 0, 10_000, 'the connection to close')
    } finally {
      await w.close()
    }
  })

  it('a Slack channel whose server trickles fails the delivery, to be retried, with the reason', async ({ expect }) => {
    const w = await receiver('trickle-body')
    try {
      await service.settings.update({ [ALERT_SETTINGS.allowPrivateAddresses]: 'true' })
      const { channel } = await service.alerts.addChannel({
        kind: 'slack',
        name: 'Slow Slack',
        url: `http://127.0.0.1:${w.port}/services/T0/B0/secret`
      })
      const d = await bounded(async () => await service.alerts.testChannel(channel.id))
      expect(d.status).toBe('pending')
      expect(d.lastError).toMatch(/could not post to 127\.0\.0\.1:\d+: no complete answer within 10 s/)
      // The path of a Slack URL is its credential: never in the reason.
      expect(d.lastError).not.toMatch(/secret/)
    } finally {
      await w.close()
    }
  })
})

describe.concurrent('SMTP against a relay that trickles its replies', { timeout: TEST_MS }, () => {
  it('approval mail (BR §3.2.2.4.4): configure answers, and the name says why no mail went', async ({ expect }) => {
    const smtp = await startSlowSmtp()
    try {
      await service.settings.set(DCV_SETTINGS.smtpUrl, smtp.url)
      const r = await service.resellers.create({ name: 'Slow Mail', email: 'slowmail@example.test', groupId: 1 })
      await service.ledger.topUp(r.id, 100_000)
      const orderId = (
        await service.orders.create(await service.resellers.get(r.id), {
          productId: 2,
          domain: 'mail.example.com',
          period: 12
        })
      ).order.id
      const status = await bounded(() =>
        service.certificates.configure(r.id, {
          orderId,
          csr: opensslCsr(['mail.example.com']),
          dcvMethod: 'email',
          approverEmail: 'admin@mail.example.com'
        })
      )
      expect(status.order.status).toBe('validation_pending')
      expect(status.validation[0].detail).toMatch(
        /^could not send the approval email to admin@mail\.example\.com: no complete answer within 30 s$/
      )
      await until(() => smtp.stats.open === 0, 10_000, 'the connection to close')
    } finally {
      await service.settings.set(DCV_SETTINGS.smtpUrl, '')
      await smtp.close()
    }
  })

  it('an alert mail channel fails the delivery, to be retried, with the reason', async ({ expect }) => {
    const smtp = await startSlowSmtp()
    try {
      const { channel } = await service.alerts.addChannel({
        kind: 'smtp',
        name: 'Slow relay',
        host: '127.0.0.1',
        port: smtp.port,
        security: 'none',
        from: 'certdesk@reseller.test',
        to: ['ops@reseller.test']
      })
      const d = await bounded(async () => await service.alerts.testChannel(channel.id))
      expect(d.status).toBe('pending')
      expect(d.lastError).toMatch(/^could not send mail through 127\.0\.0\.1:\d+: no complete answer within 30 s$/)
      await until(() => smtp.stats.open === 0, 10_000, 'the connection to close')
    } finally {
      await smtp.close()
    }
  })
})

describe('installation probes against a mail server that trickles its greeting', { timeout: TEST_MS }, () => {
  it('end at their time-out with the reason and close the socket', async ({ expect }) => {
    const mail = await startTricklingGreeting()
    try {
      const r = await bounded(() =>
        probe({ host: 'mail.example.com', address: '127.0.0.1', port: mail.port, starttls: 'smtp' }, 3000)
      )
      expect(r).toEqual({ reachable: false, reason: 'no answer within 3 s' })
      await until(() => mail.stats.open === 0, 10_000, 'the connection to close')
    } finally {
      await mail.close()
    }
  })
})
