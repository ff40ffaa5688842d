/**
 * The order page says whether an order at the external CA renews without the customer, and
 * offers the switch when it does not. A CertDesk of its own (browser mode over `certdesk serve`,
 * so its ACME issuer and delegated zone touch no other spec) gets certificates from Debian's
 * Pebble; the customer's DNS is pebble-challtestsrv, their web server a node:http server, and
 * Pebble reaches CertDesk's DNS responder through a stand-in recursor. The name is an IDN
 * (bücher), ordered as its A-label.
 */
import { expect, test } from '@playwright/test'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/acme'
import { opensslCsr } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startRecursor, type Recursor } from '../support/dns-recursor'
import { PEBBLE_EAB, startPebble, type Pebble } from '../support/pebble'
import { nav, shot } from './support'

const ROOT = join(__dirname, '..', '..')
const ZONE = 'acme.reseller.test'
const NAME = 'xn--bcher-kva.example'
let dns: DnsServer
let web: WebServer
let recursor: Recursor
let pebble: Pebble
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
  dir = mkdtempSync(join(tmpdir(), 'certdesk-e2e-unattended-'))
  // A records only: the web server listens on 127.0.0.1, and Pebble would try ::1 first.
  dns = await startDns({ ipv6: '' })
  web = await startWeb()
})
test.afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server?.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  await pebble?.close()
  await recursor?.close()
  await web?.close()
  await dns?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('the Renewal card says http-01 needs the customer and switches the order to delegated DNS', async ({ page }) => {
  const dnsPort = await freePort()
  recursor = await startRecursor({ customer: dns.address, delegated: `127.0.0.1:${dnsPort}`, zone: ZONE })
  pebble = await startPebble({ dnsServer: recursor.address, validityDays: 30, httpPort: web.httpPort })
  cli('settings', 'set', 'dcv.dns_resolver', dns.address)
  cli('settings', 'set', 'dcv.http_port', String(web.httpPort))
  cli('settings', 'set', 'dcv.allow_private_addresses', 'true')
  cli('settings', 'set', 'dns.delegated_zone', ZONE)
  cli('settings', 'set', 'dns.listen', `127.0.0.1:${dnsPort}`)
  writeFileSync(join(dir, 'hmac.txt'), PEBBLE_EAB.hmac)
  cli(
    'acme-issuer',
    'set',
    '--directory',
    pebble.directoryUrl,
    '--eab-kid',
    PEBBLE_EAB.kid,
    '--eab-hmac-file',
    join(dir, 'hmac.txt'),
    '--ca-bundle',
    pebble.caBundle
  )
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
      if (/open once: \S+/.test(text) && /DNS responder/.test(text)) {
        clearTimeout(timer)
        resolve(text)
      }
    })
  })
  const api = /listening on (\S+)/.exec(out)?.[1] as string
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

  const order = await call('POST', '/orders', { product_id: 2, domain: NAME })
  const id = order.order_id as number
  const conf = await call('POST', '/ssl/configure', {
    order_id: id,
    csr: opensslCsr([NAME], 'ec:P-256'),
    dcv_method: 'http'
  })
  expect(conf.unattended_renewal).toMatchObject({ method: 'http-01', unattended: false })
  for (const v of conf.validation as { name: string; instructions: { url: string; file_content: string } }[])
    web.put(v.name, new URL(v.instructions.url).pathname, v.instructions.file_content)
  expect((await call('GET', `/ssl/${id}`)).status).toBe('completed')

  await page.goto(login)
  await page.goto(`${new URL(login).origin}/ui/`)
  await nav(page, 'Orders')
  await page.locator('.row-link', { hasText: order.order_number as string }).click()
  await expect(page.locator('h1', { hasText: NAME })).toBeVisible()
  const card = page.getByRole('region', { name: 'Renewal' })
  const unattended = card.getByTestId('renewal-unattended')
  await expect(unattended).toContainText('needs the customer')
  await expect(unattended).toContainText('http-01')
  await expect(card.getByTestId('renewal-alternatives')).toContainText(`_acme-challenge.${NAME}`)
  await expect(card.getByTestId('renewal-alternatives')).toContainText(`.${ZONE}`)
  await card.scrollIntoViewIfNeeded()
  await shot(page, 'renewal-needs-customer')

  await card.getByRole('button', { name: 'Renew over DNS instead' }).click()
  await expect(page.locator('.toast-ok').last()).toHaveText('Renewals now validate over DNS')
  await expect(unattended).toContainText('unattended')
  await expect(unattended).toContainText('delegated DNS')
  const delegation = card.getByTestId('renewal-delegation')
  await expect(delegation).toContainText('missing')
  const target = (await call('GET', `/orders/${id}/renewal`)) as {
    renewal: { delegation: { domains: { cname: { value: string } }[] } }
  }
  await dns.setCname(`_acme-challenge.${NAME}`, target.renewal.delegation.domains[0].cname.value)
  await card.getByRole('button', { name: 'Check again' }).click()
  await expect(delegation).toContainText('in place')
  await card.scrollIntoViewIfNeeded()
  await shot(page, 'renewal-switched-to-dns')
})
