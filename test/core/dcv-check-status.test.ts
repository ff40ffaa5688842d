/**
 * A name's check status (core/dcv/dcv.ts `checkStatus`): a look that does not find the proof
 * leaves the name waiting (`pending`) with when it looked and what it found; it is not a
 * failure, since right after the CSR is submitted no owner has had a chance to publish
 * anything. Real checks over loopback: a DNS server and a web server.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkStatus, DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { manualClock } from '../support/clock'
import { x509Csr } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

const clock = manualClock('2026-11-21T10:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-check-status-'))
let service: Service
let web: WebServer
let dns: DnsServer
let resellerId: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  resellerId = (await service.resellers.create({ name: 'Waiting', email: 'ops@waiting.test', groupId: 1 })).id
  await service.ledger.topUp(resellerId, 100_000)
})
afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

const order = async (domain: string): Promise<number> =>
  (await service.orders.create(await service.resellers.get(resellerId), { productId: 2, domain, period: 12 })).order.id
const events = async (orderId: number, type: 'validation.failed' | 'validation.passed') =>
  (await service.events.list(resellerId, { orderId, type }, { limit: 50, offset: 0 })).items

describe('a name whose proof is not found yet', () => {
  it('waits after the CSR is submitted and on every look until the file is there, saying when it looked and what it found', async () => {
    const id = await order('wait.example.com')
    const conf = await service.certificates.configure(resellerId, {
      orderId: id,
      csr: await x509Csr(['wait.example.com', 'www.wait.example.com']),
      dcvMethod: 'http'
    })
    expect(conf.validation.map((v) => [v.status, v.checkedAt])).toEqual([
      ['pending', null],
      ['pending', null]
    ])

    // The page polls at once, before anyone could publish the file.
    clock.set('2026-11-21T10:00:05Z')
    const first = await service.certificates.status(resellerId, id)
    expect(first.order.status).toBe('validation_pending')
    for (const v of first.validation) {
      expect(v).toMatchObject({ status: 'pending', checkedAt: '2026-11-21 10:00:05', validatedAt: null })
      expect(v.detail).toMatch(/HTTP 404/)
    }

    // Something else at the file's URL (a catch-all page): still waiting, and it says what it found.
    const i = first.validation[0].instructions
    if (i.method !== 'http') throw new Error('expected http instructions')
    const path = new URL(i.url).pathname
    web.put('wait.example.com', path, '<html>welcome</html>')
    clock.set('2026-11-21T10:03:00Z')
    const other = await service.certificates.status(resellerId, id)
    expect(other.validation[0]).toMatchObject({ status: 'pending', checkedAt: '2026-11-21 10:03:00' })
    expect(other.validation[0].detail).toMatch(/does not hold the expected content/)
    // However often it is polled, a waiting name logs no failure.
    expect(await events(id, 'validation.failed')).toEqual([])

    // Published: that name passes, the other still waits; then both, and the certificate is issued.
    web.put('wait.example.com', path, i.fileContent)
    const half = await service.certificates.status(resellerId, id)
    expect(half.validation.map((v) => v.status)).toEqual(['valid', 'pending'])
    web.put('www.wait.example.com', path, i.fileContent)
    const done = await service.certificates.status(resellerId, id)
    expect(done.order.status).toBe('completed')
    expect(await events(id, 'validation.passed')).toHaveLength(2)
    expect(await events(id, 'validation.failed')).toEqual([])
  })

  it('waits for a DNS record that is missing or holds another value, and for a web server that refuses', async () => {
    const id = await order('dnswait.example.com')
    const conf = await service.certificates.configure(resellerId, {
      orderId: id,
      csr: await x509Csr(['dnswait.example.com']),
      dcvMethod: 'dns'
    })
    const i = conf.validation[0].instructions
    if (i.method !== 'dns') throw new Error('expected dns instructions')
    const missing = await service.certificates.status(resellerId, id)
    expect(missing.validation[0]).toMatchObject({
      status: 'pending',
      detail: expect.stringMatching(/no CNAME or TXT record/)
    })
    await dns.setCname(i.recordName, 'elsewhere.example.net')
    const wrong = await service.certificates.status(resellerId, id)
    expect(wrong.validation[0]).toMatchObject({
      status: 'pending',
      detail: expect.stringMatching(/holds elsewhere\.example\.net/)
    })
    await dns.clear(i.recordName)

    // Port 9 (discard) has no listener here: connection refused is "not there yet" as well.
    const refused = await order('refused.example.com')
    await service.settings.set(DCV_SETTINGS.httpPort, '9')
    try {
      await service.certificates.configure(resellerId, {
        orderId: refused,
        csr: await x509Csr(['refused.example.com']),
        dcvMethod: 'http'
      })
      const r = await service.certificates.status(resellerId, refused)
      expect(r.validation[0]).toMatchObject({ status: 'pending', detail: expect.stringMatching(/connection refused/) })
    } finally {
      await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    }
    expect(await events(id, 'validation.failed')).toEqual([])
  })

  it('fails only when the check says the name cannot pass with its instructions', () => {
    expect(checkStatus({ ok: true, detail: 'found' })).toBe('valid')
    expect(checkStatus({ ok: false, detail: 'HTTP 404' })).toBe('pending')
    expect(checkStatus({ ok: false, detail: 'challenge invalid', final: true })).toBe('failed')
  })
})
