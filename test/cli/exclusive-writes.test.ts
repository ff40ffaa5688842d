/**
 * Files the admin names on the command line (`secrets export --out`, `ca root --out`,
 * `report expiring --out`) in a folder another local user can write to (/tmp, a shared
 * download folder). Whatever that user planted beforehand, a symbolic link or a file of their
 * own at `<out>.partial` or any other name beside the target, is neither followed nor written:
 * the file elsewhere keeps its bytes, the planted file receives no secret, and the result is a
 * new regular file, 0600, with the whole content, or a clear refusal.
 */
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  lchownSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openService } from '../../src-main/core/service'
import { certdesk } from '../support/cli'

const PASSPHRASE = 'a long passphrase for the backup disk'
/** The user the planted files belong to: not the one CertDesk runs as. */
const NOBODY = 65534

const base = mkdtempSync(join(tmpdir(), 'certdesk-exclusive-'))
const dataDir = join(base, 'data')
/** A folder every local user may write to, as /tmp is. */
const shared = join(base, 'shared')
/** Where the other user's links point: a file of the admin's that must keep its bytes. */
const elsewhere = join(base, 'elsewhere.txt')
const ELSEWHERE = 'the admin’s own notes\n'
let apiKey: string

const admin = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  certdesk(['admin', '--data-dir', dataDir, ...args], env)

/** Plants, as another user, a symlink to `elsewhere` at each of `names` in the shared folder. */
function plantLinks(names: string[]): void {
  for (const n of names) {
    symlinkSync(elsewhere, join(shared, n))
    lchownSync(join(shared, n), NOBODY, NOBODY)
  }
}

beforeAll(() => {
  const service = openService({ dataDir })
  const r = service.resellers.create({ name: 'Exclusive Hosting', email: 'ops@exclusive.test', groupId: 1 })
  apiKey = service.resellers.createApiKey(r.id).key
  service.close()
  spawnSync('mkdir', ['-m', '1777', shared])
  writeFileSync(elsewhere, ELSEWHERE)
})
afterAll(() => rmSync(base, { recursive: true, force: true }))
// Each case starts from the admin's file as it was.
beforeEach(() => writeFileSync(elsewhere, ELSEWHERE))

const withPassphrase = { ...process.env, CERTDESK_SECRETS_PASSPHRASE: PASSPHRASE }

describe('files written where the admin says', () => {
  it('secrets export: a link planted at <out>.partial and at other temp names is not followed', () => {
    const out = join(shared, 'secrets.json')
    plantLinks(['secrets.json.partial', 'secrets.json.tmp', '.secrets.json.partial', 'secrets.json~'])
    const r = admin(['secrets', 'export', '--out', out], withPassphrase)
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(elsewhere, 'utf8')).toBe(ELSEWHERE)
    const st = lstatSync(out)
    expect(st.isFile()).toBe(true)
    expect(st.mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ format: 'certdesk-secrets' })
    expect(readFileSync(out, 'utf8')).not.toContain(apiKey)
    // The planted links are still the other user's links; nothing else was left behind.
    expect(lstatSync(join(shared, 'secrets.json.partial')).isSymbolicLink()).toBe(true)
    expect(readdirSync(shared).sort()).toEqual(
      ['.secrets.json.partial', 'secrets.json', 'secrets.json.partial', 'secrets.json.tmp', 'secrets.json~'].sort()
    )
  })

  it('secrets export: a file another user created at <out>.partial receives no secret', () => {
    const out = join(shared, 'secrets-2.json')
    const planted = `${out}.partial`
    writeFileSync(planted, 'planted\n')
    chownSync(planted, NOBODY, NOBODY)
    chmodSync(planted, 0o666)
    const r = admin(['secrets', 'export', '--out', out], withPassphrase)
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(planted, 'utf8')).toBe('planted\n')
    expect(lstatSync(planted).uid).toBe(NOBODY)
    expect(lstatSync(out).mode & 0o777).toBe(0o600)
    expect(lstatSync(out).uid).toBe(process.getuid?.())
  })

  it('secrets export: a link planted at the target itself is refused and not followed', () => {
    const out = join(shared, 'secrets-3.json')
    plantLinks(['secrets-3.json'])
    const r = admin(['secrets', 'export', '--out', out], withPassphrase)
    expect(r.code).toBe(1)
    expect(r.json.error).toMatch(/could not export the secrets to .*secrets-3\.json: .*exists/)
    expect(readFileSync(elsewhere, 'utf8')).toBe(ELSEWHERE)
    expect(lstatSync(out).isSymbolicLink()).toBe(true)
  })

  it('ca root --out: a link planted at the target or beside it is not followed', () => {
    const out = join(shared, 'root.pem')
    plantLinks(['root.pem.partial', 'root.pem.tmp'])
    const first = admin(['ca', 'root', '--out', out])
    expect(first.code, first.stderr).toBe(0)
    expect(readFileSync(out, 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/)
    expect(lstatSync(out).isFile()).toBe(true)
    expect(readFileSync(elsewhere, 'utf8')).toBe(ELSEWHERE)

    const linked = join(shared, 'root-2.pem')
    plantLinks(['root-2.pem'])
    const second = admin(['ca', 'root', '--out', linked])
    expect(second.code).toBe(1)
    expect(second.json.error).toMatch(/could not write the CA root to .*root-2\.pem: .*exists/)
    expect(readFileSync(elsewhere, 'utf8')).toBe(ELSEWHERE)
  })

  it('report expiring --out: written whole under its name only, 0600, planted temp names untouched', () => {
    const out = join(shared, 'expiring.csv')
    plantLinks(['expiring.csv.partial', 'expiring.csv.tmp'])
    const r = admin(['report', 'expiring', '--days', '30', '--out', out])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(out, 'utf8').split('\n')[0]).toBe(
      'kind,reference,domain,valid_till,days_left,renewal_planned_at,reseller,contact'
    )
    expect(lstatSync(out).mode & 0o777).toBe(0o600)
    expect(readFileSync(elsewhere, 'utf8')).toBe(ELSEWHERE)
    expect(
      readdirSync(shared)
        .filter((n) => n.startsWith('expiring') || n.startsWith('.expiring'))
        .sort()
    ).toEqual(['expiring.csv', 'expiring.csv.partial', 'expiring.csv.tmp'].sort())
  })
})
