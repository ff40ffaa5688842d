/**
 * The settings screen's backup through the bridge: `startBackup` answers at once, `backupProgress`
 * climbs to 100 while the store stays writable, and the file restores with whole books under the
 * data dir's keychain backup key. A
 * relative or hostile folder is refused with a 400 and nothing written.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { restoreStore } from '../../src-main/core/backup/backup'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'
import { manualClock } from '../support/clock'
import { audit } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-backup-ui-'))
let service: Service
let handlers: AppHandlers

beforeAll(async () => {
  service = await openService({ dataDir: join(base, 'data'), clock: manualClock('2026-11-21T10:00:00Z').clock })
  handlers = createHandlers(service, {
    transport: 'browser',
    listenerUrl: () => 'http://127.0.0.1:1',
    apiVersion: '3.0'
  })
  const r = await service.resellers.create({ name: 'UI Backup', email: 'ui@example.test', groupId: 1 })
  await service.ledger.topUp(r.id, 10_000_000)
  // Enough rows for a copy in several steps.
  const reseller = await service.resellers.get(r.id)
  for (let i = 0; i < 400; i++)
    await service.orders.create(reseller, { productId: 1, domain: `ui-${i}.example.com`, period: 12 })
})
afterAll(async () => {
  await service?.close()
  rmSync(base, { recursive: true, force: true })
})

const call = async (method: 'startBackup' | 'backupProgress', ...args: unknown[]) => callHandler(handlers, method, args)

describe('backup from the settings screen', () => {
  it('reports progress to 100 % and writes a file that restores with whole books', async () => {
    const folder = join(base, 'backups')
    const started = await call('startBackup', folder)
    expect(started.status).toBe(200)
    expect(started.body).toMatchObject({
      success: true,
      result: { state: 'running', file: join(folder, 'certdesk-backup-20261121-100000.backup') }
    })
    // A second start while one runs is refused.
    expect((await call('startBackup', folder)).status).toBe(409)
    // The store stays writable during the copy.
    await service.ledger.topUp(1, 100)
    const seen: number[] = []
    for (let i = 0; i < 200; i++) {
      const p = (await call('backupProgress')).body as { result: { state: string; percent: number } }
      seen.push(p.result.percent)
      if (p.result.state !== 'running') break
      await new Promise((r) => setTimeout(r, 5))
    }
    const done = (await call('backupProgress')).body as { result: { state: string; percent: number; file: string } }
    expect(done.result).toMatchObject({ state: 'done', percent: 100 })
    expect(seen.every((p, i) => i === 0 || p >= seen[i - 1])).toBe(true)
    // Authenticated with this data dir's key in the keychain, and restorable with it.
    const restored = await restoreStore(done.result.file, join(base, 'restored'), {
      keychainFor: () => service.ctx.secrets,
      passphrase: () => Promise.reject(new Error('a keychain backup needs no passphrase'))
    })
    expect(restored).toMatchObject({ integrity: 'ok', orders: 400, authenticated_with: 'keychain' })
    expect(audit(join(base, 'restored'))).toEqual([])
  }, 120_000)

  it('refuses a relative or hostile folder with a 400 and writes nothing', async () => {
    for (const folder of ['backups', '../../etc', `${base}/x\u0000y`]) {
      const a = await call('startBackup', folder)
      expect(a.status, folder).toBe(400)
      expect((a.body as { error: string }).error).toMatch(/^could not (start a backup|create the backup folder)/)
    }
    expect(existsSync(join(base, 'x'))).toBe(false)
    expect(readdirSync(base).sort()).toEqual(['backups', 'data', 'restored'])
  }, 120_000)
})
