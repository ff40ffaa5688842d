/**
 * A deploy whose reload fails, or whose reloaded server does not serve the new certificate, puts
 * the previous files back: the folder is byte for byte what it was, the live nginx keeps serving
 * the previous certificate, and so does an nginx started again on that folder (no certificate
 * switch at the next restart). The run says so ("restored the previous files"), in its attempt
 * record, in `certdesk admin deploy list` and in the event log; the next attempt writes the new
 * set again and reloads. A first deploy that fails leaves its new files: there was nothing before.
 */
import { spawnSync } from 'node:child_process'
import { generateKeyPairSync, X509Certificate } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import type { DeployRun } from '../../src-main/core/deploy/runs'
import { CLI } from '../support/cli'
import { manualClock } from '../support/clock'
import { opensslCsrForKey } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer as DcvWeb } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'
import { folderSnapshot as snapshot, servedSerial, startWebServer, type WebServer } from './web-servers'

type Body = Record<string, unknown>
const clock = manualClock(new Date())
let s: TestServer
let dns: DnsServer
let web: DcvWeb
let r: TestReseller
let rootPem: string
const work = mkdtempSync(join(tmpdir(), 'certdesk-restore-'))
const servers: WebServer[] = []

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer({ clock: clock.clock }), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  // A server that will never serve the new certificate: a short wait is as good as a long one.
  s.service.deploys.setVerifyDeadline(3_000)
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

const latestSerial = async (orderId: number): Promise<string> =>
  new X509Certificate(
    (await s.service.certificates.history(r.id, orderId))[0].certificatePem
  ).serialNumber.toUpperCase()

/** An order issued over HTTP validation, with its key kept in CertDesk (as the app's CSR form does). */
async function issuedOrder(domain: string): Promise<number> {
  const key = newKey()
  const orderId = (
    await s.service.orders.create(await s.service.resellers.get(r.id), { productId: 2, domain, period: 36 })
  ).order.id
  const conf = await s.service.certificates.configure(r.id, {
    orderId,
    csr: opensslCsrForKey([domain], key),
    dcvMethod: 'http'
  })
  for (const v of conf.validation) {
    const i = v.instructions as { url?: string; fileContent?: string }
    if (i.url) web.put(new URL(i.url).hostname, new URL(i.url).pathname, `${i.fileContent}\n`)
  }
  expect((await s.service.certificates.status(r.id, orderId)).order.status).toBe('completed')
  await s.service.keyVault.store(r.id, orderId, key)
  return orderId
}

/** A reissue with the same CSR: a new certificate the order's targets must receive. */
async function reissue(orderId: number): Promise<string> {
  const before = await latestSerial(orderId)
  const res = await s.request<Body>('POST', '/ssl/reissue', { key: r.key, body: { order_id: orderId } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const serial = await latestSerial(orderId)
  expect(serial).not.toBe(before)
  return serial
}

const adminDeployList = (orderId: number): string => {
  const out = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', s.dataDir, 'deploy', 'list', '--order', String(orderId)],
    { encoding: 'utf8', env: process.env, timeout: 60_000 }
  )
  expect(out.status, out.stderr).toBe(0)
  return out.stdout
}

describe('nginx whose reload or verification fails', () => {
  const domain = 'restore.live.example.test'
  const folder = join(work, domain)
  /** What the command target runs, changed between the attempts as an admin fixes the reload. */
  const reloadScript = join(work, 'reload.sh')
  let orderId: number
  let server: WebServer
  let serving: string
  let reissued: string

  /** A restarted nginx listens on a new port: the command target's check follows it. */
  async function verifyCurrentServer(): Promise<void> {
    const command = (await s.service.deploys.targets(orderId)).find((t) => t.kind === 'command')
    await s.service.deploys.updateTarget(command!.id, { verify: [`127.0.0.1:${server.port}`] })
  }

  /** Moves the clock to the command run's next attempt and runs the due deploys, as the scheduler does. */
  async function nextAttempt(): Promise<DeployRun[]> {
    const command = (await s.service.deploys.runs(orderId, { limit: 1, offset: 0 })).items[0]
    expect(command.kind).toBe('command')
    clock.set(`${(command.nextAttemptAt as string).replace(' ', 'T')}Z`)
    await s.service.deploys.runDue()
    return (await s.service.deploys.runs(orderId, { limit: 2, offset: 0 })).items.reverse()
  }

  it('deploys a first certificate and nginx serves it', async () => {
    orderId = await issuedOrder(domain)
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    expect((await s.service.deploys.runOrder(orderId)).map((x) => x.status)).toEqual(['succeeded'])
    server = await startWebServer('nginx', folder, domain, work)
    servers.push(server)
    serving = await latestSerial(orderId)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)
    await s.service.deploys.addTarget(orderId, {
      kind: 'command',
      command: `. '${reloadScript}'`,
      timeoutSeconds: 30,
      verify: [`127.0.0.1:${server.port}`]
    })
  })

  it('a reload that fails puts the previous files back, and a restart of nginx still serves the previous certificate', async () => {
    // The reload stops before it reaches nginx, as `nginx -t && …` does on a broken config.
    writeFileSync(reloadScript, 'echo "nginx: [emerg] configuration file test failed" >&2; exit 1\n')
    const before = snapshot(folder)
    reissued = await reissue(orderId)
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => [x.kind, x.status, x.serial])).toEqual([
      ['folder', 'pending', reissued],
      ['command', 'pending', reissued]
    ])
    expect(snapshot(folder)).toEqual(before)
    expect(server.alive(), server.log()).toBe(true)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)

    const [folderRun, command] = runs
    const said = command.history.at(-1)?.summary ?? ''
    expect(said).toBe(
      `command exited with 1; restored the previous files in ${folder} (cert.pem, chain.pem, fullchain.pem, privkey.pem)`
    )
    expect(command.lastError).toBe(said)
    expect(folderRun.lastError).toBe(
      `restored the previous files: command target ${command.targetId} failed; deployed again with its next attempt at ${command.nextAttemptAt}`
    )
    expect(folderRun.nextAttemptAt).toBe(command.nextAttemptAt)
    // The admin's CLI and the event log say it too; the reseller reads it without the path.
    expect(adminDeployList(orderId)).toContain('restored the previous files in')
    const events = await s.request<{ events: Body[] }>('GET', `/events?type=deploy.failed&order_id=${orderId}`, {
      key: r.key
    })
    const failed = events.body.events[0]
    expect((failed.data as Body).reason).toBe('the command exited with 1; the previous certificate files were put back')
    expect(JSON.stringify(failed)).not.toContain(folder)

    // The next start of nginx reads the folder: the previous certificate, not an unannounced switch.
    await server.stop()
    server = await startWebServer('nginx', folder, domain, work)
    servers.push(server)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)
  })

  it('a reload that exits 0 but leaves the old certificate served fails verification and puts the previous files back', async () => {
    // Exits 0 and reloads nothing: verification finds the previous certificate still served.
    writeFileSync(reloadScript, 'true\n')
    await verifyCurrentServer()
    const before = snapshot(folder)
    const runs = await nextAttempt()
    expect(runs.map((x) => [x.kind, x.status, x.serial, x.attempts])).toEqual([
      ['folder', 'pending', reissued, 2],
      ['command', 'pending', reissued, 2]
    ])
    const said = runs[1].history.at(-1)?.summary ?? ''
    expect(said).toMatch(
      new RegExp(`^command exited with 0, but .*; restored the previous files in ${folder.replace(/\./g, '\\.')} `)
    )
    expect(said).toContain(`127.0.0.1:${server.port} serves certificate ${serving}, not the deployed ${reissued}`)
    expect(snapshot(folder)).toEqual(before)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)
    await server.stop()
    server = await startWebServer('nginx', folder, domain, work)
    servers.push(server)
    expect(await servedSerial(server.port, domain, rootPem)).toBe(serving)
  })

  it('once the reload works, the next attempt writes the new files again and nginx serves them', async () => {
    await verifyCurrentServer()
    writeFileSync(reloadScript, `${server.reloadCommand}\n`)
    const runs = await nextAttempt()
    expect(runs.map((x) => [x.kind, x.status, x.serial, x.lastError])).toEqual([
      ['folder', 'succeeded', reissued, null],
      ['command', 'succeeded', reissued, null]
    ])
    expect(await servedSerial(server.port, domain, rootPem)).toBe(reissued)
    // Nothing of the previous set is kept once the reload has taken the new one.
    expect(readdirSync(folder).filter((n) => n.startsWith('.'))).toEqual([])
  })
})

describe('an order with two reloads, one of which fails', () => {
  it('puts the previous files back and runs the reload that had succeeded again, so its server serves them too', async () => {
    const domain = 'two.live.example.test'
    const folder = join(work, domain)
    const orderId = await issuedOrder(domain)
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    await s.service.deploys.runOrder(orderId)
    const server = await startWebServer('nginx', folder, domain, join(work, 'two'))
    servers.push(server)
    const serving = await latestSerial(orderId)
    const local = (
      await s.service.deploys.addTarget(orderId, {
        kind: 'command',
        command: server.reloadCommand,
        timeoutSeconds: 30,
        verify: [`127.0.0.1:${server.port}`]
      })
    ).target.id
    // The second server's copy-and-reload, which fails.
    const remote = (
      await s.service.deploys.addTarget(orderId, { kind: 'command', command: 'exit 7', timeoutSeconds: 30 })
    ).target.id
    const before = snapshot(folder)
    const reissued = await reissue(orderId)
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => [x.targetId, x.status])).toEqual([
      [runs[0].targetId, 'pending'],
      [local, 'pending'],
      [remote, 'pending']
    ])
    expect(runs[1].history.at(-1)?.summary).toBe(`command exited with 0; the server serves certificate ${reissued}`)
    expect(runs[2].lastError).toBe(
      `command exited with 7; restored the previous files in ${folder} (cert.pem, chain.pem, fullchain.pem, privkey.pem); ` +
        `ran command target ${local} again so that its server loads them (command exited with 0)`
    )
    expect(runs[1].lastError).toMatch(/^restored the previous files: command target \d+ failed; /)
    expect(snapshot(folder)).toEqual(before)
    // A graceful reload hands over to new workers as they start: the previous certificate comes back within moments.
    const deadline = Date.now() + 20_000
    let served = await servedSerial(server.port, domain, rootPem)
    while (served !== serving && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      served = await servedSerial(server.port, domain, rootPem)
    }
    expect(served).toBe(serving)
  })
})

describe('a first deploy that fails', () => {
  it('leaves the new files in place, and says so: there were no previous files', async () => {
    const domain = 'first.live.example.test'
    const folder = join(work, domain)
    const orderId = await issuedOrder(domain)
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    await s.service.deploys.addTarget(orderId, { kind: 'command', command: 'exit 1', timeoutSeconds: 30 })
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => [x.kind, x.status])).toEqual([
      ['folder', 'succeeded'],
      ['command', 'pending']
    ])
    expect(runs[1].lastError).toBe(
      `command exited with 1; left the new files in ${folder}: there were none before (a first deploy)`
    )
    expect(readdirSync(folder).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem'])
    expect(new X509Certificate(readFileSync(join(folder, 'cert.pem'))).serialNumber.toUpperCase()).toBe(
      await latestSerial(orderId)
    )
  })
})

describe('a file in the folder that cannot be kept', () => {
  it('a FIFO planted at a file name stops the write at once: nothing changes and nothing is left staged', async () => {
    const domain = 'fifo.live.example.test'
    const folder = join(work, domain)
    const orderId = await issuedOrder(domain)
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    await s.service.deploys.addTarget(orderId, { kind: 'command', command: 'true', timeoutSeconds: 30 })
    expect((await s.service.deploys.runOrder(orderId)).map((x) => x.status)).toEqual(['succeeded', 'succeeded'])
    rmSync(join(folder, 'chain.pem'))
    expect(spawnSync('mkfifo', [join(folder, 'chain.pem')]).status).toBe(0)
    const before = snapshot(folder)
    const runs = await s.service.deploys.runOrder(orderId)
    expect(runs.map((x) => x.status)).toEqual(['pending', 'pending'])
    expect(runs[0].lastError).toBe(
      `could not write ${folder}: could not keep the previous chain.pem: it is not a regular file`
    )
    expect(snapshot(folder)).toEqual(before)
    expect(readdirSync(folder).filter((n) => n.startsWith('.'))).toEqual([])
  })
})
