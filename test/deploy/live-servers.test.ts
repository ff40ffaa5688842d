/**
 * Deploys against real nginx, Apache and HAProxy (Debian packages) on loopback, each configured
 * with the snippet docs/deploy.md shows and reloaded by a command target that names the port to
 * verify. For each server: issue and deploy, an automatic reissue with the same key reaching the
 * live server, a reseller's reissue with a new CSR whose key CertDesk does not hold (the server
 * stays up on the previous certificate, the deploy is a recorded failure with its reason), and
 * the key provided (kept key for nginx and Apache, `haproxy.pem.key` for HAProxy) serving the new
 * certificate.
 */
import { spawn } from 'node:child_process'
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { manualClock } from '../support/clock'
import { opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer as DcvWeb } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'
import { createTestCa } from '../support/test-ca'
import {
  docSnippet,
  folderSnapshot as snapshot,
  opensslPkcs12,
  servedChain,
  servedSerial,
  startWebServer,
  type ServerKind,
  type WebServer
} from './web-servers'

type Body = Record<string, unknown>
const clock = manualClock(new Date())
let s: TestServer
let dns: DnsServer
let web: DcvWeb
let r: TestReseller
let rootPem: string
const work = mkdtempSync(join(tmpdir(), 'certdesk-live-'))
const servers: WebServer[] = []

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer({ clock: clock.clock }), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  // These servers reload in milliseconds; a loaded test machine gets 10 s before a deploy that is not served counts as failed.
  s.service.deploys.setVerifyDeadline(10_000)
  r = await s.reseller({ credit: 1000 })
  rootPem = await s.service.localCa.rootPem()
})
afterAll(async () => {
  await Promise.all(servers.map((x) => x.stop()))
  await s?.service.deploys.idle()
  await Promise.all([s?.close(), web?.close(), dns?.close()])
  rmSync(work, { recursive: true, force: true })
})

const newKey = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string

const serveFiles = (validation: { instructions: object }[]): void => {
  for (const v of validation) {
    const i = v.instructions as { url?: string; fileContent?: string; file_content?: string }
    if (!i.url) continue
    const url = new URL(i.url)
    web.put(url.hostname, url.pathname, `${i.fileContent ?? i.file_content}\n`)
  }
}

const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8)
const latestSerial = async (orderId: number): Promise<string> =>
  new X509Certificate(
    (await s.service.certificates.history(r.id, orderId))[0].certificatePem
  ).serialNumber.toUpperCase()

describe.each(['nginx', 'apache', 'haproxy'] as ServerKind[])('%s serves what CertDesk deploys', (kind) => {
  const domain = `${kind}.live.example.test`
  const folder = join(work, kind, domain)
  let orderId: number
  let server: WebServer
  let folderTarget: number
  /** The key of the reseller's new CSR, made outside CertDesk. */
  let customerKey: string

  it('issue and deploy: the server comes up with the new certificate, files 0644 and keys 0600', async () => {
    const key = newKey()
    orderId = (await s.service.orders.create(await s.service.resellers.get(r.id), { productId: 2, domain, period: 36 }))
      .order.id
    const conf = await s.service.certificates.configure(r.id, {
      orderId,
      csr: opensslCsrForKey([domain], key),
      dcvMethod: 'http'
    })
    serveFiles(conf.validation)
    expect((await s.service.certificates.status(r.id, orderId)).order.status).toBe('completed')
    // The key was generated in the app and is kept there (what the desktop's CSR form does).
    await s.service.keyVault.store(r.id, orderId, key)

    folderTarget = (await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: kind })).target
      .id
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => [x.kind, x.status])).toEqual([['folder', 'succeeded']])
    for (const f of ['cert.pem', 'chain.pem', 'fullchain.pem']) expect(mode(join(folder, f))).toBe('644')
    expect(mode(join(folder, 'privkey.pem'))).toBe('600')
    if (kind === 'haproxy') expect(mode(join(folder, 'haproxy.pem'))).toBe('600')

    server = await startWebServer(kind, folder, domain, work)
    servers.push(server)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(await latestSerial(orderId))
    await s.service.deploys.addTarget(orderId, {
      kind: 'command',
      command: server.reloadCommand,
      timeoutSeconds: 30,
      verify: [`127.0.0.1:${server.port}`]
    })
  })

  it('an automatic reissue with the same key reaches the live server with no manual step', async () => {
    const before = await latestSerial(orderId)
    const row = (await s.service.ctx.store.get('SELECT next_reissue_at FROM orders WHERE id = ?', orderId)) as {
      next_reissue_at: string
    }
    clock.set(`${row.next_reissue_at.replace(' ', 'T')}Z`)
    const report = await s.service.scheduler.run()
    expect(report.issued).toEqual(
      expect.arrayContaining([expect.objectContaining({ order_id: orderId, reason: 'auto_reissue' })])
    )
    await s.service.deploys.idle()
    const serial = await latestSerial(orderId)
    expect(serial).not.toBe(before)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serial)
    const runs = (await s.service.deploys.runs(orderId, { limit: 2, offset: 0 })).items
    expect(runs.map((x) => [x.kind, x.status, x.serial])).toEqual([
      ['command', 'succeeded', serial],
      ['folder', 'succeeded', serial]
    ])
    expect(runs[0].history.at(-1)?.summary).toContain(`the server serves certificate ${serial}`)
  })

  it('a reissue with a new CSR whose key CertDesk does not hold leaves the server up on the previous certificate and is a recorded failure', async () => {
    const serving = await latestSerial(orderId)
    const files = snapshot(folder)
    customerKey = newKey()
    const res = await s.request<Body>('POST', '/ssl/reissue', {
      key: r.key,
      body: { order_id: orderId, csr: opensslCsrForKey([domain], customerKey) }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await s.service.deploys.idle()
    const reissued = await latestSerial(orderId)
    expect(reissued).not.toBe(serving)

    expect(snapshot(folder)).toEqual(files)
    expect(server.alive(), server.log()).toBe(true)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)

    const runs = (await s.service.deploys.runs(orderId, { limit: 2, offset: 0 })).items
    expect(runs.map((x) => [x.kind, x.status, x.serial])).toEqual([
      ['command', 'pending', reissued],
      ['folder', 'pending', reissued]
    ])
    expect(runs[1].lastError).toMatch(
      new RegExp(
        `could not deploy certificate ${reissued} to .*: CertDesk does not hold the private key of this certificate.*--key-file.*keep-key.*nothing in the folder was changed`
      )
    )
    expect(runs[0].lastError).toMatch(/^command not run: folder target \d+ is not written/)

    // The reseller reads the failure and its reason on GET /events, without the folder's path.
    const events = await s.request<{ events: Body[] }>('GET', `/events?type=deploy.failed&limit=5`, { key: r.key })
    const mine = events.body.events.filter((e) => e.order_id === orderId && (e.data as Body).kind === 'folder')
    expect(mine[0]).toMatchObject({
      data: expect.objectContaining({
        serial: reissued,
        reason:
          'no private key matching the certificate is available to the deploy target, so its files were left unchanged'
      })
    })
    expect(JSON.stringify(mine[0])).not.toContain(folder)
  })

  it('with the key provided, deploying again serves the new certificate', async () => {
    // The reseller's script made the key; the admin gets it from them.
    const keyFile = kind === 'haproxy' ? join(folder, 'haproxy.pem.key') : join(work, `${kind}-customer.key`)
    writeFileSync(keyFile, customerKey, { mode: 0o600 })
    if (kind === 'haproxy') {
      // HAProxy finds a key kept apart from its certificate as <crt>.key: the target names it.
      await s.service.deploys.updateTarget(folderTarget, { keyFile })
    } else {
      // `certdesk admin deploy keep-key`: CertDesk keeps the key from now on.
      const kept = await s.service.deploys.keyToKeep(orderId, keyFile)
      await s.service.keyVault.store(kept.resellerId, orderId, kept.pkcs8Pem)
    }
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => [x.kind, x.status, x.lastError])).toEqual([
      ['folder', 'succeeded', null],
      ['command', 'succeeded', null]
    ])
    expect(await servedSerial(server.port, domain, rootPem)).toBe(await latestSerial(orderId))
    expect(server.alive()).toBe(true)
    if (kind === 'haproxy') {
      // The combined PEM holds no key now (0644); the key stays the customer's file, untouched.
      expect(readFileSync(join(folder, 'haproxy.pem'), 'utf8')).not.toContain('PRIVATE KEY')
      expect(mode(join(folder, 'haproxy.pem'))).toBe('644')
      expect(readFileSync(keyFile, 'utf8')).toBe(customerKey)
    } else {
      expect(mode(join(folder, 'privkey.pem'))).toBe('600')
    }
  })
})

describe('IIS (PFX) as docs/deploy.md shows it', () => {
  it('the certificate.pfx the snippet imports opens with the password from the keychain and holds the leaf, chain and its key', async () => {
    const snippet = docSnippet('iis')
    const name = /-FilePath '[^']*\\([^'\\]+)'/.exec(snippet)?.[1]
    expect(name).toBe('certificate.pfx')
    const domain = 'iis.live.example.test'
    const key = newKey()
    const orderId = (await s.service.orders.create(await s.service.resellers.get(r.id), { productId: 2, domain })).order
      .id
    const conf = await s.service.certificates.configure(r.id, {
      orderId,
      csr: opensslCsrForKey([domain], key),
      dcvMethod: 'http'
    })
    serveFiles(conf.validation)
    expect((await s.service.certificates.status(r.id, orderId)).order.status).toBe('completed')
    await s.service.keyVault.store(r.id, orderId, key)
    const folder = join(work, 'iis', domain)
    const created = await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'iis' })
    expect((await s.service.deploys.runOrder(orderId)).map((x) => x.status)).toEqual(['succeeded'])
    const pfx = join(folder, name as string)
    expect(mode(pfx)).toBe('600')
    const password = (await s.service.deploys.revealSecret(created.target.id)) as string
    const opened = opensslPkcs12(pfx, password)
    expect(opened.status, opened.out).toBe(0)
    const leaf = new X509Certificate((await s.service.certificates.history(r.id, orderId))[0].certificatePem)
    expect(opened.out).toContain(leaf.toString().split('\n')[1])
    expect(opened.out).toContain('PRIVATE KEY')
    expect(
      leaf.checkPrivateKey(
        createPrivateKey(/-----BEGIN PRIVATE KEY-----[\s\S]*?-----END PRIVATE KEY-----/.exec(opened.out)![0])
      )
    ).toBe(true)
    expect(opensslPkcs12(pfx, 'wrong').status).not.toBe(0)
  })
})

describe('a server started by a test', () => {
  it('stops by itself when the process it is tied to ends, even without any clean-up', async () => {
    const folder = join(work, 'orphan')
    const leaf = await (await createTestCa()).issue('orphan.example.test', new Date(), 2)
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, 'fullchain.pem'), leaf.certificatePem + leaf.chainPem)
    writeFileSync(join(folder, 'privkey.pem'), leaf.privateKeyPem, { mode: 0o600 })
    // A stand-in for a test process that is killed: it ends without stopping anything.
    const owner = spawn('sleep', ['2'], { stdio: 'ignore' })
    const server = await startWebServer('nginx', folder, 'orphan.example.test', join(work, 'orphan-run'), owner.pid)
    servers.push(server)
    expect(server.alive()).toBe(true)
    await new Promise((resolve) => owner.once('exit', resolve))
    const deadline = Date.now() + 5000
    while (server.alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(server.alive()).toBe(false)
    await expect(servedChain(server.port, 'orphan.example.test')).rejects.toThrow()
  })
})
