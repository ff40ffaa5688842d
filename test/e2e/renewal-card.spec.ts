/**
 * The order page's Renewal card, on a CertDesk of its own (browser mode over `certdesk serve`,
 * so the ACME issuer set here touches no other spec): its ACME issuer gets certificates from
 * its own embedded ACME server, validated through a dns-persist-01 record served by
 * pebble-challtestsrv. The card shows the RFC 9773 window and where it came from, and the
 * record, in place.
 */
import { expect, test } from '@playwright/test'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { opensslCsr } from '../support/csr'
import { nav, shot } from './support'

const ROOT = join(__dirname, '..', '..')
let dns: DnsServer
let dir: string
let server: ChildProcess | null = null

const cli = (...args: string[]): Record<string, unknown> => {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'certdesk.cjs'), 'admin', '--data-dir', dir, ...args], {
    encoding: 'utf8',
    env: process.env
  })
  if (r.status !== 0) throw new Error(`certdesk admin ${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout) as Record<string, unknown>
}

test.beforeAll(async () => {
  dns = await startDns()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-e2e-renewal-'))
})
test.afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server?.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  await dns?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('the Renewal card shows the ARI window, its source and the dns-persist-01 record in place', async ({ page }) => {
  cli('settings', 'set', 'dcv.dns_resolver', dns.address)
  server = spawn(
    'timeout',
    [
      '10m',
      process.execPath,
      join(ROOT, 'bin', 'certdesk.cjs'),
      'serve',
      '--ui',
      '--demo',
      '--port',
      '0',
      '--data-dir',
      dir
    ],
    { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  const out = await new Promise<string>((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`serve printed no link: ${text}`)), 30_000)
    server?.stdout?.on('data', (d) => {
      text += d
      if (/open once: \S+/.test(text) && /ACME directory at \S+/.test(text)) {
        clearTimeout(timer)
        resolve(text)
      }
    })
  })
  const api = /listening on (\S+)/.exec(out)?.[1] as string
  const directory = /ACME directory at (\S+)/.exec(out)?.[1] as string
  const login = /open once: (\S+)/.exec(out)?.[1] as string
  const demo = Number(/created demo reseller (\d+)/.exec(out)?.[1] ?? 1)
  const key = cli('apikey', 'create', '--reseller', String(demo)).api_key as string
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(api + path, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined
    })
    return (await res.json()) as Record<string, unknown>
  }
  // The CA: an ACME subscription of this CertDesk's own embedded server.
  const sub = await call('POST', '/orders', { product_id: 12, domain: 'card.renewal.test' })
  const eab = (
    (await call('GET', `/orders/${sub.order_id as number}/acme`)).acme as { account: Record<string, string> }
  ).account
  const root = await (await fetch(`${api}/acme/root-ca.pem`)).text()
  writeFileSync(join(dir, 'root.pem'), root)
  writeFileSync(join(dir, 'hmac.txt'), eab.eab_hmac_key)
  cli(
    'acme-issuer',
    'set',
    '--directory',
    directory,
    '--eab-kid',
    eab.eab_kid,
    '--eab-hmac-file',
    join(dir, 'hmac.txt'),
    '--ca-bundle',
    join(dir, 'root.pem')
  )

  const order = await call('POST', '/orders', { product_id: 2, domain: 'card.renewal.test' })
  const id = order.order_id as number
  const conf = await call('POST', '/ssl/configure', {
    order_id: id,
    csr: opensslCsr(['card.renewal.test', 'www.card.renewal.test'], 'ec:P-256'),
    dcv_method: 'dns'
  })
  for (const v of conf.validation as { instructions: { record_name: string; record_value: string } }[])
    await dns.setTxt(v.instructions.record_name, v.instructions.record_value)
  expect((await call('GET', `/ssl/${id}`)).status).toBe('completed')

  await page.goto(login)
  await page.goto(`${new URL(login).origin}/ui/`)
  await nav(page, 'Orders')
  await page.locator('.row-link', { hasText: order.order_number as string }).click()
  await expect(page.locator('h1', { hasText: 'card.renewal.test' })).toBeVisible()
  const card = page.getByRole('region', { name: 'Renewal' })
  await expect(card.getByTestId('renewal-window')).toContainText('ARI')
  await expect(card.getByTestId('renewal-window')).toContainText('RFC 9773')
  await expect(card.getByTestId('renewal-persist')).toContainText('_validation-persist.card.renewal.test')
  await expect(card.getByTestId('renewal-persist')).toContainText('in place')
  await card.scrollIntoViewIfNeeded()
  await shot(page, 'renewal-card')
})
