/**
 * Certificate files as servers and tools leave them, for the import tests: a PFX written by
 * `openssl pkcs12 -export`, and certbot's Let's Encrypt folder (live/ links into archive/).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestLeaf } from './test-ca'

/**
 * `openssl pkcs12 -export` of `leaf` with its chain to `out`, the password read from a file (so
 * any characters work); `extra` adds options (OpenSSL 3: `-iter N` sets the key and MAC counts).
 */
export function opensslPfx(leaf: TestLeaf, out: string, password: string, extra: string[] = []): string {
  const work = mkdtempSync(join(tmpdir(), 'certdesk-pfx-'))
  try {
    writeFileSync(join(work, 'key.pem'), leaf.privateKeyPem, { mode: 0o600 })
    writeFileSync(join(work, 'cert.pem'), leaf.certificatePem)
    writeFileSync(join(work, 'chain.pem'), leaf.chainPem)
    writeFileSync(join(work, 'pass'), `${password}\n`, { mode: 0o600 })
    execFileSync('openssl', [
      'pkcs12',
      '-export',
      '-inkey',
      join(work, 'key.pem'),
      '-in',
      join(work, 'cert.pem'),
      '-certfile',
      join(work, 'chain.pem'),
      '-passout',
      `file:${join(work, 'pass')}`,
      ...extra,
      '-out',
      out
    ])
    return out
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * certbot's layout under `le`: archive/<name>/{cert,chain,fullchain,privkey}N.pem for each of
 * `versions` (oldest first), and live/<name>/*.pem linking to the newest.
 */
export function writeLetsEncrypt(le: string, name: string, versions: TestLeaf[]): { live: string; archive: string } {
  const archive = join(le, 'archive', name)
  const live = join(le, 'live', name)
  mkdirSync(archive, { recursive: true })
  mkdirSync(live, { recursive: true })
  versions.forEach((leaf, i) => {
    writeFileSync(join(archive, `cert${i + 1}.pem`), leaf.certificatePem)
    writeFileSync(join(archive, `chain${i + 1}.pem`), leaf.chainPem)
    writeFileSync(join(archive, `fullchain${i + 1}.pem`), leaf.certificatePem + leaf.chainPem)
    writeFileSync(join(archive, `privkey${i + 1}.pem`), leaf.privateKeyPem, { mode: 0o600 })
  })
  for (const f of ['cert', 'chain', 'fullchain', 'privkey'])
    symlinkSync(`../../archive/${name}/${f}${versions.length}.pem`, join(live, `${f}.pem`))
  return { live, archive }
}
