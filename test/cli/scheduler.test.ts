import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxValidityDays } from '../../src-main/core/certificates/cab-policy'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { LocalCa } from '../../src-main/core/certificates/local-ca'
import { type Service } from '../../src-main/core/service'
import { engineEnv, openService } from '../support/engine'
import { DAY_MS, parseDate } from '../../src-main/core/time'
import { CLI } from '../support/cli'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslVerify } from '../support/csr'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'

/**
 * The multi-year walk: a 3-year order driven through the years by
 * `certdesk admin scheduler run --as-of`, with the domain's web server really answering.
 * The CLI runs as a child process (async, so this process keeps serving the DCV file).
 */
const clock = manualClock('2026-06-01T09:00:00Z')
let dataDir: string
let service: Service
let web: WebServer
let dns: DnsServer
let tlsOrder: number
let codeOrder: number

function scheduler(asOf: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'admin', '--data-dir', dataDir, 'scheduler', 'run', '--as-of', asOf], {
      env: engineEnv(dataDir)
    })
    let out = ''
    let err = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code !== 0) reject(new Error(`scheduler run --as-of ${asOf} exited ${code}: ${err}`))
      else resolve(JSON.parse(out) as Record<string, unknown>)
    })
  })
}

interface OrderRow {
  status: string
  status_note: string | null
  next_reissue_at: string | null
  reissue_count: number
  cert_valid_from: string | null
  cert_valid_till: string | null
  purchase_end_date: string
}
const orderRow = async (id: number): Promise<OrderRow> =>
  (await service.ctx.store.get('SELECT * FROM orders WHERE id = ?', id)) as OrderRow
const certs = async (id: number) =>
  (await service.ctx.store.all(
    'SELECT valid_from, valid_till, certificate_pem, chain_pem, reason FROM certificates WHERE order_id = ? ORDER BY id',
    id
  )) as {
    valid_from: string
    valid_till: string
    certificate_pem: string
    chain_pem: string
    reason: string
  }[]

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-walk-'))
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const reseller = await service.resellers.create({ name: 'Walk', email: 'walk@example.test', groupId: 1 })
  await service.ledger.topUp(reseller.id, 100_000)
  const r = await service.resellers.get(reseller.id)
  tlsOrder = (await service.orders.create(r, { productId: 2, domain: 'walk.example.com', period: 36 })).order.id
  ;(await configureOverHttp(service, web, r.id, tlsOrder, 'walk.example.com'))()
  expect((await service.certificates.status(r.id, tlsOrder)).order.status).toBe('completed')
  codeOrder = (await service.orders.create(r, { productId: 10, period: 12 })).order.id
  await service.certificates.configure(r.id, {
    orderId: codeOrder,
    csr: opensslCsr([], 'rsa:3072', '/C=US/O=Walk Ltd/CN=Walk Ltd')
  })
})
afterAll(async () => {
  await service?.close()
  await Promise.all([web?.close(), dns?.close()])
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('scheduler run --as-of through a 3-year subscription', () => {
  it('reissues 14 days before each expiry: a gap-free chain under the 200/100/47-day caps, none outliving the subscription', async () => {
    const start = await orderRow(tlsOrder)
    expect(start).toMatchObject({
      cert_valid_from: '2026-06-01',
      cert_valid_till: '2026-12-18',
      next_reissue_at: '2026-12-04',
      purchase_end_date: '2029-06-01'
    })

    // A day before it is due nothing happens, and running twice changes nothing.
    const early = await scheduler('2026-12-03')
    expect(early).toMatchObject({ success: true, as_of: '2026-12-03 00:00:00', issued: [], expired: [], errors: [] })

    let brokeOnce = false
    for (let guard = 0; guard < 40; guard++) {
      const o = await orderRow(tlsOrder)
      if (!o.next_reissue_at) break
      const asOf = o.next_reissue_at
      if (!brokeOnce && asOf >= '2029-03-15') {
        // The reuse period (10 days from 2029-03-15) has passed: the scheduler re-checks, and a missing
        // file sends the order back to validation_pending with the reason.
        brokeOnce = true
        const path = `/.well-known/pki-validation/${((await service.ctx.store.get('SELECT csr_md5 FROM certificate_requests WHERE order_id = ?', tlsOrder)) as { csr_md5: string }).csr_md5}.txt`
        const content = `${((await service.ctx.store.get('SELECT csr_sha256 FROM certificate_requests WHERE order_id = ?', tlsOrder)) as { csr_sha256: string }).csr_sha256}\ncertdesk.invalid\n${((await service.ctx.store.get('SELECT unique_value FROM certificate_requests WHERE order_id = ?', tlsOrder)) as { unique_value: string }).unique_value}`
        web.remove('walk.example.com', path)
        const failed = await scheduler(asOf)
        expect(failed.issued).toEqual([])
        expect(failed.validation_needed).toEqual([
          {
            order_id: tlsOrder,
            order_number: expect.any(String),
            reason: expect.stringMatching(/needs domain validation again .*HTTP 404/)
          }
        ])
        expect(await orderRow(tlsOrder)).toMatchObject({
          status: 'validation_pending',
          status_note: expect.stringMatching(/HTTP 404/)
        })
        web.put('walk.example.com', path, content)
      }
      const res = await scheduler(asOf)
      expect(res.errors).toEqual([])
      expect(res.issued).toEqual([expect.objectContaining({ order_id: tlsOrder, reason: 'auto_reissue' })])
      expect((await orderRow(tlsOrder)).status).toBe('completed')
    }
    expect(brokeOnce).toBe(true)

    const chain = await certs(tlsOrder)
    const end = parseDate('2029-06-01')
    const caps = new Set<number>()
    const root = await new LocalCa(service.ctx).rootPem()
    for (const [i, c] of chain.entries()) {
      const from = parseDate(c.valid_from)
      const till = parseDate(c.valid_till)
      const days = (till.getTime() + 1000 - from.getTime()) / DAY_MS
      const cap = maxValidityDays(from)
      caps.add(cap)
      expect(days, `certificate ${i} from ${c.valid_from}`).toBeLessThanOrEqual(cap)
      expect(till.getTime()).toBeLessThan(end.getTime())
      if (i > 0) {
        const prev = chain[i - 1]
        expect(from.getTime(), `gap before certificate ${i}`).toBeLessThanOrEqual(parseDate(prev.valid_till).getTime())
        expect(from.getTime()).toBeGreaterThan(parseDate(prev.valid_from).getTime())
      }
      expect(opensslVerify(root, c.chain_pem, c.certificate_pem, new Date(from.getTime() + 1000)).ok).toBe(true)
    }
    expect([...caps].sort((a, b) => a - b)).toEqual([47, 100, 200])
    expect(chain[0].reason).toBe('initial')
    expect(chain.slice(1).every((c) => c.reason === 'auto_reissue')).toBe(true)
    // The last certificate ends one second before the subscription does.
    expect(chain[chain.length - 1].valid_till).toBe('2029-05-31 23:59:59')
    const last = await orderRow(tlsOrder)
    expect(last).toMatchObject({
      status: 'completed',
      next_reissue_at: null,
      reissue_count: chain.length - 1,
      cert_valid_till: '2029-05-31'
    })

    // Code signing was never reissued, and turned expired with its subscription.
    expect(await certs(codeOrder)).toHaveLength(1)
    expect(await orderRow(codeOrder)).toMatchObject({ status: 'expired', reissue_count: 0, next_reissue_at: null })

    // The subscription ends: the order turns expired, once.
    const after = await scheduler('2029-06-01')
    expect(after.expired).toEqual([{ order_id: tlsOrder, order_number: expect.any(String) }])
    expect((await orderRow(tlsOrder)).status).toBe('expired')
    expect((await scheduler('2029-06-02')).expired).toEqual([])
  })
})
