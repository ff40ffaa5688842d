import { generateKeyPairSync } from 'node:crypto'
/**
 * CSRs made the two ways resellers make them: with the openssl command line, and in code with
 * @peculiar/x509 over Node's WebCrypto. Plus `openssl verify` for what CertDesk issues.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nodeCrypto, x509, type CryptoKeyPair } from '../../src-main/core/certificates/x509'

export type OpensslKey = 'rsa:2048' | 'rsa:1024' | 'rsa:3072' | 'ec:P-256' | 'ec:P-384' | 'ec:P-521' | 'ed25519'

function run(args: string[], input?: string): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8', input, timeout: 30_000 })
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`)
  return r.stdout
}

/** `openssl req -new` with a fresh key; `names[0]` is the CN, all names go into the SAN. */
export function opensslCsr(names: string[], key: OpensslKey = 'rsa:2048', subject = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-csr-'))
  try {
    const keyArgs =
      key === 'ed25519'
        ? ['-newkey', 'ed25519']
        : key.startsWith('ec:')
          ? ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${key.slice(3)}`]
          : ['-newkey', key]
    const subj = subject || `/CN=${names[0] ?? 'Example Code Signer'}`
    const san = names.length ? ['-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`] : []
    run([
      'req',
      '-new',
      ...keyArgs,
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-subj',
      subj,
      ...san,
      '-out',
      join(dir, 'csr.pem')
    ])
    return readFileSync(join(dir, 'csr.pem'), 'utf8')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `openssl req -new -key` with a key the caller holds (PEM): a CSR for that very key. */
export function opensslCsrForKey(names: string[], keyPem: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-csr-'))
  try {
    writeFileSync(join(dir, 'key.pem'), keyPem, { mode: 0o600 })
    const san = ['-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`]
    return run(['req', '-new', '-key', join(dir, 'key.pem'), '-subj', `/CN=${names[0]}`, ...san])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A CSR made in code with @peculiar/x509 (RSA 2048 or ECDSA P-256/P-384). */
export async function x509Csr(names: string[], alg: 'RSA' | 'P-256' | 'P-384' = 'P-256'): Promise<string> {
  const c = nodeCrypto
  const params =
    alg === 'RSA'
      ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 }
      : { name: 'ECDSA', namedCurve: alg, hash: alg === 'P-384' ? 'SHA-384' : 'SHA-256' }
  const keys = (await c.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: `CN=${names[0]}`,
      keys,
      signingAlgorithm: params,
      extensions: [new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value })))]
    },
    c
  )
  return csr.toString('pem')
}

/** Runs `openssl verify -CAfile root -untrusted bundle leaf` at `at`; returns its output and exit code. */
export function opensslVerify(
  rootPem: string,
  bundlePem: string,
  leafPem: string,
  at: Date,
  purpose = 'sslserver'
): { ok: boolean; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-verify-'))
  try {
    writeFileSync(join(dir, 'root.pem'), rootPem)
    writeFileSync(join(dir, 'bundle.pem'), bundlePem)
    writeFileSync(join(dir, 'leaf.pem'), leafPem)
    const r = spawnSync(
      'openssl',
      [
        'verify',
        '-attime',
        String(Math.floor(at.getTime() / 1000)),
        '-purpose',
        purpose,
        '-CAfile',
        join(dir, 'root.pem'),
        '-untrusted',
        join(dir, 'bundle.pem'),
        join(dir, 'leaf.pem')
      ],
      { encoding: 'utf8', timeout: 30_000 }
    )
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `openssl x509 -text` of a PEM certificate. */
export function opensslText(pem: string): string {
  return run(['x509', '-noout', '-text'], pem)
}

/** A fresh P-256 key as PKCS#8 PEM, for a key CertDesk keeps (and deploys beside its certificate). */
export function newKeyPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem'
  }) as string
}
