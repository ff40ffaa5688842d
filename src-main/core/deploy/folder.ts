/**
 * A folder target: the certificate files a web server reads, in the layout it expects, always
 * with the private key that belongs to the certificate (key-file.ts). A target's files are
 * replaced as one set: they are written into a staging folder beside them (fsync'd, with a
 * manifest written last), then renamed into place one by one, each rename atomic (POSIX
 * rename(2)), so a server reading a file sees the old or the new one, never half of one. A crash
 * between two renames leaves the complete staged set and its manifest: the next write to the
 * folder (every attempt, and every due pass of the deploy queue) first finishes those renames,
 * and the order's command targets (the reloads) never run before the set is complete. Only one
 * shared parent folder is needed (no symlinks), so the layout works the same on Windows for IIS.
 * Files holding a private key are 0600, the others 0644, whatever the umask.
 */
import { crashPoint } from '../crash-points'
import { X509Certificate } from 'node:crypto'
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync
} from 'node:fs'
import { join } from 'node:path'
import { keyMatchesCertificate, readKeyFile } from './key-file'
import { buildPfx } from './pfx'

export const FOLDER_LAYOUTS = ['nginx', 'apache', 'haproxy', 'iis'] as const
export type FolderLayout = (typeof FOLDER_LAYOUTS)[number]

export interface FolderConfig {
  path: string
  layout: FolderLayout
  /** Also write certificate.pfx (always on for IIS). */
  pfx: boolean
  /**
   * The key file the server reads, for a key the customer keeps: CertDesk reads it before every
   * write to check it belongs to the certificate, and writes no privkey.pem of its own.
   */
  keyFile?: string
}

export interface FolderMaterial {
  domain: string
  certificatePem: string
  chainPem: string
  /** The key CertDesk keeps for the order, or null. */
  privateKeyPem: string | null
  /** From the keychain; only when a PFX is written. */
  pfxPassword: string | null
}

/** What a layout writes, by role; the command target gets these paths in its environment. */
export interface WrittenFiles {
  cert: string
  chain: string
  fullchain: string
  key: string | null
  /** HAProxy: certificate, chain and (when CertDesk holds it) key in one PEM. */
  combined: string | null
  pfx: string | null
}

/**
 * A deploy refused because no key belonging to the certificate is at hand; the folder is left
 * as it was. `reason` is what a reseller may read (no path).
 */
export class MissingKeyError extends Error {
  readonly reason =
    'no private key matching the certificate is available to the deploy target, so its files were left unchanged'
}

const PUBLIC = 0o644
const SECRET = 0o600
/** The staging folder beside the files; a dot name, so no server config glob picks it up. */
export const STAGING = '.certdesk-staging'
const MANIFEST = '.complete'

/** HAProxy loads `<crt>.key` when the PEM named by `crt` holds no key (ssl-load-extra-files, default "all"). */
export const haproxyKeyPath = (folder: string): string => join(folder, 'haproxy.pem.key')

/** The key that goes with the certificate, and whether CertDesk writes it into the folder. */
export function keyForFolder(config: FolderConfig, m: FolderMaterial): { pem: string; copy: boolean } {
  const serial = new X509Certificate(m.certificatePem).serialNumber.toUpperCase()
  const refuse = (what: string): never => {
    throw new MissingKeyError(
      `could not deploy certificate ${serial} to ${config.path}: ${what}; nothing in the folder was changed and the order's command targets were not run`
    )
  }
  if (config.keyFile) {
    let pem: string
    try {
      pem = readKeyFile(config.keyFile)
    } catch (err) {
      return refuse(
        `${(err as Error).message}; put the certificate's private key there (PEM, unencrypted) or change the target's key file`
      )
    }
    if (!keyMatchesCertificate(pem, m.certificatePem))
      return refuse(
        `the key file ${config.keyFile} does not belong to this certificate (its public key differs); put this certificate's private key there, the one its CSR was made with`
      )
    return { pem, copy: false }
  }
  if (m.privateKeyPem && keyMatchesCertificate(m.privateKeyPem, m.certificatePem)) {
    return { pem: m.privateKeyPem, copy: true }
  }
  return refuse(
    'CertDesk does not hold the private key of this certificate (it was issued for a CSR made outside CertDesk); ' +
      'name the key file the server reads in the target (`certdesk admin deploy set --target ID --key-file PATH`, or "Key file" in the app), ' +
      'or keep the key in CertDesk (`certdesk admin deploy keep-key --order ID --key-file PATH`)'
  )
}

/**
 * The same four PEM files for every layout, named as certbot names them, because nginx
 * (`ssl_certificate fullchain.pem`), Apache 2.4.8+ (`SSLCertificateFile fullchain.pem`) and most
 * guides expect them; HAProxy adds `haproxy.pem` (its `crt` wants leaf, chain and key in one
 * file, or the key beside it as `haproxy.pem.key`), IIS adds `certificate.pfx` (it imports
 * PKCS#12 only). docs/deploy.md has a tested configuration for each.
 */
export async function writeFolder(
  config: FolderConfig,
  m: FolderMaterial
): Promise<{ files: WrittenFiles; summary: string }> {
  // The key first: without one that belongs to the certificate nothing is written at all.
  const key = keyForFolder(config, m)
  const cert = ensureNewline(m.certificatePem)
  const chain = ensureNewline(m.chainPem)
  const fullchain = cert + chain
  const keyPem = ensureNewline(key.pem)
  const wantPfx = config.pfx || config.layout === 'iis'

  const planned: { name: string; data: string | Buffer; mode: number; role: keyof WrittenFiles }[] = [
    { name: 'cert.pem', data: cert, mode: PUBLIC, role: 'cert' },
    { name: 'chain.pem', data: chain, mode: PUBLIC, role: 'chain' },
    { name: 'fullchain.pem', data: fullchain, mode: PUBLIC, role: 'fullchain' }
  ]
  if (key.copy) planned.push({ name: 'privkey.pem', data: keyPem, mode: SECRET, role: 'key' })
  if (config.layout === 'haproxy') {
    planned.push(
      key.copy
        ? { name: 'haproxy.pem', data: fullchain + keyPem, mode: SECRET, role: 'combined' }
        : { name: 'haproxy.pem', data: fullchain, mode: PUBLIC, role: 'combined' }
    )
  }
  if (wantPfx) {
    if (!m.pfxPassword) throw new Error('could not write certificate.pfx: its password is missing from the OS keychain')
    const pfx = await buildPfx({
      certificatePem: cert,
      chainPem: chain,
      privateKeyPem: keyPem,
      password: m.pfxPassword,
      friendlyName: m.domain
    })
    planned.push({ name: 'certificate.pfx', data: pfx, mode: SECRET, role: 'pfx' })
  }
  // A privkey.pem CertDesk wrote for an earlier certificate must not stay beside this one.
  const remove: string[] = []
  const ownKey = join(config.path, 'privkey.pem')
  if (!key.copy && config.keyFile !== ownKey && exists(ownKey) && !fileMatches(ownKey, cert)) remove.push('privkey.pem')

  try {
    mkdirSync(config.path, { recursive: true, mode: 0o755 })
    recoverFolder(config.path)
    // A planted directory under a file name would make its rename fail halfway through the set.
    for (const f of planned) {
      const st = lstatOrNull(join(config.path, f.name))
      if (st?.isDirectory()) throw new Error(`${f.name} is a directory`)
    }
    const staging = join(config.path, STAGING)
    mkdirSync(staging, { mode: 0o700 })
    try {
      for (const f of planned) writeDurably(join(staging, f.name), f.data, f.mode)
      writeDurably(join(staging, MANIFEST), JSON.stringify({ files: planned.map((f) => f.name), remove }), SECRET)
      fsyncFolder(staging)
    } catch (err) {
      rmSync(staging, { recursive: true, force: true })
      throw err
    }
    finishStaged(config.path)
  } catch (err) {
    throw new Error(`could not write ${config.path}: ${(err as Error).message}`, { cause: err })
  }

  const files: WrittenFiles = { cert: '', chain: '', fullchain: '', key: null, combined: null, pfx: null }
  for (const f of planned) files[f.role] = join(config.path, f.name)
  if (!key.copy && config.keyFile) files.key = config.keyFile
  return {
    files,
    summary:
      `wrote ${planned.map((f) => f.name).join(', ')} to ${config.path} (${config.layout} layout)` +
      (key.copy ? '' : `, with the key in ${config.keyFile}`) +
      (remove.length ? `; removed ${remove.join(', ')} of an earlier key` : '')
  }
}

/**
 * Finishes a set a crash left staged (its manifest is there: every file is complete and the key
 * was checked), or drops a staging folder that never got its manifest (the old set is whole).
 * Anything else planted at the staging name is removed, never followed. The due pass over all
 * folders only finishes sets (`dropUnfinished: false`).
 */
export function recoverFolder(path: string, opts: { dropUnfinished: boolean } = { dropUnfinished: true }): void {
  const staging = join(path, STAGING)
  const st = lstatOrNull(staging)
  if (!st) return
  if (!st.isDirectory()) {
    if (opts.dropUnfinished) unlinkSync(staging)
    return
  }
  if (lstatOrNull(join(staging, MANIFEST))?.isFile()) finishStaged(path)
  // A set still being written by another process's attempt looks the same as one a crash left;
  // only the attempt that writes this target next (it holds the run's claim) drops it.
  else if (opts.dropUnfinished) rmSync(staging, { recursive: true, force: true })
}

function finishStaged(path: string): void {
  const staging = join(path, STAGING)
  const manifest = JSON.parse(readFileSync(join(staging, MANIFEST), 'utf8')) as { files: string[]; remove: string[] }
  const safe = (n: unknown): n is string => typeof n === 'string' && /^[a-z0-9.]+$/.test(n) && !n.startsWith('.')
  for (const [i, name] of manifest.files.filter(safe).entries()) {
    // Already renamed by the pass that crashed: nothing left to move.
    if (lstatOrNull(join(staging, name))) renameSync(join(staging, name), join(path, name))
    // The fault tests kill the process here, with some files of the set in place and some staged.
    if (i === 0) crashPoint('deploy:between-files')
  }
  // unlink, never a recursive removal: a link is removed, not what it points to.
  for (const name of manifest.remove.filter(safe)) if (lstatOrNull(join(path, name))) unlinkSync(join(path, name))
  fsyncFolder(path)
  rmSync(staging, { recursive: true, force: true })
}

function writeDurably(path: string, data: string | Buffer, mode: number): void {
  // `wx`: never follow a planted file or link; the mode applies at creation, so a key is never
  // readable by others even for a moment, and fchmod sets it exactly whatever the umask.
  const fd = openSync(path, 'wx', mode)
  try {
    fchmodSync(fd, mode)
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    let off = 0
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** The renames are durable only once the folder itself is synced (POSIX; a no-op elsewhere). */
function fsyncFolder(path: string): void {
  if (process.platform === 'win32') return
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function lstatOrNull(path: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(path)
  } catch {
    return null
  }
}

const exists = (path: string): boolean => lstatOrNull(path) !== null

function fileMatches(keyPath: string, certificatePem: string): boolean {
  try {
    return keyMatchesCertificate(readKeyFile(keyPath), certificatePem)
  } catch {
    return false
  }
}

const ensureNewline = (s: string): string => (s.endsWith('\n') ? s : `${s}\n`)
