/**
 * A reseller's script that reissues an order again and again: each accepted reissue signs a
 * certificate and would run every deploy target of the order (the admin's reload command, the
 * webhook). A burst of reissues gets one deploy run per target, of the last certificate; past a
 * few reissues per order and hour or day the API answers 429 with Retry-After and changes
 * nothing. Real HTTP on loopback, real SQLite, real command and webhook receiver.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { REISSUES_PER_DAY, REISSUES_PER_HOUR } from '../../src-main/core/certificates/reissue-limits'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'
import { startReceiver, type Receiver } from '../support/webhook-receiver'

type Body = Record<string, unknown>
const clock = manualClock('2026-11-21T10:00:00Z')
const work = mkdtempSync(join(tmpdir(), 'certdesk-reissue-limits-'))
let s: TestServer
let dns: DnsServer
let web: WebServer
let receiver: Receiver
let r: TestReseller

beforeAll(async () => {
  ;[s, dns, web, receiver] = await Promise.all([
    startServer({ clock: clock.clock }),
    startDns(),
    startWeb(),
    startReceiver({ clock: clock.clock })
  ])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  r = await s.reseller({ credit: 1000 })
})
afterAll(async () => {
  await s.service.deploys.idle()
  await Promise.all([s.close(), dns.close(), web.close(), receiver.close()])
  rmSync(work, { recursive: true, force: true })
})

const post = async (path: string, body: unknown, key = r.key) => await s.request<Body>('POST', path, { key, body })

/** An order issued over http validation on loopback; returns its id. */
async function issuedOrder(domain: string): Promise<number> {
  const created = await post('/orders', { product_id: 2, domain })
  expect(created.status).toBe(200)
  const id = created.body.order_id as number
  const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: 'http' })
  expect(conf.status, JSON.stringify(conf.body)).toBe(200)
  for (const v of conf.body.validation as { instructions: { url: string; file_content: string } }[]) {
    web.put(domain, new URL(v.instructions.url).pathname, `${v.instructions.file_content}\n`)
  }
  expect((await s.request<Body>('GET', `/ssl/${id}`, { key: r.key })).body.status).toBe('completed')
  return id
}

const certificateCount = async (id: number): Promise<number> => (await s.service.certificates.history(r.id, id)).length
const reissue = async (id: number, csr?: string) =>
  await post('/ssl/reissue', csr ? { order_id: id, csr } : { order_id: id })

describe('a burst of reissues', () => {
  it('runs the command and the webhook once, for the last certificate, and then answers 429 with Retry-After', async () => {
    const domain = 'burst.example.test'
    const id = await issuedOrder(domain)
    const folder = join(work, 'nginx')
    const reloads = join(work, 'reloads.log')
    const d = s.service.deploys
    // The script keeps its keys on the server, in the file the folder target names.
    const keyFile = join(work, 'burst.key')
    await d.addTarget(id, { kind: 'folder', path: folder, layout: 'nginx', keyFile })
    await d.addTarget(id, { kind: 'command', command: `echo "$CERTDESK_SERIAL" >> '${reloads}'`, timeoutSeconds: 20 })
    receiver.secret = (await d.addTarget(id, { kind: 'webhook', url: receiver.url })).secret?.value as string

    // The script's burst: three reissues with new keys, one right after the other.
    for (let i = 0; i < REISSUES_PER_HOUR; i++) {
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' })
      writeFileSync(keyFile, key)
      const res = await reissue(id, opensslCsrForKey([domain], key as string))
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.status).toBe('completed')
    }
    await d.idle()
    const latest = (await s.service.certificates.history(r.id, id))[0]
    expect(latest.reason).toBe('reissue')

    // One reload and one webhook delivery, both of the last certificate.
    const lines = readFileSync(reloads, 'utf8').trim().split('\n')
    expect(lines).toHaveLength(1)
    const mine = receiver.deliveries.filter((x) => x.body.order_id === id)
    expect(mine).toHaveLength(1)
    expect(mine[0].signatureValid).toBe(true)
    expect(mine[0].body).toMatchObject({ type: 'certificate.reissued', certificate_pem: latest.certificatePem })
    expect(lines[0]).toBe(mine[0].body.serial)
    expect(readFileSync(join(folder, 'cert.pem'), 'utf8')).toBe(latest.certificatePem)
    const runs = (await d.runs(id, { limit: 50, offset: 0 })).items
    expect(runs.map((x) => [x.kind, x.status, x.attempts, x.serial]).sort()).toEqual(
      [
        ['command', 'succeeded', 1, lines[0]],
        ['folder', 'succeeded', 1, lines[0]],
        ['webhook', 'succeeded', 1, lines[0]]
      ].sort()
    )
    // Every reissue is still in the event log.
    const events = await s.request<{ events: Body[] }>('GET', `/events?type=certificate.reissued&order_id=${id}`, {
      key: r.key
    })
    expect(events.body.events).toHaveLength(REISSUES_PER_HOUR)

    // The fourth within the hour: 429 in the spec's envelope, Retry-After, nothing changed.
    const before = await certificateCount(id)
    const refused = await reissue(id, opensslCsr([domain], 'ec:P-256'))
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('3600')
    expect(refused.body).toEqual({
      success: false,
      error: expect.stringMatching(/^could not reissue order ORD-\d{4}-\d+: it was reissued 3 times within an hour/)
    })
    await d.idle()
    expect(await certificateCount(id)).toBe(before)
    expect((await d.runs(id, { limit: 50, offset: 0 })).total).toBe(3)
    expect(readFileSync(reloads, 'utf8').trim().split('\n')).toHaveLength(1)

    // A second before the hour is over it still waits; at the hour it goes through.
    clock.set(new Date(clock.now().getTime() + 3599_000))
    const early = await reissue(id)
    expect(early.status).toBe(429)
    expect(early.headers.get('retry-after')).toBe('1')
    clock.set(new Date(clock.now().getTime() + 1000))
    expect((await reissue(id)).status).toBe(200)
    await d.idle()
    expect(readFileSync(reloads, 'utf8').trim().split('\n')).toHaveLength(2)
  })
})

describe('the daily cap', () => {
  it('allows ten reissues in 24 hours, refused requests do not count, and other resellers get 404', async () => {
    clock.set('2026-12-01T08:00:00Z')
    const domain = 'daily.example.test'
    const id = await issuedOrder(domain)
    const start = clock.now().getTime()
    const at = (hours: number) => clock.set(new Date(start + hours * 3_600_000))

    // A CSR for another domain is refused with 400 and does not use up the allowance.
    const wrong = await reissue(id, opensslCsr(['other.example.test'], 'ec:P-256'))
    expect(wrong.status).toBe(400)
    let done = 0
    for (let hour = 0; done < REISSUES_PER_DAY; hour++) {
      at(hour)
      for (let i = 0; i < REISSUES_PER_HOUR && done < REISSUES_PER_DAY; i++, done++) {
        const res = await reissue(id)
        expect(res.status, `reissue ${done + 1}: ${JSON.stringify(res.body)}`).toBe(200)
      }
    }
    // Hour 3 took the tenth; the hourly window has room but the day has not.
    const before = await certificateCount(id)
    const refused = await reissue(id)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatch(
      /reissued 10 times within 24 hours, the most allowed; try again in 75600 seconds/
    )
    expect(refused.headers.get('retry-after')).toBe(String(21 * 3600))
    expect(await certificateCount(id)).toBe(before)

    // Another reseller's script learns nothing about the order: 404, never 429.
    const other = await s.reseller({ credit: 10 })
    const foreign = await post('/ssl/reissue', { order_id: id }, other.key)
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ success: false, error: expect.stringMatching(/not found/) })
    // Oversized input is refused before any counting: a CSR field over 64 KiB, a body over 1 MiB.
    expect((await post('/ssl/reissue', { order_id: id, csr: 'A'.repeat(70_000) })).status).toBe(400)
    expect((await post('/ssl/reissue', { order_id: id, csr: 'A'.repeat(2 * 1024 * 1024) })).status).toBe(413)

    // 24 hours after the first three, they no longer count.
    at(24)
    expect((await reissue(id)).status).toBe(200)
  })
})
