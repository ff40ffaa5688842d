/**
 * Backup and restore as a user meets them: `certdesk admin backup` taken while a storm of
 * orders runs against `certdesk serve`, restored into a new data dir and checked (integrity,
 * the ledger summing to every balance, every order the backup saw, API keys working again once
 * the keychain secrets are imported); a damaged, foreign or newer file is refused with a clear
 * message; the secrets file refuses a wrong passphrase and reveals nothing in clear.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openService } from '../support/engine'
import { CLI } from '../support/cli'
import { admin, audit, call, Database, makeReseller, orderStorm, report, startServe, type Served } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-backup-'))
const dataDir = join(base, 'data')
const backup = join(base, 'certdesk-backup.backup')
const servers: Served[] = []
afterAll(async () => {
  for (const s of servers) await s.kill9()
  rmSync(base, { recursive: true, force: true })
})

const PASSPHRASE = 'a long passphrase for the backup disk'
const withPassphrase = (p: string) => ({ ...process.env, CERTDESK_SECRETS_PASSPHRASE: p })
const runAsync = (args: string[]) =>
  new Promise<{ code: number; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'admin', ...args], { env: process.env })
    let out = ''
    let err = ''
    child.stdout?.on('data', (d: Buffer) => (out += d))
    child.stderr?.on('data', (d: Buffer) => (err += d))
    child.on('exit', (code) => resolve({ code: code ?? -1, out, err }))
  })

describe('certdesk admin backup and restore', () => {
  it('takes a consistent backup during an order storm that restores with whole books and working keys', async () => {
    const r = makeReseller(dataDir, 'Backup Hosting', 100_000)
    const s = await startServe(dataDir)
    servers.push(s)
    // The storm runs while the backup copies the store page by page.
    const storm = orderStorm(s.url, r.key, 'backup', 100, 8)
    await new Promise((res) => setTimeout(res, 300))
    const taken = await runAsync(['--data-dir', dataDir, 'backup', '--out', backup])
    const done = await storm
    expect(taken.code, taken.err).toBe(0)
    expect(JSON.parse(taken.out)).toMatchObject({
      success: true,
      file: backup,
      store_version: expect.any(Number),
      authenticated_with: 'keychain'
    })
    expect(taken.err).toMatch(/backup 100%/)
    expect(statSync(backup).mode & 0o777).toBe(0o600)
    expect(done.failed.size).toBe(0)

    // The secrets travel in their own file, encrypted under a passphrase.
    const secretsFile = join(base, 'secrets.json')
    const exported = admin(dataDir, ['secrets', 'export', '--out', secretsFile], withPassphrase(PASSPHRASE))
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.json.secrets).toBeGreaterThanOrEqual(1)
    expect(readFileSync(secretsFile, 'utf8')).not.toContain(r.key)
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600)

    const restoredDir = join(base, 'restored')
    const restored = admin(restoredDir, ['restore', '--from', backup])
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.json).toMatchObject({ success: true, integrity: 'ok', resellers: 1 })
    // A consistent snapshot: integrity, every balance equals its ledger, every order has its debit and invoice.
    expect(audit(restoredDir)).toEqual([])
    const db = new Database(join(restoredDir, 'certdesk.sqlite'), { readonly: true })
    const restoredOrders = (db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }).n
    db.close()
    expect(restoredOrders).toBeGreaterThan(0)
    expect(restoredOrders).toBeLessThanOrEqual(done.ok.size)

    // A new machine: the keychain has none of this data dir's secrets (same install id, same
    // keychain service: they are removed here), so the desktop's "copy API key" cannot work.
    const fresh = await openService({ dataDir: restoredDir })
    try {
      for (const item of (await fresh.ctx.secrets.list?.()) ?? []) await fresh.ctx.secrets.delete(item.name)
      await expect(fresh.resellers.revealApiKey(1)).rejects.toThrow(/not in the OS keychain/)
    } finally {
      await fresh.close()
    }

    // The wrong passphrase changes nothing; the right one brings the API key back.
    const wrong = admin(
      restoredDir,
      ['secrets', 'import', '--from', secretsFile],
      withPassphrase('not the passphrase at all')
    )
    expect(wrong.code).toBe(1)
    expect(wrong.json.error).toBe('could not import the secrets file: the passphrase is wrong or the file was changed')
    const imported = admin(restoredDir, ['secrets', 'import', '--from', secretsFile], withPassphrase(PASSPHRASE))
    expect(imported.code, imported.stderr).toBe(0)
    const back = await openService({ dataDir: restoredDir })
    try {
      expect(await back.resellers.revealApiKey(1)).toBe(r.key)
    } finally {
      await back.close()
    }
    await s.stop()
    servers.pop()
    const again = await startServe(restoredDir)
    servers.push(again)
    const balance = await call(again.url, 'GET', '/balance', { key: r.key })
    expect(balance.status).toBe(200)
    // A new order on the restored store is charged from the restored balance.
    expect((await orderStorm(again.url, r.key, 'after-restore', 3, 1)).failed.size).toBe(0)
    expect(audit(restoredDir)).toEqual([])
    report({
      fault: 'backup during an order storm, restored and checked',
      tried: done.tried + 4,
      errors: done.failed.size,
      lost: audit(restoredDir).length
    })
  }, 120_000)

  it('refuses a damaged, foreign or newer file, and a data dir that already holds a store', () => {
    const damaged = join(base, 'damaged.sqlite')
    copyFileSync(backup, damaged)
    const bytes = readFileSync(damaged)
    // Overwrite pages in the middle of the file (b-tree pages of the orders and ledger).
    bytes.fill(0x5a, 8192, Math.min(bytes.length - 4096, 8192 * 6))
    writeFileSync(damaged, bytes)
    const r1 = admin(join(base, 'r1'), ['restore', '--from', damaged])
    expect(r1.code).toBe(1)
    expect(r1.json.error).toMatch(
      /^could not restore .*damaged.sqlite: it is not the file CertDesk wrote \(its authentication code does not match: it was changed or damaged\)/
    )

    const text = join(base, 'notes.txt')
    writeFileSync(text, 'not a store')
    const r2 = admin(join(base, 'r2'), ['restore', '--from', text])
    expect(r2.json.error).toMatch(/it is not a CertDesk backup/)

    // A bare store of a newer CertDesk, accepted without authentication: its version still decides.
    const newer = join(base, 'newer.sqlite')
    const live = new Database(join(dataDir, 'certdesk.sqlite'), { readonly: true })
    live.prepare('VACUUM INTO ?').run(newer)
    live.close()
    const db = new Database(newer)
    db.pragma('user_version = 9999')
    db.close()
    const r3 = admin(join(base, 'r3'), ['restore', '--from', newer, '--accept-unauthenticated'])
    expect(r3.code).toBe(1)
    expect(r3.json.error).toMatch(/was made by a newer CertDesk \(store version 9999; this one knows up to \d+\)/)

    // A backup never writes over a file: not an older backup, not the live store itself.
    for (const out of [backup, join(dataDir, 'certdesk.sqlite')]) {
      const over = admin(dataDir, ['backup', '--out', out])
      expect(over.code).toBe(1)
      expect(over.json.error).toMatch(/the file exists; choose a new name/)
    }
    expect(audit(dataDir)).toEqual([])

    const r4 = admin(dataDir, ['restore', '--from', backup])
    expect(r4.code).toBe(1)
    expect(r4.json.error).toMatch(/already holds a store/)
    // Nothing was left behind by a refusal.
    for (const d of ['r1', 'r2', 'r3'])
      expect(spawnSync('ls', ['-A', join(base, d)], { encoding: 'utf8' }).stdout.trim()).not.toMatch(/certdesk\.sqlite/)
  }, 120_000)

  it('never takes the passphrase from the command line, and refuses a short one', () => {
    const out = join(base, 'short.json')
    const short = admin(dataDir, ['secrets', 'export', '--out', out], withPassphrase('short'))
    expect(short.code).toBe(1)
    expect(short.json.error).toMatch(/at least 12 characters/)
    const r = spawnSync(
      process.execPath,
      [CLI, 'admin', '--data-dir', dataDir, 'secrets', 'export', '--out', out, '--passphrase', 'x'],
      {
        encoding: 'utf8'
      }
    )
    expect(r.status).toBe(2)
  }, 120_000)
})
