import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { certdesk, certdeskAsync } from '../support/cli'
import { createTestCa, type TestLeaf } from '../support/test-ca'
import { startReceiver, unreachableUrl, type Receiver } from '../support/webhook-receiver'

type Body = Record<string, unknown>
const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-deploy-cli-'))
const work = mkdtempSync(join(tmpdir(), 'certdesk-deploy-cli-files-'))
const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])
/** For commands that deliver to the receiver in this process. */
const adminAsync = (...args: string[]) => certdeskAsync(['admin', '--data-dir', dataDir, ...args])
let service: Service
let receiver: Receiver
let leaf: TestLeaf
let orderId: number

beforeAll(async () => {
  service = await openService({ dataDir })
  const r = await service.resellers.create({ name: 'CLI Hosting', email: 'ops@cli.test', groupId: 1 })
  await service.ledger.topUp(r.id, 100_00)
  orderId = (
    await service.orders.create(await service.resellers.get(r.id), { productId: 2, domain: 'cli.example.test' })
  ).order.id
  receiver = await startReceiver()
  leaf = await (await createTestCa()).issue('cli.example.test', new Date(), 200)
  // The key was generated in the app, so CertDesk keeps it and the folder gets it.
  await service.keyVault.store(r.id, orderId, leaf.privateKeyPem)
})
afterAll(async () => {
  await service.deploys.idle()
  await service.close()
  await receiver.close()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe('certdesk admin deploy', () => {
  it('adds targets once; every later certificate lands on them; deploy run re-runs them by hand', async () => {
    const dir = join(work, 'haproxy')
    const folder = admin('deploy', 'add', '--order', String(orderId), '--folder', dir, '--layout', 'haproxy')
    expect(folder.code).toBe(0)
    expect(folder.json.target).toMatchObject({
      kind: 'folder',
      order_id: orderId,
      config: { path: dir, layout: 'haproxy', pfx: false }
    })
    const marker = join(work, 'reloaded.txt')
    expect(
      admin(
        'deploy',
        'add',
        '--order',
        String(orderId),
        '--command',
        `echo "$CERTDESK_TRIGGER $CERTDESK_COMBINED_FILE" >> '${marker}'`,
        '--timeout',
        '10'
      ).code
    ).toBe(0)
    const hook = admin('deploy', 'add', '--order', String(orderId), '--webhook', receiver.url)
    expect(hook.code).toBe(0)
    expect(hook.json.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    receiver.secret = hook.json.webhook_secret as string
    const hookId = (hook.json.target as Body).id as number
    expect(admin('deploy', 'secret', '--target', String(hookId)).json.secret).toBe(receiver.secret)

    // Before any certificate there is nothing to deploy.
    const early = admin('deploy', 'run', '--order', String(orderId))
    expect(early.code).toBe(1)
    expect(early.json.error).toMatch(/^could not deploy order ORD-\d{4}-\d{6}: it has no certificate yet$/)

    // The certificate code stores a certificate: the targets run without anyone asking.
    await service.deploys.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    await service.deploys.idle()
    expect(readFileSync(join(dir, 'haproxy.pem'), 'utf8')).toBe(
      leaf.certificatePem + leaf.chainPem + leaf.privateKeyPem
    )
    expect(readFileSync(marker, 'utf8')).toBe(`issued ${join(dir, 'haproxy.pem')}\n`)
    expect(receiver.deliveries.length).toBe(1)

    // Someone deleted the files: one command puts everything back.
    rmSync(dir, { recursive: true, force: true })
    const rerun = await adminAsync('deploy', 'run', '--order', String(orderId))
    expect(rerun.code, JSON.stringify(rerun.json) + rerun.stderr).toBe(0)
    expect((rerun.json.runs as Body[]).map((r) => [r.kind, r.trigger, r.status])).toEqual([
      ['folder', 'manual', 'succeeded'],
      ['command', 'manual', 'succeeded'],
      ['webhook', 'manual', 'succeeded']
    ])
    expect(existsSync(join(dir, 'fullchain.pem'))).toBe(true)
    expect(readFileSync(marker, 'utf8').split('\n')[1]).toBe(`manual ${join(dir, 'haproxy.pem')}`)
    expect(receiver.deliveries[1]).toMatchObject({
      signatureValid: true,
      body: expect.objectContaining({ type: 'certificate.deployed' })
    })

    const list = admin('deploy', 'list', '--order', String(orderId))
    expect((list.json.targets as Body[]).map((t) => t.kind)).toEqual(['folder', 'command', 'webhook'])
    expect((list.json.recent_runs as Body[]).length).toBe(6)
    const log = admin('events', 'list', '--order', String(orderId), '--type', 'deploy.succeeded', '--limit', '4')
    expect(log.json.pagination).toEqual({ total: 6, limit: 4, offset: 0 })
  })

  it('reports a failing webhook, retries it as of a later time, and removes it with its secret', async () => {
    const down = admin('deploy', 'add', '--order', String(orderId), '--webhook', await unreachableUrl())
    const id = (down.json.target as Body).id as number
    const run = await adminAsync('deploy', 'run', '--order', String(orderId))
    expect(run.code).toBe(1)
    const failed = (run.json.runs as Body[]).find((r) => r.target_id === id) as Body
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 })
    expect(failed.last_error).toMatch(/ECONNREFUSED/)
    // Nothing is due yet in real time; as of tomorrow the retry runs (and fails again).
    const now = admin('deploy', 'retry')
    expect(now.json).toMatchObject({ ran: 0, success: true })
    const tomorrow = new Date(Date.parse((failed.next_attempt_at as string) + 'Z') + 86_400_000)
      .toISOString()
      .slice(0, 10)
    const retried = await adminAsync('deploy', 'retry', '--as-of', tomorrow)
    expect(retried.code).toBe(1)
    expect(retried.json).toMatchObject({ ran: 1, success: false })
    expect((retried.json.runs as Body[])[0]).toMatchObject({ target_id: id, attempts: 2, status: 'pending' })

    const removed = admin('deploy', 'remove', '--target', String(id))
    expect(removed.code).toBe(0)
    expect((removed.json.target as Body).removed_at).not.toBeNull()
    expect(admin('deploy', 'secret', '--target', String(id)).code).toBe(1)
    expect(admin('deploy', 'retry', '--as-of', '2030-01-01').json).toMatchObject({ ran: 0 })
    expect((admin('deploy', 'list', '--order', String(orderId)).json.targets as Body[]).length).toBe(3)
  })

  it('refuses bad input with a clear message and a non-zero exit', () => {
    const none = admin('deploy', 'add', '--order', String(orderId))
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('give exactly one of --folder, --command or --webhook')
    const relative = admin('deploy', 'add', '--order', String(orderId), '--folder', 'certs/here')
    expect(relative.code).toBe(1)
    expect(relative.json).toEqual({
      success: false,
      error: 'could not add folder target: path must be an absolute folder path'
    })
    expect(
      admin('deploy', 'add', '--order', String(orderId), '--folder', '/tmp/x', '--layout', 'caddy').json.error
    ).toBe('could not add folder target: layout must be one of nginx, apache, haproxy, iis')
    expect(admin('deploy', 'add', '--order', String(orderId), '--command', 'true', '--timeout', 'soon').code).toBe(2)
    expect(admin('deploy', 'run', '--order', '999').json.error).toBe('order 999 not found')
    expect(admin('events', 'list', '--type', 'nope').code).toBe(2)
    expect((admin('deploy', 'list', '--order', String(orderId)).json.targets as Body[]).length).toBe(3)
  })
})
