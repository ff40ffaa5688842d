/**
 * kill -9 at the two places a crash hurts most: between signing a certificate and storing it,
 * and between the files of a deploy. The process kills itself at a named crash point
 * (CERTDESK_CRASH_AT, src-main/core/crash-points.ts). After a restart the order completes with
 * exactly one stored certificate, nothing is charged twice, and the deploy folder holds one
 * consistent set (cert.pem + chain.pem = fullchain.pem, and cert.pem is a stored certificate).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../support/engine'
import { CLI } from '../support/cli'
import { newKeyPem } from '../support/csr'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { audit, Database, DB_FILE, report, sleep, startServe, type Served } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-crash-'))
const dataDir = join(base, 'data')
const folder = join(base, 'deploy')
let web: WebServer
let dns: DnsServer
let server: Served | undefined
let orderId: number
let resellerId: number

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  const service = await openService({ dataDir })
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    const r = await service.resellers.create({ name: 'Crash Hosting', email: 'crash@example.test', groupId: 1 })
    resellerId = r.id
    await service.ledger.topUp(r.id, 50_000)
    orderId = (
      await service.orders.create(await service.resellers.get(r.id), {
        productId: 2,
        domain: 'crash.example.com',
        period: 12
      })
    ).order.id
    // The validation file is up: the next pass of the scheduler finds it valid and issues.
    ;(await configureOverHttp(service, web, r.id, orderId, 'crash.example.com', newKeyPem()))()
  } finally {
    await service.close()
  }
})
afterAll(async () => {
  await server?.kill9()
  await Promise.all([web?.close(), dns?.close()])
  rmSync(base, { recursive: true, force: true })
})

const read = <T>(sql: string, ...args: unknown[]): T => {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return db.prepare(sql).get(...args) as T
  } finally {
    db.close()
  }
}
const orderState = () =>
  read<{ status: string; certs: number; debits: number; balance: number }>(
    `SELECT o.status, (SELECT COUNT(*) FROM certificates c WHERE c.order_id = o.id) AS certs,
       (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debits,
       (SELECT credit_balance_cents FROM resellers WHERE id = ?) AS balance
     FROM orders o WHERE o.id = ?`,
    resellerId,
    orderId
  )
const storedCerts = (): string[] => {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return (
      db.prepare('SELECT certificate_pem AS pem FROM certificates WHERE order_id = ? ORDER BY id').all(orderId) as {
        pem: string
      }[]
    ).map((r) => r.pem)
  } finally {
    db.close()
  }
}

/** The folder holds one set: the full chain is its own cert and chain, and the cert is a stored one. */
function folderProblems(): string[] {
  const f = (n: string) => readFileSync(join(folder, n), 'utf8')
  if (!existsSync(join(folder, 'cert.pem'))) return ['no cert.pem']
  const bad: string[] = []
  const norm = (s: string) => (s.endsWith('\n') ? s : `${s}\n`)
  if (f('fullchain.pem') !== norm(f('cert.pem')) + norm(f('chain.pem')))
    bad.push('fullchain.pem is not cert.pem + chain.pem')
  if (!storedCerts().some((pem) => norm(pem) === norm(f('cert.pem')))) bad.push('cert.pem is not a stored certificate')
  return bad
}

const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    encoding: 'utf8',
    env,
    timeout: 60_000
  })

async function waitFor<T>(what: string, probe: () => T | null, ms = 30_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(200)) {
    const v = probe()
    if (v) return v
  }
  throw new Error(`gave up waiting for ${what}`)
}

describe('a crash between signing and storing a certificate', () => {
  it('leaves the order processing with no certificate, then completes it once on the next start', async () => {
    const before = orderState()
    expect(before).toMatchObject({ status: 'validation_pending', certs: 0, debits: 1 })
    expect(cli(['deploy', 'add', '--order', String(orderId), '--folder', folder]).status).toBe(0)

    // The pass on start finds the validation file, signs, and dies before the store sees it.
    const crashing = await startServe(dataDir, { env: { ...process.env, CERTDESK_CRASH_AT: 'issuance:signed' } })
    await waitFor('the crash', () => !crashing.alive() || null)
    expect(orderState()).toMatchObject({ status: 'processing', certs: 0, debits: 1, balance: before.balance })
    expect(existsSync(join(folder, 'cert.pem'))).toBe(false)

    server = await startServe(dataDir)
    const after = await waitFor('the order to complete', () => {
      const s = orderState()
      return s.status === 'completed' ? s : null
    })
    await waitFor('the deploy', () => existsSync(join(folder, 'fullchain.pem')) || null)
    await server.stop()
    server = undefined
    // Exactly one certificate, charged once, the balance untouched by the crash.
    expect(after).toMatchObject({ certs: 1, debits: 1, balance: before.balance })
    expect(folderProblems()).toEqual([])
    const lost = audit(dataDir)
    expect(lost).toEqual([])
    report({
      fault: 'kill -9 between signing and storing a certificate',
      tried: 2,
      errors: 1,
      lost: lost.length + after.certs - 1
    })
  }, 120_000)
})

describe('a crash between the files of a deploy', () => {
  it('leaves the folder with one consistent set, and the next run writes the new one', async () => {
    // A reissue stored while the folder target is away, so the folder still has the first set.
    const targets = JSON.parse(cli(['deploy', 'list', '--order', String(orderId)]).stdout) as {
      targets: { id: number }[]
    }
    expect(cli(['deploy', 'remove', '--target', String(targets.targets[0].id)]).status).toBe(0)
    const service = await openService({ dataDir })
    try {
      await service.certificates.reissue(resellerId, { orderId })
    } finally {
      await service.close()
    }
    expect(storedCerts()).toHaveLength(2)
    expect(cli(['deploy', 'add', '--order', String(orderId), '--folder', folder]).status).toBe(0)

    const crashed = cli(['deploy', 'run', '--order', String(orderId)], {
      ...process.env,
      CERTDESK_CRASH_AT: 'deploy:between-files'
    })
    // The crash point must be reached: a deploy that never stops between its files proves nothing.
    expect(crashed.signal, 'the deploy did not reach crashPoint("deploy:between-files")').toBe('SIGKILL')
    // Restarted, CertDesk first finishes the set the crash left staged: the folder holds the new set, whole.
    server = await startServe(dataDir)
    await waitFor('the staged set to be finished', () => (folderProblems().length === 0 ? true : null))
    await server.stop()
    server = undefined
    expect(readFileSync(join(folder, 'cert.pem'), 'utf8').trim()).toBe(storedCerts()[1].trim())

    expect(cli(['deploy', 'run', '--order', String(orderId)]).status).toBe(0)
    expect(folderProblems()).toEqual([])
    expect(readFileSync(join(folder, 'cert.pem'), 'utf8').trim()).toBe(storedCerts()[1].trim())
    const state = orderState()
    expect(state).toMatchObject({ status: 'completed', certs: 2, debits: 1 })
    report({ fault: 'kill -9 between the files of a deploy', tried: 2, errors: 1, lost: folderProblems().length })
  }, 120_000)
})
