/**
 * The three example scripts of docs/scripts.md, run as a developer runs them (`npx tsx …`,
 * offline) against a real CertDesk on loopback: a DNS server that points the domain at
 * 127.0.0.1, a web server that serves the script's web root, real HTTP validation, issuance
 * and download. The code docs/scripts.md shows is the code that runs.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { opensslCsr } from '../support/csr'
import { serveFolder, startDns, type DnsServer } from '../support/dcv-servers'
import { OFFLINE_MARKER, offlineEnv, ROOT } from '../support/offline-tool'
import { startServer, type TestReseller, type TestServer } from '../support/server'

const EXAMPLES = ['place-order.mts', 'nightly-report.mts', 'renew-due.mts', 'args.ts']

let s: TestServer
let dns: DnsServer
let web: http.Server
let r: TestReseller
const dir = mkdtempSync(join(tmpdir(), 'certdesk-scripts-'))
const webroot = join(dir, 'www')
const out = join(dir, 'certs')

beforeAll(async () => {
  s = await startServer()
  dns = await startDns()
  web = await serveFolder(webroot)
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String((web.address() as AddressInfo).port))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  r = await s.reseller({ credit: 500 })
})
afterAll(async () => {
  await new Promise((resolve) => web?.close(resolve))
  await dns?.close()
  await s?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** `npx tsx client/examples/<script> …args`, with the reseller's key, to its end. */
function script(name: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join('client', 'examples', name), ...args], {
      cwd: ROOT,
      env: { ...offlineEnv(), CERTDESK_URL: s.url, CERTDESK_API_KEY: r.key }
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const balance = async (): Promise<number> =>
  (await s.request<{ balance: number }>('GET', '/balance', { key: r.key })).body.balance

describe('docs/scripts.md', () => {
  it('shows each example script exactly as it is in client/examples', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'scripts.md'), 'utf8')
    for (const name of EXAMPLES) {
      const marker = `<!-- client/examples/${name} -->`
      const at = doc.indexOf(marker)
      expect(at, `${marker} in docs/scripts.md`).toBeGreaterThan(0)
      const start = doc.indexOf('```ts\n', at) + '```ts\n'.length
      const shown = doc.slice(start, doc.indexOf('```\n', start))
      expect(shown, `docs/scripts.md shows another ${name}: paste the file again`).toBe(
        readFileSync(join(ROOT, 'client', 'examples', name), 'utf8')
      )
    }
  })
})

describe('the example scripts against a live CertDesk', () => {
  it('place-order.mts orders, validates over http, and writes the issued certificate; a rerun orders nothing', async () => {
    const csrFile = join(dir, 'shop.csr')
    writeFileSync(csrFile, opensslCsr(['shop.example.com']))
    const before = await balance()
    const args = ['--domain', 'shop.example.com', '--csr', csrFile, '--webroot', webroot, '--out', out, '--wait', '60']
    const first = await script('place-order.mts', args)
    expect(first.stderr).not.toContain(OFFLINE_MARKER)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/^ordered ORD-\d{4}-\d{6}: 31\.2 USD/m)
    expect(first.stdout).toMatch(
      /^published http:\/\/shop\.example\.com\/\.well-known\/pki-validation\/[0-9A-F]{32}\.txt$/m
    )
    expect(first.stdout).toMatch(/^issued [0-9A-F]+, valid till \d{4}-\d{2}-\d{2}: /m)

    const orders = await s.request<{ orders: { order_id: number; status: string }[] }>('GET', '/orders', { key: r.key })
    expect(orders.body.orders).toHaveLength(1)
    expect(orders.body.orders[0].status).toBe('completed')
    const download = await s.request<{ certificate: { certificate_pem: string; ca_bundle: string } }>(
      'GET',
      `/certificate/${orders.body.orders[0].order_id}/download`,
      { key: r.key }
    )
    expect(readFileSync(join(out, 'shop.example.com.crt'), 'utf8')).toBe(download.body.certificate.certificate_pem)
    expect(readFileSync(join(out, 'shop.example.com.chain.crt'), 'utf8')).toBe(download.body.certificate.ca_bundle)
    const charged = before - (await balance())
    expect(charged).toBeCloseTo(31.2, 2)

    const again = await script('place-order.mts', args)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/was placed before; following it/)
    expect(before - (await balance())).toBeCloseTo(charged, 2)
    const still = await s.request<{ orders: unknown[] }>('GET', '/orders', { key: r.key })
    expect(still.body.orders).toHaveLength(1)
  })

  it('nightly-report.mts reports the balance, the last day, what ends soon and what waits', async () => {
    const run = await script('nightly-report.mts', ['--days', '365'])
    expect(run.stderr).not.toContain(OFFLINE_MARKER)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Balance: ${(await balance()).toFixed(2)} USD`)
    expect(run.stdout).toMatch(/: 2 transactions, 468\.80 USD/)
    expect(run.stdout).toMatch(
      /Certificates ending within 365 days: 1\n {2}ORD-\d{4}-\d{6} {2}shop\.example\.com {2}ends /
    )
    expect(run.stdout).toContain('Orders waiting for validation: 0')
  })

  it('renew-due.mts reissues what ends within the window, and says when to retry a 429', async () => {
    const id = (await s.request<{ orders: { order_id: number }[] }>('GET', '/orders', { key: r.key })).body.orders[0]
      .order_id
    const certificate = async () =>
      (await s.request<{ certificate: { serial_number: string } }>('GET', `/certificate/${id}`, { key: r.key })).body
        .certificate.serial_number
    const first = await certificate()

    const dry = await script('renew-due.mts', ['--days', '400', '--dry-run', 'yes'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/shop\.example\.com: would reissue/)
    expect(await certificate()).toBe(first)

    const run = await script('renew-due.mts', ['--days', '400'])
    expect(run.stderr).not.toContain(OFFLINE_MARKER)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/shop\.example\.com: reissued, valid till \d{4}-\d{2}-\d{2}/)
    expect(run.stdout).toContain('1 due within 400 days, 0 not reissued')
    expect(await certificate()).not.toBe(first)

    // Nothing is due within a day.
    const none = await script('renew-due.mts', ['--days', '1'])
    expect(none.stdout).toContain('0 due within 1 days, 0 not reissued')

    // At most 3 reissues of an order within 60 minutes: the fourth is a 429 the script reports.
    for (let i = 0; i < 2; i += 1) expect((await script('renew-due.mts', ['--days', '400'])).code).toBe(0)
    const limited = await script('renew-due.mts', ['--days', '400'])
    expect(limited.code).toBe(1)
    expect(limited.stdout).toMatch(/shop\.example\.com: reissued too often; retry in \d+ seconds/)
  })
})
