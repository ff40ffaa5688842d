/**
 * A full disk during an issuance and during a deploy, on real size-limited tmpfs mounts: one for
 * the data dir, one for the deploy folder. An issuance that cannot be stored answers 503 with
 * Retry-After and leaves no certificate row; once there is space the same server issues exactly
 * one. A deploy that cannot be written fails as a recorded run, leaves neither a partial set nor
 * temp files in the folder, and the next run writes the whole set.
 */
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../support/engine'
import { newKeyPem } from '../support/csr'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { admin, audit, call, Database, DB_FILE, isRetryLater, report, sleep, startServe, type Served } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-fullissue-'))
const dataMnt = join(base, 'data-fs')
const deployMnt = join(base, 'deploy-fs')
const dataDir = join(dataMnt, 'data')
const folder = join(deployMnt, 'site')
let web: WebServer
let dns: DnsServer
let server: Served | undefined
let putFile: () => void
let orderId: number
let key: string

const mount = (dir: string, size: string): void => {
  mkdirSync(dir)
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' })
  // Where mounting is not allowed, disk-full.sqlite.test.ts covers the store with libfiu's ENOSPC.
  if (r.status !== 0)
    throw new Error(`could not mount a size-limited tmpfs for the full-disk test (needs root): ${r.stderr}`)
}

/** Fills the file system holding `dir` to the last block; returns the filler to remove. */
function fill(dir: string): string {
  const filler = join(dir, 'filler')
  const fd = openSync(filler, 'w')
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 512]) {
      const chunk = Buffer.alloc(size, 1)
      for (;;) {
        try {
          writeSync(fd, chunk)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break
          throw err
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return filler
}

beforeAll(async () => {
  mount(dataMnt, '24m')
  mount(deployMnt, '1m')
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  const service = await openService({ dataDir })
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    const r = await service.resellers.create({ name: 'Full Issue', email: 'full@example.test', groupId: 1 })
    await service.ledger.topUp(r.id, 50_000)
    key = (await service.resellers.createApiKey(r.id)).key
    orderId = (
      await service.orders.create(await service.resellers.get(r.id), {
        productId: 2,
        domain: 'full.example.com',
        period: 12
      })
    ).order.id
    putFile = await configureOverHttp(service, web, r.id, orderId, 'full.example.com', newKeyPem())
    // The local CA exists before the disk fills (it is made on first use).
    await service.localCa.rootPem()
  } finally {
    await service.close()
  }
  expect(admin(dataDir, ['deploy', 'add', '--order', String(orderId), '--folder', folder]).code).toBe(0)
})
afterAll(async () => {
  await server?.kill9()
  await Promise.all([web?.close(), dns?.close()])
  for (const m of [dataMnt, deployMnt]) spawnSync('umount', ['-l', m])
  rmSync(base, { recursive: true, force: true })
})

const certCount = (): number => {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM certificates WHERE order_id = ?').get(orderId) as { n: number }).n
  } finally {
    db.close()
  }
}

describe('a full disk during an issuance and a deploy', () => {
  it('answers the issuance 503, issues once when space is back, and never leaves a partial deploy', async () => {
    server = await startServe(dataDir)
    let tried = 0
    let errors = 0
    const status = async () => {
      tried++
      return call(server!.url, 'GET', `/ssl/${orderId}`, { key })
    }
    // The data disk fills, then the validation file goes up: the check passes, the store cannot take it.
    const dataFiller = fill(dataMnt)
    putFile()
    const refused = await status()
    errors++
    expect(isRetryLater(refused), JSON.stringify(refused)).toBe(true)
    expect(refused.body?.error).toMatch(/disk is full/)
    expect(certCount()).toBe(0)
    expect(server.alive()).toBe(true)

    // Space is back for the store, but the deploy folder's disk is full now.
    rmSync(dataFiller)
    const deployFiller = fill(deployMnt)
    const issued = await status()
    expect(issued.status, JSON.stringify(issued)).toBe(200)
    expect(issued.body?.status).toBe('completed')
    expect(certCount()).toBe(1)
    // The deploy runs after the certificate is stored; it fails as a recorded run, to be retried.
    interface Run {
      status: string
      attempts: number
      last_error: string | null
      next_attempt_at: string | null
    }
    let run: Run | undefined
    for (let i = 0; i < 100 && !run; i++) {
      const list = admin(dataDir, ['deploy', 'list', '--order', String(orderId)])
      run = (list.json.recent_runs as Run[] | undefined)?.find((r) => r.last_error !== null)
      if (!run) await sleep(100)
    }
    errors++
    expect(run?.status).not.toBe('succeeded')
    expect(run?.next_attempt_at).not.toBeNull()
    expect(run?.last_error).toMatch(/ENOSPC|no space/i)
    // Nothing half-written in the folder: no certificate file, no temp file.
    const left = existsSync(folder) ? readdirSync(folder) : []
    expect(left).toEqual([])

    rmSync(deployFiller)
    tried++
    const again = admin(dataDir, ['deploy', 'run', '--order', String(orderId)])
    expect(again.code, again.stderr).toBe(0)
    const f = (n: string) => readFileSync(join(folder, n), 'utf8')
    expect(f('fullchain.pem')).toBe(f('cert.pem') + f('chain.pem'))
    expect(certCount()).toBe(1)
    const lost = audit(dataDir)
    expect(lost).toEqual([])
    report({
      fault: 'disk full during an issuance and a deploy (tmpfs)',
      tried,
      errors,
      lost: lost.length + certCount() - 1
    })
  }, 120_000)
})
