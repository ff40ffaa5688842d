import { spawn, spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MissingKeyError, recoverFolder, STAGING, writeFolder } from '../../src-main/core/deploy/folder'
import { createTestCa, type TestCa, type TestLeaf } from '../support/test-ca'
import { folderSnapshot as snapshot } from './web-servers'

let ca: TestCa
let leaf: TestLeaf
const dirs: string[] = []
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'certdesk-folder-'))
  dirs.push(d)
  return d
}

beforeAll(async () => {
  ca = await createTestCa()
  leaf = await ca.issue('www.example.test', new Date(), 200)
})
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const material = (l: TestLeaf, key = true) => ({
  domain: 'www.example.test',
  certificatePem: l.certificatePem,
  chainPem: l.chainPem,
  privateKeyPem: key ? l.privateKeyPem : null,
  pfxPassword: 'correct horse battery'
})
const mode = (p: string): number => statSync(p).mode & 0o777
const openssl = (args: string[], input?: string) =>
  spawnSync('openssl', args, { encoding: 'utf8', input, timeout: 30_000 })

describe('folder target layouts', () => {
  it('nginx: cert, chain, fullchain and a 0600 key that openssl verifies as one chain and one key pair', async () => {
    const dir = fresh()
    const { files, summary } = await writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(leaf))
    expect(summary).toContain('nginx layout')
    expect(readdirSync(dir).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem'])
    expect(readFileSync(files.fullchain, 'utf8')).toBe(leaf.certificatePem + leaf.chainPem)
    expect(mode(files.key as string)).toBe(0o600)
    expect(mode(files.cert)).toBe(0o644)
    writeFileSync(join(dirs[0], '..', 'root-test.pem'), ca.rootPem)
    const verify = openssl([
      'verify',
      '-CAfile',
      join(dirs[0], '..', 'root-test.pem'),
      '-untrusted',
      files.chain,
      files.cert
    ])
    rmSync(join(dirs[0], '..', 'root-test.pem'))
    expect(verify.stdout).toContain(': OK')
    // The key belongs to the certificate: same public key.
    const pubFromCert = openssl(['x509', '-in', files.cert, '-noout', '-pubkey']).stdout
    const pubFromKey = openssl(['pkey', '-in', files.key as string, '-pubout']).stdout
    expect(pubFromKey).toBe(pubFromCert)
  })

  it('without a key that belongs to the certificate writes nothing at all, on every layout, and says how to provide one', async () => {
    const dir = fresh()
    await writeFolder({ path: dir, layout: 'apache', pfx: false }, material(leaf))
    const before = snapshot(dir)
    const other = await ca.issue('www.example.test', new Date(), 100)
    for (const layout of ['nginx', 'apache', 'haproxy', 'iis'] as const) {
      // No kept key at all, and the kept key of another certificate: both refused before writing.
      for (const m of [material(other, false), { ...material(other, false), privateKeyPem: leaf.privateKeyPem }]) {
        const err = await writeFolder({ path: dir, layout, pfx: layout === 'iis' }, m).catch((e: Error) => e)
        expect(err).toBeInstanceOf(MissingKeyError)
        expect((err as Error).message).toMatch(
          new RegExp(
            `^could not deploy certificate ${other.serial} to ${dir}: CertDesk does not hold the private key of this certificate .*--key-file PATH.*keep-key .*nothing in the folder was changed`
          )
        )
      }
    }
    expect(snapshot(dir)).toEqual(before)
  })

  it('a named key file: read to compare, never copied; a stale privkey.pem of another key is removed with the same set', async () => {
    const dir = fresh()
    await writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(leaf))
    const other = await ca.issue('www.example.test', new Date(), 100)
    const keyDir = fresh()
    const keyFile = join(keyDir, 'customer.key')
    writeFileSync(keyFile, leaf.privateKeyPem, { mode: 0o600 })
    const before = snapshot(dir)
    // The named file holds the key of the previous certificate: refused, nothing written.
    await expect(
      writeFolder({ path: dir, layout: 'nginx', pfx: false, keyFile }, material(other, false))
    ).rejects.toThrow(`the key file ${keyFile} does not belong to this certificate (its public key differs)`)
    expect(snapshot(dir)).toEqual(before)

    writeFileSync(keyFile, other.privateKeyPem)
    const { files, summary } = await writeFolder(
      { path: dir, layout: 'nginx', pfx: false, keyFile },
      material(other, false)
    )
    expect(files.key).toBe(keyFile)
    expect(summary).toContain(`with the key in ${keyFile}; removed privkey.pem of an earlier key`)
    expect(readdirSync(dir).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem'])
    expect(readFileSync(keyFile, 'utf8')).toBe(other.privateKeyPem)

    // HAProxy with a kept-apart key: haproxy.pem without a key, 0644; the key stays at haproxy.pem.key.
    const hp = fresh()
    writeFileSync(join(hp, 'haproxy.pem.key'), other.privateKeyPem, { mode: 0o600 })
    await writeFolder(
      { path: hp, layout: 'haproxy', pfx: false, keyFile: join(hp, 'haproxy.pem.key') },
      material(other, false)
    )
    expect(readFileSync(join(hp, 'haproxy.pem'), 'utf8')).toBe(other.certificatePem + other.chainPem)
    expect(mode(join(hp, 'haproxy.pem'))).toBe(0o644)
    expect(mode(join(hp, 'haproxy.pem.key'))).toBe(0o600)
  })

  it('a key file that is a FIFO, a huge file, a device or a directory is refused at once, the folder untouched', async () => {
    const dir = fresh()
    await writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(leaf))
    const before = snapshot(dir)
    const keyDir = fresh()
    const fifo = join(keyDir, 'fifo.key')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const huge = join(keyDir, 'huge.key')
    writeFileSync(huge, '')
    truncateSync(huge, 2 * 1024 ** 3) // sparse: 2 GiB that take no disk space
    const started = Date.now()
    for (const [keyFile, why] of [
      [fifo, 'is not a regular file'],
      [huge, 'is larger than 64 KiB'],
      ['/dev/zero', 'is not a regular file'],
      [keyDir, 'is not a regular file'],
      [join(keyDir, 'missing.key'), 'does not exist']
    ]) {
      await expect(
        writeFolder({ path: dir, layout: 'nginx', pfx: false, keyFile }, material(leaf, false))
      ).rejects.toThrow(`the key file ${keyFile} ${why}`)
    }
    expect(Date.now() - started).toBeLessThan(2000)
    expect(snapshot(dir)).toEqual(before)
  })

  it('files are 0644 and keys 0600 whatever the umask, also when they replace files of other modes', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'cert.pem'), 'old', { mode: 0o666 })
    writeFileSync(join(dir, 'privkey.pem'), 'old', { mode: 0o644 })
    const old = process.umask(0o077)
    try {
      await writeFolder({ path: dir, layout: 'haproxy', pfx: true }, material(leaf))
    } finally {
      process.umask(old)
    }
    const modes = Object.fromEntries(readdirSync(dir).map((f) => [f, mode(join(dir, f)).toString(8)]))
    expect(modes).toEqual({
      'cert.pem': '644',
      'chain.pem': '644',
      'fullchain.pem': '644',
      'privkey.pem': '600',
      'haproxy.pem': '600',
      'certificate.pfx': '600'
    })
  })

  it('symlinks planted in the folder are replaced, never followed; a directory under a file name stops the set before any rename', async () => {
    const dir = fresh()
    const outside = fresh()
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'do not touch')
    symlinkSync(victim, join(dir, 'cert.pem'))
    symlinkSync(victim, join(dir, 'privkey.pem'))
    symlinkSync(outside, join(dir, '.certdesk-staging'))
    await writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(leaf))
    expect(readFileSync(victim, 'utf8')).toBe('do not touch')
    expect(readdirSync(outside)).toEqual(['victim.txt'])
    expect(lstatSync(join(dir, 'cert.pem')).isFile()).toBe(true)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(leaf.privateKeyPem)

    const other = await ca.issue('www.example.test', new Date(), 100)
    rmSync(join(dir, 'privkey.pem'))
    mkdirSync(join(dir, 'privkey.pem'))
    const before = snapshot(dir)
    await expect(writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(other))).rejects.toThrow(
      'privkey.pem is a directory'
    )
    expect(snapshot(dir)).toEqual(before)
  })

  it('a crash between two renames is finished by the next write or due pass; a crash before the manifest is dropped', async () => {
    const dir = fresh()
    await writeFolder({ path: dir, layout: 'nginx', pfx: false }, material(leaf))
    const other = await ca.issue('www.example.test', new Date(), 100)
    // Stage the new set as writeFolder does, then "crash" after renaming only cert.pem.
    const staging = join(dir, STAGING)
    mkdirSync(staging)
    writeFileSync(join(staging, 'cert.pem'), other.certificatePem)
    writeFileSync(join(staging, 'chain.pem'), other.chainPem)
    writeFileSync(join(staging, 'fullchain.pem'), other.certificatePem + other.chainPem)
    writeFileSync(join(staging, 'privkey.pem'), other.privateKeyPem, { mode: 0o600 })
    writeFileSync(
      join(staging, '.complete'),
      JSON.stringify({ files: ['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem'], remove: [] })
    )
    renameSync(join(staging, 'cert.pem'), join(dir, 'cert.pem'))
    recoverFolder(dir)
    expect(readdirSync(dir).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem'])
    expect(readFileSync(join(dir, 'fullchain.pem'), 'utf8')).toBe(other.certificatePem + other.chainPem)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(other.privateKeyPem)

    // A crash while writing (no manifest): the staged files are dropped, the old set stays whole.
    const before = snapshot(dir)
    mkdirSync(staging)
    writeFileSync(join(staging, 'cert.pem'), leaf.certificatePem)
    // The due pass over all folders leaves it: another process may still be writing it.
    recoverFolder(dir, { dropUnfinished: false })
    expect(existsSync(join(staging, 'cert.pem'))).toBe(true)
    recoverFolder(dir)
    expect(snapshot(dir)).toEqual(before)
  })

  it('haproxy: one combined PEM (leaf, chain, key) that openssl reads as both', async () => {
    const dir = fresh()
    const { files } = await writeFolder({ path: dir, layout: 'haproxy', pfx: false }, material(leaf))
    const combined = readFileSync(files.combined as string, 'utf8')
    expect(combined).toBe(leaf.certificatePem + leaf.chainPem + leaf.privateKeyPem)
    expect(mode(files.combined as string)).toBe(0o600)
    expect(openssl(['x509', '-in', files.combined as string, '-noout', '-subject']).stdout).toContain(
      'www.example.test'
    )
    expect(openssl(['pkey', '-in', files.combined as string, '-noout']).status).toBe(0)
  })

  it('iis: a PKCS#12 that openssl opens with the password (key, leaf and chain inside) and not without', async () => {
    const dir = fresh()
    const { files } = await writeFolder({ path: dir, layout: 'iis', pfx: true }, material(leaf))
    expect(mode(files.pfx as string)).toBe(0o600)
    const info = openssl([
      'pkcs12',
      '-in',
      files.pfx as string,
      '-passin',
      'pass:correct horse battery',
      '-nodes',
      '-info'
    ])
    expect(info.status, info.stderr).toBe(0)
    expect(info.stdout).toContain('friendlyName: www.example.test')
    expect(info.stdout.match(/BEGIN CERTIFICATE/g)?.length).toBe(2)
    expect(info.stdout).toContain('BEGIN PRIVATE KEY')
    expect(info.stderr).toMatch(/PBES2.*AES-256-CBC|AES-256-CBC/s)
    const wrong = openssl(['pkcs12', '-in', files.pfx as string, '-passin', 'pass:wrong', '-nodes'])
    expect(wrong.status).not.toBe(0)
  })
})

describe('atomic writes', () => {
  it('a reader polling the files in another process never sees a half-written or mixed file', async () => {
    const dir = fresh()
    const versions = [
      leaf,
      await ca.issue('www.example.test', new Date(), 100),
      await ca.issue('www.example.test', new Date(), 47)
    ]
    await writeFolder({ path: dir, layout: 'haproxy', pfx: false }, material(versions[0]))
    const good = new Set(
      versions.flatMap((v) => [v.certificatePem + v.chainPem, v.certificatePem + v.chainPem + v.privateKeyPem])
    )
    // The reader reads both files as fast as it can and prints every content it sees once.
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const seen = new Set(); const files = ${JSON.stringify([join(dir, 'fullchain.pem'), join(dir, 'haproxy.pem')])};
         let reads = 0; const stopAt = Date.now() + 20000;
         process.stdin.on('data', () => { process.stdout.write(JSON.stringify({ reads, seen: [...seen] })); process.exit(0) });
         (function loop() { for (let i = 0; i < 200; i++) for (const f of files) { try { seen.add(fs.readFileSync(f, 'utf8')); reads++ } catch (e) { seen.add('ERROR ' + e.code) } }
           if (Date.now() > stopAt) { process.stdout.write(JSON.stringify({ reads, seen: [...seen] })); process.exit(0) } setImmediate(loop) })()`
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] }
    )
    let out = ''
    reader.stdout.on('data', (d) => (out += d))
    const exited = new Promise<void>((resolve) => reader.on('exit', () => resolve()))
    try {
      for (let i = 0; i < 150; i++)
        await writeFolder({ path: dir, layout: 'haproxy', pfx: false }, material(versions[i % versions.length]))
    } finally {
      reader.stdin.write('stop\n')
      await exited
    }
    const report = JSON.parse(out) as { reads: number; seen: string[] }
    expect(report.reads).toBeGreaterThan(100)
    for (const content of report.seen) expect(good.has(content), `reader saw: ${content.slice(0, 80)}`).toBe(true)
    expect(report.seen.length).toBeGreaterThan(2)
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })
})
