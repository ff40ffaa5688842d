import { spawn } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { buildServer, listen, type Listening } from '../../src-main/http/server'
import { certdeskAsync } from '../support/cli'
import { manualClock } from '../support/clock'
import { opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startReceiver, unreachableUrl, type Receiver } from '../support/webhook-receiver'

/**
 * An order is pointed at a folder, an nginx-style reload command and a
 * webhook once; every later automatic reissue, driven by `certdesk admin scheduler run --as-of`
 * in a child process, shows up on disk, in the command's environment, at the receiver and in
 * the event log, while a broken command and a dead receiver are retried and reported.
 */
type Body = Record<string, unknown>
const clock = manualClock('2026-06-01T09:00:00Z')
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-sched-deploy-'))
const work = mkdtempSync(join(tmpdir(), 'certdesk-sched-deploy-files-'))
const folder = join(work, 'etc-nginx-ssl', 'shop.example.com')
const envLog = join(work, 'reload-env.log')
const keyFile = join(work, 'customer', 'shop.example.com.key')
mkdirSync(join(work, 'customer'))
let service: Service
let web: WebServer
let dns: DnsServer
let receiver: Receiver
let api: Listening
let apiKey: string
let orderId: number

const admin = (...args: string[]) => certdeskAsync(['admin', '--data-dir', dataDir, ...args])
const orderRow = async () =>
  (await service.ctx.store.get(
    'SELECT status, reissue_count, next_reissue_at, cert_valid_till FROM orders WHERE id = ?',
    orderId
  )) as {
    status: string
    reissue_count: number
    next_reissue_at: string | null
    cert_valid_till: string
  }
const latestCert = async () =>
  (await service.ctx.store.get(
    'SELECT serial, certificate_pem, chain_pem, reason FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1',
    orderId
  )) as {
    serial: string
    certificate_pem: string
    chain_pem: string
    reason: string
  }

/** A reader in another process that reads the folder's files in a tight loop until told to stop. */
function startReader(files: string[]): { stop(): Promise<{ reads: number; seen: string[] }> } {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); const seen = new Set(); const files = ${JSON.stringify(files)}; let reads = 0; let stop = false;
       const report = () => { process.stdout.write(JSON.stringify({ reads, seen: [...seen] })); process.exit(0) };
       process.stdin.on('data', () => { stop = true });
       setTimeout(report, 120000);
       (function loop() { if (stop) return report(); for (let i = 0; i < 50; i++) for (const f of files) { try { seen.add(fs.readFileSync(f, 'utf8')); reads++ } catch (e) { seen.add('ERROR ' + e.code) } } setImmediate(loop) })()`
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] }
  )
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  return {
    async stop() {
      child.stdin.write('stop\n')
      await exited
      return JSON.parse(out) as { reads: number; seen: string[] }
    }
  }
}

let senderTime: Date | null = null
async function scheduler(asOf: string): Promise<Body> {
  senderTime = new Date(`${asOf}T00:00:00Z`)
  const r = await admin('scheduler', 'run', '--as-of', asOf)
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  // The receiver checks timestamps against the time of the process that sends: the real time for
  // `deploy run`, the stopped clock of `scheduler run --as-of`.
  receiver = await startReceiver({ clock: () => senderTime ?? new Date() })
  service = await openService({ dataDir, clock: clock.clock })
  await service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const reseller = await service.resellers.create({ name: 'Shop Hosting', email: 'ops@shop.test', groupId: 1 })
  await service.ledger.topUp(reseller.id, 100_000)
  apiKey = (await service.resellers.createApiKey(reseller.id)).key
  orderId = (
    await service.orders.create(await service.resellers.get(reseller.id), {
      productId: 2,
      domain: 'shop.example.com',
      period: 36
    })
  ).order.id
  // The customer made the CSR and keeps its key on the server; the folder target names that file.
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' })
  writeFileSync(keyFile, key, { mode: 0o600 })
  const conf = await service.certificates.configure(reseller.id, {
    orderId,
    csr: opensslCsrForKey(['shop.example.com'], key as string),
    dcvMethod: 'http'
  })
  const i = conf.validation[0].instructions
  if (i.method !== 'http') throw new Error('expected http instructions')
  web.put('shop.example.com', new URL(i.url).pathname, i.fileContent)
  expect((await service.certificates.status(reseller.id, orderId)).order.status).toBe('completed')
  api = await listen(await buildServer(service))
})
afterAll(async () => {
  await service?.deploys.idle()
  await api?.close()
  await service?.close()
  await Promise.all([web?.close(), dns?.close(), receiver?.close()])
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe("deploys follow the scheduler's automatic reissues", () => {
  it('set up once: each automatic reissue lands in the folder atomically, runs the reload with its environment and reaches the signed webhook', async () => {
    expect(
      (
        await admin(
          'deploy',
          'add',
          '--order',
          String(orderId),
          '--folder',
          folder,
          '--layout',
          'nginx',
          '--key-file',
          keyFile
        )
      ).code
    ).toBe(0)
    const reload = `printf '%s|%s|%s|%s|%s|%s\\n' "$CERTDESK_ORDER_ID" "$CERTDESK_DOMAIN" "$CERTDESK_TRIGGER" "$CERTDESK_SERIAL" "$CERTDESK_FULLCHAIN_FILE" "\${CERTDESK_KEY_FILE:-none}" >> '${envLog}'; echo 'nginx: configuration file /etc/nginx/nginx.conf test is successful'`
    expect(
      (await admin('deploy', 'add', '--order', String(orderId), '--command', reload, '--timeout', '30')).code
    ).toBe(0)
    const hook = await admin('deploy', 'add', '--order', String(orderId), '--webhook', receiver.url)
    receiver.secret = hook.json.webhook_secret as string
    // The current certificate goes out once by hand; after that nobody touches anything.
    const first = await admin('deploy', 'run', '--order', String(orderId))
    expect(first.code, JSON.stringify(first.json)).toBe(0)
    const initial = await latestCert()
    expect(readFileSync(join(folder, 'fullchain.pem'), 'utf8')).toBe(initial.certificate_pem + initial.chain_pem)

    const versions = [initial.certificate_pem + initial.chain_pem]
    const reader = startReader([join(folder, 'fullchain.pem'), join(folder, 'cert.pem')])
    const reissues: { asOf: string; serial: string }[] = []
    try {
      for (let n = 0; n < 3; n++) {
        const asOf = (await orderRow()).next_reissue_at as string
        const report = await scheduler(asOf)
        expect(report.issued).toEqual([expect.objectContaining({ order_id: orderId, reason: 'auto_reissue' })])
        const cert = await latestCert()
        expect(cert.reason).toBe('auto_reissue')
        versions.push(cert.certificate_pem + cert.chain_pem)
        reissues.push({ asOf, serial: cert.serial })
        expect(report.deploys).toEqual([
          expect.objectContaining({ kind: 'folder', status: 'succeeded', attempts: 1 }),
          expect.objectContaining({ kind: 'command', status: 'succeeded', attempts: 1 }),
          expect.objectContaining({ kind: 'webhook', status: 'succeeded', attempts: 1 })
        ])
        expect(readFileSync(join(folder, 'fullchain.pem'), 'utf8')).toBe(cert.certificate_pem + cert.chain_pem)
        expect(readFileSync(join(folder, 'cert.pem'), 'utf8')).toBe(cert.certificate_pem)
      }
    } finally {
      const seen = await reader.stop()
      expect(seen.reads).toBeGreaterThan(100)
      const whole = new Set([
        ...versions,
        ...versions.map((v) => v.slice(0, v.indexOf('-----END CERTIFICATE-----') + 26))
      ])
      for (const content of seen.seen)
        expect(whole.has(content), `reader saw a partial file: ${content.slice(0, 60)}…`).toBe(true)
    }

    // The reload ran once per deploy with this order's values; the key is the customer's file.
    const lines = readFileSync(envLog, 'utf8').trim().split('\n')
    expect(lines.slice(1)).toEqual(
      reissues.map(
        (r) => `${orderId}|shop.example.com|auto_reissue|${r.serial}|${join(folder, 'fullchain.pem')}|${keyFile}`
      )
    )
    expect(lines[0]).toBe(
      `${orderId}|shop.example.com|manual|${initial.serial}|${join(folder, 'fullchain.pem')}|${keyFile}`
    )

    // The receiver got every reissue, signed with the secret it was given.
    const got = receiver.deliveries.slice(1)
    expect(got.map((d) => [d.signatureValid, d.body.type, d.body.serial])).toEqual(
      reissues.map((r) => [true, 'certificate.reissued', r.serial])
    )
    expect(got.every((d) => d.body.order_id === orderId && d.body.domain === 'shop.example.com')).toBe(true)
    expect(Number(got[0].headers['x-certdesk-timestamp'])).toBe(Date.parse(`${reissues[0].asOf}T00:00:00Z`) / 1000)
  })

  it('a failing command and a dead receiver are retried by later passes and reported, while the reissue stands', async () => {
    expect(
      (
        await admin(
          'deploy',
          'add',
          '--order',
          String(orderId),
          '--command',
          'echo "reload failed: nginx.service not found" >&2; exit 5'
        )
      ).code
    ).toBe(0)
    expect((await admin('deploy', 'add', '--order', String(orderId), '--webhook', await unreachableUrl())).code).toBe(0)
    const before = await orderRow()
    const previous = await latestCert()
    const asOf = before.next_reissue_at as string
    const report = await scheduler(asOf)
    expect(report.issued).toEqual([expect.objectContaining({ order_id: orderId, reason: 'auto_reissue' })])
    // By target, in the order they were added: the reloads of one order run one at a time, so
    // which pass attempted which run first may differ.
    const byTarget = (runs: Body[]): Body[] => [...runs].sort((a, b) => Number(a.target_id) - Number(b.target_id))
    const deploys = byTarget(report.deploys as Body[])
    // One reload failed: the folder gets its previous files back and the reload that had taken
    // the new ones runs again on them; both are done again with the failed reload's next attempt.
    expect(deploys.map((d) => [d.kind, d.status])).toEqual([
      ['folder', 'pending'],
      ['command', 'pending'],
      ['webhook', 'succeeded'],
      ['command', 'pending'],
      ['webhook', 'pending']
    ])
    expect(deploys[3]).toMatchObject({
      attempts: 1,
      last_error:
        `command exited with 5; restored the previous files in ${folder} (cert.pem, chain.pem, fullchain.pem); ` +
        `ran command target ${deploys[1].target_id} again so that its server loads them (command exited with 0)`,
      next_attempt_at: `${asOf} 00:01:00`
    })
    expect(deploys[0].next_attempt_at).toBe(`${asOf} 00:01:00`)
    expect(deploys[4].last_error).toMatch(/ECONNREFUSED/)

    // The reissue stands whatever the deploys did; the folder holds what the servers serve.
    const cert = await latestCert()
    expect(cert.serial).not.toBe(previous.serial)
    expect(await orderRow()).toMatchObject({ status: 'completed', reissue_count: before.reissue_count + 1 })
    expect(readFileSync(join(folder, 'fullchain.pem'), 'utf8')).toBe(previous.certificate_pem + previous.chain_pem)

    // The next day's pass tries the whole deploy again (and the reload fails again, on the stored schedule).
    const nextDay = new Date(Date.parse(`${asOf}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    const retry = await scheduler(nextDay)
    expect(retry.issued).toEqual([])
    expect(byTarget(retry.deploys as Body[]).map((d) => [d.kind, d.status, d.attempts, d.next_attempt_at])).toEqual([
      ['folder', 'pending', 2, `${nextDay} 00:05:00`],
      ['command', 'pending', 2, `${nextDay} 00:05:00`],
      ['command', 'pending', 2, `${nextDay} 00:05:00`],
      ['webhook', 'pending', 2, `${nextDay} 00:05:00`]
    ])
    expect(readFileSync(join(folder, 'fullchain.pem'), 'utf8')).toBe(previous.certificate_pem + previous.chain_pem)
    expect(await orderRow()).toMatchObject({ status: 'completed', reissue_count: before.reissue_count + 1 })
    expect((await latestCert()).serial).toBe(cert.serial)
  })

  it('GET /events pages through the whole history, newest first', async () => {
    const get = async (q: string) => {
      const res = await fetch(`${api.url}/events${q}`, { headers: { 'x-api-key': apiKey } })
      expect(res.status).toBe(200)
      return (await res.json()) as {
        success: boolean
        events: Body[]
        pagination: { total: number; limit: number; offset: number }
      }
    }
    const all = await get('?limit=100')
    const total = all.pagination.total
    expect(total).toBe(all.events.length)
    const types = all.events.map((e) => e.type).reverse()
    expect(types.slice(0, 4)).toEqual(['order.created', 'order.paid', 'validation.passed', 'certificate.issued'])
    expect(types.filter((t) => t === 'certificate.reissued').length).toBe(4)
    expect(types.filter((t) => t === 'deploy.failed').length).toBe(4)
    const ids: number[] = []
    for (let offset = 0; offset < total; offset += 7) {
      const page = await get(`?limit=7&offset=${offset}`)
      expect(page.pagination).toEqual({ total, limit: 7, offset })
      ids.push(...page.events.map((e) => e.id as number))
    }
    expect(ids).toEqual(all.events.map((e) => e.id))
    const failed = await get('?type=deploy.failed&limit=2')
    expect(failed.pagination.total).toBe(4)
    expect(failed.events[0].message).toMatch(/failed \(attempt 2 of 6\).*next attempt at \d{4}-\d{2}-\d{2} 00:05:00$/)
    const reissued = await get('?type=certificate.reissued&limit=1')
    expect(reissued.events[0].message).toContain('reissued automatically')
    expect(reissued.events[0].data).toMatchObject({ trigger: 'auto_reissue', serial: (await latestCert()).serial })
  })
})
