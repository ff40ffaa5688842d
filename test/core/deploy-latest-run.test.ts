/**
 * The newest run of each deploy target, as the order's Deploy panel shows it, however many runs
 * the order has: a target that last ran before another target's hundredth run still shows it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHandlers } from '../../src-main/app/handlers'
import { deployTargetViews, latestRunPerTarget } from '../../src-main/core/deploy/deploy-views'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'

let dataDir: string
let service: Service

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-runs-'))
  service = await openService({ dataDir })
})
afterAll(async () => {
  await service?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Records a finished run, as the deploy queue leaves it. */
async function run(targetId: number, orderId: number, serial: string, status: 'succeeded' | 'failed'): Promise<void> {
  await service.ctx.store.run(
    `INSERT INTO deploy_runs (target_id, order_id, serial, certificate_pem, chain_pem, valid_from, valid_till,
         trigger, status, attempts, created_at, updated_at)
       VALUES (?, ?, ?, '', '', '2026-05-01 00:00:00', '2026-11-17 23:59:59', 'manual', ?, 1, ?, ?)`,
    targetId,
    orderId,
    serial,
    status,
    '2026-05-01 00:00:00',
    '2026-05-01 00:00:00'
  )
}

describe('the latest deploy run per target', () => {
  it('is right for any number of runs', async () => {
    const r = await service.resellers.create({ name: 'Busy', email: 'busy@example.test', groupId: 1 })
    await service.ledger.topUp(r.id, 100_000, 'credit')
    const order = (
      await service.orders.create(
        await service.resellers.get(r.id),
        { productId: 2, domain: 'busy.example.test' },
        'credit'
      )
    ).order
    const quiet = (await service.deploys.addTarget(order.id, { kind: 'folder', path: '/srv/quiet' })).target
    const busy = (await service.deploys.addTarget(order.id, { kind: 'folder', path: '/srv/busy' })).target
    const idle = (await service.deploys.addTarget(order.id, { kind: 'folder', path: '/srv/idle' })).target
    await run(quiet.id, order.id, 'AA01', 'failed')
    await run(quiet.id, order.id, 'AA02', 'succeeded')
    for (let i = 0; i < 120; i++) await run(busy.id, order.id, `BB${i}`, i % 2 ? 'succeeded' : 'failed')

    const latest = await latestRunPerTarget(service.ctx, service.deploys, order.id)
    expect(latest.get(quiet.id)?.serial).toBe('AA02')
    expect(latest.get(busy.id)?.serial).toBe('BB119')
    expect(latest.has(idle.id)).toBe(false)

    const views = await deployTargetViews(service.ctx, service.deploys, order.id)
    expect(views.map((t) => [t.path, t.lastRun?.serial ?? null, t.lastRun?.status ?? null])).toEqual([
      ['/srv/quiet', 'AA02', 'succeeded'],
      ['/srv/busy', 'BB119', 'succeeded'],
      ['/srv/idle', null, null]
    ])
    // What the Deploy panel receives over the bridge.
    const app = createHandlers(service, {
      transport: 'electron',
      listenerUrl: () => 'http://127.0.0.1:1',
      apiVersion: '3.0'
    })
    const listed = await app.listDeployTargets(r.id, order.id)
    expect(listed.find((t) => t.id === quiet.id)?.lastRun?.serial).toBe('AA02')
  })
})
