/**
 * kill -9 right after a failed reload put the previous files back, before the attempt was
 * recorded: the folder's run still says "succeeded" for the new certificate while the folder
 * holds the previous one. The next attempt notices, reloads nothing, and writes the new files
 * again with the retry; once the reload works, the new certificate is on disk and nothing of
 * the previous set is left. Without that check the new certificate would never be written again
 * and a fixed reload would load the previous one for good.
 */
import { spawn } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../../src-main/core/service'
import { CLI } from '../support/cli'
import { manualClock } from '../support/clock'
import { newKeyPem } from '../support/csr'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { report } from './support'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-restore-crash-'))
const work = mkdtempSync(join(tmpdir(), 'certdesk-restore-crash-files-'))
const folder = join(work, 'shop')
const script = join(work, 'reload.sh')
let web: WebServer
let dns: DnsServer
let orderId: number
let reissueDay: string

/**
 * `certdesk admin …` in another process, awaited without blocking this one: the validation
 * servers of this test answer the re-check an automatic reissue makes.
 */
function cli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env
): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], { env })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  return new Promise((resolve) =>
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr })
    })
  )
}
const held = (): string => new X509Certificate(readFileSync(join(folder, 'cert.pem'))).serialNumber.toUpperCase()
type Run = { kind: string; status: string; serial: string; last_error: string | null; next_attempt_at: string | null }
const runs = async (): Promise<Run[]> => {
  const r = await cli(['deploy', 'list', '--order', String(orderId)])
  expect(r.status, r.stderr).toBe(0)
  return (JSON.parse(r.stdout) as { recent_runs: Run[] }).recent_runs
}

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  const clock = manualClock('2026-12-01T10:00:00Z')
  const service = await openService({ dataDir, clock: clock.clock })
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    const reseller = await service.resellers.create({ name: 'Crash', email: 'ops@crash.test', groupId: 1 })
    await service.ledger.topUp(reseller.id, 100_000)
    orderId = (
      await service.orders.create(await service.resellers.get(reseller.id), {
        productId: 2,
        domain: 'crash.example.test',
        period: 36
      })
    ).order.id
    const publish = await configureOverHttp(service, web, reseller.id, orderId, 'crash.example.test', newKeyPem())
    publish()
    expect((await service.certificates.status(reseller.id, orderId)).order.status).toBe('completed')
    await service.deploys.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    expect((await service.deploys.runOrder(orderId)).map((r) => r.status)).toEqual(['succeeded'])
    writeFileSync(script, 'exit 1\n')
    await service.deploys.addTarget(orderId, { kind: 'command', command: `. '${script}'`, timeoutSeconds: 30 })
    const row = (await service.ctx.store.get('SELECT next_reissue_at FROM orders WHERE id = ?', orderId)) as {
      next_reissue_at: string
    }
    reissueDay = row.next_reissue_at
  } finally {
    await service.close()
  }
})
afterAll(async () => {
  await Promise.all([web?.close(), dns?.close()])
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe('kill -9 after the previous files were put back', () => {
  it('the next attempt writes the new files again, and a working reload takes them', async () => {
    const previous = held()
    // The automatic reissue deploys at once; its reload fails and the process dies after the restore.
    const crashed = await cli(['scheduler', 'run', '--as-of', reissueDay], {
      ...process.env,
      CERTDESK_CRASH_AT: 'deploy:restored'
    })
    expect(
      crashed.signal,
      `the deploy did not reach crashPoint("deploy:restored"): ${crashed.stdout} ${crashed.stderr}`
    ).toBe('SIGKILL')
    expect(held()).toBe(previous)
    const [command, written] = await runs()
    expect([written.kind, written.status, command.kind, command.status]).toEqual([
      'folder',
      'succeeded',
      'command',
      'running'
    ])
    const reissued = written.serial
    expect(reissued).not.toBe(previous)

    // Past the crashed claim: the reload is not run on the previous files; the folder is due again.
    const retried = await cli(['deploy', 'retry', '--as-of', `${reissueDay} 00:30:00`])
    expect(retried.status).toBe(1)
    const [command2, written2] = await runs()
    expect(command2.last_error).toBe(
      `command not run: ${folder} no longer holds certificate ${reissued}; it is written again with the next attempt`
    )
    expect(written2).toMatchObject({ status: 'pending', next_attempt_at: command2.next_attempt_at })
    expect(held()).toBe(previous)

    // The reload is fixed; the retry writes the new set and reloads it.
    writeFileSync(script, 'true\n')
    const fixed = await cli(['deploy', 'retry', '--as-of', command2.next_attempt_at as string])
    expect(fixed.status, fixed.stdout).toBe(0)
    expect((await runs()).slice(0, 2).map((r) => [r.kind, r.status])).toEqual([
      ['command', 'succeeded'],
      ['folder', 'succeeded']
    ])
    expect(held()).toBe(reissued)
    expect(readdirSync(folder).filter((n) => n.startsWith('.'))).toEqual([])
    report({ fault: 'kill -9 after a failed reload put the previous files back', tried: 1, errors: 1, lost: 0 })
  }, 120_000)
})
