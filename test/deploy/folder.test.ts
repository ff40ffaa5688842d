import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeFolder } from '../../src-main/core/deploy/folder'
import { createTestCa, type TestCa, type TestLeaf } from '../support/test-ca'

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

  it('without the private key writes no privkey.pem and refuses a PFX, leaving the folder as it was', async () => {
    const dir = fresh()
    await writeFolder({ path: dir, layout: 'apache', pfx: false }, material(leaf, false))
    expect(readdirSync(dir).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem'])
    const other = await ca.issue('www.example.test', new Date(), 100)
    await expect(writeFolder({ path: dir, layout: 'iis', pfx: true }, material(other, false))).rejects.toThrow(
      'could not write certificate.pfx: CertDesk does not hold the private key for www.example.test'
    )
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toBe(leaf.certificatePem)
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
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
