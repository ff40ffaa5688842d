import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ATTEMPTS, RETRY_MINUTES, secretName } from '../../src-main/core/deploy/deploys'
import { manualClock } from '../support/clock'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestCa, type TestLeaf } from '../support/test-ca'
import { startReceiver, unreachableUrl, type Receiver } from '../support/webhook-receiver'

type Body = Record<string, unknown>
const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let ca: TestCa
let receiver: Receiver
const work = mkdtempSync(join(tmpdir(), 'certdesk-deploys-'))
/** Keys CertDesk "holds", by serial: the key provider the certificate code registers. */
const keys = new Map<string, string>()
/** Serials whose key takes a while to fetch, so a folder write is still under way. */
const slowKeys = new Set<string>()

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
  ca = await createTestCa()
  receiver = await startReceiver({ clock: clock.clock })
  s.service.deploys.setKeyProvider(async (_orderId, serial) => {
    if (slowKeys.has(serial)) await new Promise((resolve) => setTimeout(resolve, 300))
    return keys.get(serial) ?? null
  })
})
afterAll(async () => {
  await s.service.deploys.idle()
  await receiver.close()
  await s.close()
  rmSync(work, { recursive: true, force: true })
})

async function placeOrder(domain: string): Promise<{ orderId: number; key: string }> {
  const r = await s.reseller({ credit: 500 })
  const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain } })
  expect(res.status).toBe(200)
  return { orderId: res.body.order_id as number, key: r.key }
}

async function issue(domain: string): Promise<TestLeaf> {
  const leaf = await ca.issue(domain, clock.now(), 200)
  keys.set(leaf.serial, leaf.privateKeyPem)
  return leaf
}

const events = async (key: string, query = '') =>
  (await s.request<{ events: Body[]; pagination: Body }>('GET', `/events${query}`, { key })).body

describe('deploy after issue and reissue', () => {
  it('writes the folder, runs the command with the order in its environment, and delivers a signed webhook', async () => {
    const { orderId, key } = await placeOrder('shop.example.test')
    const dir = join(work, 'nginx', 'shop')
    const envFile = join(work, 'shop-env.txt')
    const d = s.service.deploys
    await d.addTarget(orderId, { kind: 'folder', path: dir, layout: 'nginx' })
    await d.addTarget(orderId, {
      kind: 'command',
      command: `printf '%s\\n' "$CERTDESK_ORDER_ID" "$CERTDESK_DOMAIN" "$CERTDESK_TRIGGER" "$CERTDESK_SERIAL" "$CERTDESK_FULLCHAIN_FILE" "$CERTDESK_KEY_FILE" > '${envFile}'; head -1 "$CERTDESK_FULLCHAIN_FILE"; echo nginx reloaded`,
      timeoutSeconds: 20
    })
    const iis = await d.addTarget(orderId, { kind: 'folder', path: join(work, 'iis', 'shop'), layout: 'iis' })
    const pfxPassword = iis.secret?.value as string
    expect(iis.secret?.name).toBe('pfx_password')
    expect(await d.revealSecret(iis.target.id)).toBe(pfxPassword)
    const hook = await d.addTarget(orderId, { kind: 'webhook', url: receiver.url })
    expect(hook.secret?.name).toBe('webhook_secret')
    receiver.secret = hook.secret?.value as string
    // The secret is in the keychain, not in SQLite.
    expect(await s.service.ctx.secrets.get(secretName(hook.target.id, 'webhook_secret'))).toBe(receiver.secret)
    const dbText = JSON.stringify(await s.service.ctx.store.all('SELECT * FROM deploy_targets'))
    expect(dbText).not.toContain(receiver.secret)

    const first = await issue('shop.example.test')
    const runIds = await d.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: first.certificatePem,
      chainPem: first.chainPem
    })
    expect(runIds.length).toBe(4)
    await d.idle()

    expect(readFileSync(join(dir, 'fullchain.pem'), 'utf8')).toBe(first.certificatePem + first.chainPem)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(first.privateKeyPem)
    expect(statSync(join(dir, 'privkey.pem')).mode & 0o777).toBe(0o600)
    expect(readFileSync(envFile, 'utf8').split('\n').slice(0, 6)).toEqual([
      String(orderId),
      'shop.example.test',
      'issued',
      first.serial,
      join(dir, 'fullchain.pem'),
      join(dir, 'privkey.pem')
    ])
    // The IIS folder's PFX opens with the password from the keychain and holds this certificate.
    const pfx = spawnSync(
      'openssl',
      ['pkcs12', '-in', join(work, 'iis', 'shop', 'certificate.pfx'), '-passin', `pass:${pfxPassword}`, '-nodes'],
      { encoding: 'utf8', timeout: 30_000 }
    )
    expect(pfx.status, pfx.stderr).toBe(0)
    expect(pfx.stdout).toContain(first.certificatePem.split('\n')[1])
    expect(receiver.deliveries.length).toBe(1)
    const delivery = receiver.deliveries[0]
    expect(delivery.signatureValid).toBe(true)
    expect(delivery.headers['x-certdesk-event']).toBe('certificate.issued')
    expect(delivery.body).toMatchObject({
      type: 'certificate.issued',
      order_id: orderId,
      domain: 'shop.example.test',
      serial: first.serial,
      certificate_pem: first.certificatePem,
      ca_bundle: first.chainPem
    })
    expect(delivery.raw).not.toContain('PRIVATE KEY')

    // Every run and its answer are kept: the command's output, the receiver's status and body.
    const runs = (await d.runs(orderId, { limit: 10, offset: 0 })).items
    expect(runs.map((r) => [r.kind, r.status, r.attempts])).toEqual([
      ['webhook', 'succeeded', 1],
      ['folder', 'succeeded', 1],
      ['command', 'succeeded', 1],
      ['folder', 'succeeded', 1]
    ])
    expect(runs[2].history[0].output).toContain('nginx reloaded')
    expect(runs[2].history[0].output).toContain('-----BEGIN CERTIFICATE-----')
    expect(runs[0].history[0]).toMatchObject({ ok: true, responseCode: 200, output: 'installed' })
    expect(runs[0].history[0].request).toContain('x-certdesk-signature: v1=')

    // An automatic reissue replaces the files and says so everywhere.
    clock.advanceDays(186)
    const second = await issue('shop.example.test')
    await d.certificateStored({
      orderId,
      trigger: 'auto_reissue',
      certificatePem: second.certificatePem,
      chainPem: second.chainPem
    })
    await d.idle()
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toBe(second.certificatePem)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(second.privateKeyPem)
    expect(readFileSync(envFile, 'utf8').split('\n')[2]).toBe('auto_reissue')
    expect(receiver.deliveries[1].body).toMatchObject({
      type: 'certificate.reissued',
      trigger: 'auto_reissue',
      serial: second.serial
    })
    expect(receiver.deliveries[1].signatureValid).toBe(true)

    const log = await events(key, `?order_id=${orderId}`)
    expect(log.events.map((e) => e.type)).toEqual([
      'deploy.succeeded',
      'deploy.succeeded',
      'deploy.succeeded',
      'deploy.succeeded',
      'certificate.reissued',
      'deploy.succeeded',
      'deploy.succeeded',
      'deploy.succeeded',
      'deploy.succeeded',
      'certificate.issued',
      'order.paid',
      'order.created'
    ])
    expect(log.events[4].message).toContain('reissued automatically')

    // Neither secret is anywhere in the store: targets, runs, attempts (with the kept requests), events.
    const db = s.service.ctx.store
    const everything: string[] = []
    for (const t of ['deploy_targets', 'deploy_runs', 'deploy_attempts', 'events', 'settings'])
      everything.push(JSON.stringify(await db.all(`SELECT * FROM ${t}`)))
    expect(everything.join('\n')).toContain('x-certdesk-signature')
    expect(everything.join('\n')).not.toContain(receiver.secret)
    expect(everything.join('\n')).not.toContain(pfxPassword)
    expect(everything.join('\n')).not.toContain('PRIVATE KEY')
    expect(log.events[0].data).toMatchObject({ kind: 'webhook', serial: second.serial, attempt: 1 })
  })

  it('a failing command and an unreachable webhook are retried on the stored schedule, reported, and never touch the certificate', async () => {
    const { orderId, key } = await placeOrder('api.example.test')
    const dir = join(work, 'apache', 'api')
    const d = s.service.deploys
    await d.addTarget(orderId, { kind: 'folder', path: dir, layout: 'apache' })
    await d.addTarget(orderId, {
      kind: 'command',
      command: `echo "nginx: [emerg] cannot load certificate" >&2; exit 3`,
      timeoutSeconds: 20
    })
    await d.addTarget(orderId, { kind: 'webhook', url: await unreachableUrl() })
    const before = (await s.request<{ order: Body }>('GET', `/orders/${orderId}`, { key })).body.order

    const leaf = await issue('api.example.test')
    await d.certificateStored({
      orderId,
      trigger: 'reissued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    await d.idle()
    const started = clock.now()

    // The files are there; the two failures are kept with their reasons and a next attempt.
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toBe(leaf.certificatePem)
    let runs = (await d.runs(orderId, { limit: 10, offset: 0 })).items
    const command = () => runs.find((r) => r.kind === 'command')!
    const webhook = () => runs.find((r) => r.kind === 'webhook')!
    // A first deploy: nothing was in the folder before, so its new files stay (folder.ts).
    expect(command()).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: `command exited with 3; left the new files in ${dir}: there were none before (a first deploy)`
    })
    expect(command().history[0].output).toContain('nginx: [emerg] cannot load certificate')
    expect(command().history[0].responseCode).toBe(3)
    expect(webhook()).toMatchObject({ status: 'pending', attempts: 1 })
    expect(webhook().lastError).toMatch(/^could not deliver webhook to http:\/\/127\.0\.0\.1:\d+\/down: ECONNREFUSED$/)
    expect(webhook().nextAttemptAt).toBe('2027-05-26 10:01:00')
    const failed = await events(key, `?type=deploy.failed&order_id=${orderId}`)
    expect(failed.pagination.total).toBe(2)
    expect(failed.events[0].message).toContain('attempt 1 of 6')
    expect(failed.events[0].message).toContain('next attempt at 2027-05-26 10:01:00')

    // Not due yet: nothing runs.
    expect(await d.runDue()).toEqual([])
    // Each due pass (driven by the clock, like the scheduler) makes one more attempt.
    for (let i = 0; i < RETRY_MINUTES.length; i++) {
      clock.set(new Date(clock.now().getTime() + RETRY_MINUTES[i] * 60_000))
      const ran = await d.runDue()
      expect(ran.map((r) => r.kind).sort()).toEqual(['command', 'webhook'])
    }
    runs = (await d.runs(orderId, { limit: 10, offset: 0 })).items
    expect(command()).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, nextAttemptAt: null })
    expect(webhook()).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, nextAttemptAt: null })
    expect(webhook().history.map((h) => h.startedAt)).toEqual([
      '2027-05-26 10:00:00',
      '2027-05-26 10:01:00',
      '2027-05-26 10:06:00',
      '2027-05-26 10:36:00',
      '2027-05-26 12:36:00',
      '2027-05-27 00:36:00'
    ])
    expect(started.toISOString()).toBe('2027-05-26T10:00:00.000Z')
    const last = await events(key, `?type=deploy.failed&order_id=${orderId}&limit=1`)
    expect(last.events[0].message).toContain('no more attempts')
    expect(last.events[0].data).toMatchObject({ gave_up: true, attempt: 6 })
    clock.advanceDays(1)
    expect(await d.runDue()).toEqual([])

    // The certificate and the order are as the issuance left them.
    const after = (await s.request<{ order: Body }>('GET', `/orders/${orderId}`, { key })).body.order
    expect(after).toEqual(before)
    expect(readFileSync(join(dir, 'fullchain.pem'), 'utf8')).toBe(leaf.certificatePem + leaf.chainPem)
  })

  it('a receiver that is down for a moment gets the same delivery again and succeeds', async () => {
    const { orderId } = await placeOrder('retry.example.test')
    const d = s.service.deploys
    const hook = await d.addTarget(orderId, { kind: 'webhook', url: receiver.url })
    receiver.secret = hook.secret?.value as string
    receiver.answers = [503]
    const before = receiver.deliveries.length
    const leaf = await issue('retry.example.test')
    await d.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    await d.idle()
    expect((await d.runs(orderId, { limit: 1, offset: 0 })).items[0]).toMatchObject({
      status: 'pending',
      lastError: 'receiver answered 503; only 2xx counts as delivered'
    })
    clock.set(new Date(clock.now().getTime() + 60_000))
    await d.runDue()
    const run = (await d.runs(orderId, { limit: 1, offset: 0 })).items[0]
    expect(run).toMatchObject({ status: 'succeeded', attempts: 2 })
    expect(run.history.map((h) => h.responseCode)).toEqual([503, 200])
    const got = receiver.deliveries.slice(before)
    expect(got.map((g) => [g.body.delivery, g.body.attempt, g.signatureValid])).toEqual([
      [`run-${run.id}`, 1, true],
      [`run-${run.id}`, 2, true]
    ])
  })

  it('a due pass running while the folders are still being written leaves the command to run after them', async () => {
    const { orderId, key } = await placeOrder('race.example.test')
    const d = s.service.deploys
    await d.addTarget(orderId, { kind: 'folder', path: join(work, 'race'), layout: 'nginx' })
    await d.addTarget(orderId, {
      kind: 'command',
      command: 'test -s "$CERTDESK_KEY_FILE" && echo key present',
      timeoutSeconds: 10
    })
    const leaf = await issue('race.example.test')
    slowKeys.add(leaf.serial)
    await d.certificateStored({
      orderId,
      trigger: 'reissued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    // The scheduler's due pass comes along while the folder is still being written.
    const concurrent = await d.runDue()
    expect(concurrent.filter((r) => r.orderId === orderId && r.kind === 'command')).toEqual([])
    await d.idle()
    const runs = (await d.runs(orderId, { limit: 10, offset: 0 })).items
    expect(runs.map((r) => [r.kind, r.status, r.attempts])).toEqual([
      ['command', 'succeeded', 1],
      ['folder', 'succeeded', 1]
    ])
    expect(runs[0].history[0].output).toBe('key present\n')
    expect((await events(key, `?type=deploy.failed&order_id=${orderId}`)).pagination.total).toBe(0)
  })

  it("does not hand CertDesk's own environment (the keychain password) to a command", async () => {
    const { orderId } = await placeOrder('env.example.test')
    const d = s.service.deploys
    await d.addTarget(orderId, { kind: 'command', command: 'env | sort', timeoutSeconds: 10 })
    const leaf = await issue('env.example.test')
    process.env.CERTDESK_KEYRING_PASSWORD = 'keyring-password-never-in-sqlite'
    try {
      await d.certificateStored({
        orderId,
        trigger: 'issued',
        certificatePem: leaf.certificatePem,
        chainPem: leaf.chainPem
      })
      await d.idle()
    } finally {
      delete process.env.CERTDESK_KEYRING_PASSWORD
    }
    const output = (await d.runs(orderId, { limit: 1, offset: 0 })).items[0].history[0].output as string
    expect(output).toContain(`CERTDESK_ORDER_ID=${orderId}`)
    expect(output).toContain('PATH=')
    expect(output).not.toContain('keyring-password-never-in-sqlite')
    expect(output).not.toContain('CERTDESK_KEYRING_PASSWORD')
  })

  it('stops a command at its time limit and keeps what it printed', async () => {
    const { orderId } = await placeOrder('slow.example.test')
    const d = s.service.deploys
    const marker = join(work, 'slow-finished')
    await d.addTarget(orderId, {
      kind: 'command',
      command: `echo started; sleep 20; touch '${marker}'`,
      timeoutSeconds: 1
    })
    const leaf = await issue('slow.example.test')
    // The hook returns at once: issuance never waits for a deploy.
    const t0 = performance.now()
    await d.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    expect(performance.now() - t0).toBeLessThan(500)
    expect((await d.runs(orderId, { limit: 1, offset: 0 })).items[0].attempts).toBe(0)
    await d.idle()
    const run = (await d.runs(orderId, { limit: 1, offset: 0 })).items[0]
    expect(run).toMatchObject({ status: 'pending', lastError: 'command stopped after its time limit of 1 s' })
    expect(run.history[0].output).toContain('started')
    expect(existsSync(marker)).toBe(false)
  })

  it('refuses bad targets with a clear message and creates nothing', async () => {
    const d = s.service.deploys
    const orderId = 1
    const count = async () =>
      ((await s.service.ctx.store.get('SELECT COUNT(*) AS n FROM deploy_targets')) as { n: number }).n
    const n = await count()
    await expect(d.addTarget(orderId, { kind: 'folder', path: 'relative/dir' })).rejects.toThrow(
      'could not add folder target: path must be an absolute folder path'
    )
    await expect(d.addTarget(orderId, { kind: 'folder', path: '/tmp/x', layout: 'lighttpd' as never })).rejects.toThrow(
      'layout must be one of nginx, apache, haproxy, iis'
    )
    await expect(d.addTarget(orderId, { kind: 'command', command: '  ' })).rejects.toThrow(
      'could not add command target: command is empty'
    )
    await expect(d.addTarget(orderId, { kind: 'command', command: 'true', timeoutSeconds: 0 })).rejects.toThrow(
      'timeout must be 1 to 600 seconds'
    )
    await expect(d.addTarget(orderId, { kind: 'webhook', url: 'ftp://example.test/' })).rejects.toThrow(
      'url must be http:// or https://'
    )
    await expect(d.addTarget(orderId, { kind: 'webhook', url: 'not a url' })).rejects.toThrow('url is not a URL')
    await expect(d.addTarget(9999, { kind: 'command', command: 'true' })).rejects.toThrow('order 9999 not found')
    expect(await count()).toBe(n)
  })
})
