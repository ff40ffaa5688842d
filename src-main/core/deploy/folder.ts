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
 *
 * When a reload follows (the order has command targets), the files a write replaces are kept
 * in a hidden folder beside them until that reload has taken the new set: a reload or a
 * verification that fails puts them back (`restorePrevious`), so what is on disk is what the
 * server serves, and its next restart does not switch certificates unannounced.
 */
import { crashPoint } from '../crash-points'
import { X509Certificate } from 'node:crypto'
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
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
/** The files a write replaced, kept until the reload that follows has taken the new ones. */
export const PREVIOUS = '.certdesk-previous'
const PREVIOUS_MANIFEST = '.kept'
/** A certificate, chain, key or PFX is a few KiB: anything much larger at one of those names is not one. */
const MAX_KEPT_BYTES = 1024 * 1024

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
  m: FolderMaterial,
  /** Keep the files this write replaces, for `restorePrevious` (a reload follows). */
  opts: { keepPrevious?: boolean } = {}
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
    // Kept before anything is renamed: a crash from here on leaves the old set kept whole. A set
    // that cannot be kept stops the write; the staged files go, so no later pass renames them in.
    try {
      if (opts.keepPrevious) {
        keepPrevious(config.path, [...planned.map((f) => f.name), ...remove], serialOf(m.certificatePem))
      } else {
        dropPrevious(config.path)
      }
    } catch (err) {
      rmSync(staging, { recursive: true, force: true })
      dropPrevious(config.path)
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

const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber.toUpperCase()

/**
 * The serial of the certificate a folder holds now (its cert.pem), or null when none can be
 * read. Opened without following links and without waiting on a FIFO, and read only when it is
 * a regular file of a certificate's size.
 */
export function heldSerial(path: string): string | null {
  let fd: number
  try {
    fd = openSync(join(path, 'cert.pem'), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return null
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || st.size > MAX_KEPT_BYTES) return null
    return serialOf(readFileSync(fd, 'utf8'))
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

interface KeptSet {
  /** The certificate whose write replaced these files. */
  serial: string
  /** Files that were there, kept under the same names (`link`: a symbolic link, kept as one). */
  kept: { name: string; link?: string }[]
  /** Names the write created: nothing was there before. */
  absent: string[]
}

/**
 * Keeps the entries at `names` as they are now in the PREVIOUS folder (0700), files with their
 * bytes and mode, links as links; the manifest is written last, so a set without it is never
 * restored. An entry is opened without following links and must be a regular file of a
 * certificate's size; anything else is refused, so nothing is written rather than half-kept.
 */
function keepPrevious(path: string, names: string[], serial: string): void {
  const dir = join(path, PREVIOUS)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { mode: 0o700 })
  const set: KeptSet = { serial, kept: [], absent: [] }
  for (const name of new Set(names)) {
    const at = join(path, name)
    const st = lstatOrNull(at)
    if (!st) {
      set.absent.push(name)
      continue
    }
    if (st.isSymbolicLink()) {
      const link = readlinkSync(at)
      symlinkSync(link, join(dir, name))
      set.kept.push({ name, link })
      continue
    }
    if (!st.isFile()) throw new Error(`could not keep the previous ${name}: it is not a regular file`)
    // O_NONBLOCK: a FIFO swapped in after the check must not hold the deploy; fstat refuses it.
    const fd = openSync(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      const f = fstatSync(fd)
      if (!f.isFile()) throw new Error(`could not keep the previous ${name}: it is not a regular file`)
      if (f.size > MAX_KEPT_BYTES) {
        throw new Error(
          `could not keep the previous ${name}: it is ${f.size} bytes, more than a certificate file holds`
        )
      }
      writeDurably(join(dir, name), readFileSync(fd), f.mode & 0o777)
    } finally {
      closeSync(fd)
    }
    set.kept.push({ name })
  }
  writeDurably(join(dir, PREVIOUS_MANIFEST), JSON.stringify(set), SECRET)
  fsyncFolder(dir)
}

/** Forgets the kept set: the reload took the new files, or no reload follows. */
export function dropPrevious(path: string): void {
  rmSync(join(path, PREVIOUS), { recursive: true, force: true })
}

export type RestoreResult =
  /** The files kept when certificate `serial` was written are back in place. */
  | { kind: 'restored'; files: string[] }
  /** The write of `serial` found an empty folder: its new files stay (nothing to go back to). */
  | { kind: 'first'; files: string[] }
  /** No complete set kept for `serial` (another certificate was written since, or none was kept). */
  | { kind: 'none' }

/**
 * Puts back the files the write of certificate `serial` replaced, as one set through the staging
 * folder (so a crash half-way is finished by the next write or due pass, like any set), and
 * removes the files that write created beside them. A first deploy has nothing to go back to:
 * its files stay, because a server that reads them was not running on them before, and removing
 * them would only keep a server configured for them from starting.
 */
export function restorePrevious(path: string, serial: string): RestoreResult {
  const dir = join(path, PREVIOUS)
  let set: KeptSet
  try {
    set = JSON.parse(readFileSync(join(dir, PREVIOUS_MANIFEST), 'utf8')) as KeptSet
  } catch {
    return { kind: 'none' }
  }
  if (set.serial !== serial) return { kind: 'none' }
  if (set.kept.length === 0) {
    dropPrevious(path)
    return { kind: 'first', files: set.absent }
  }
  // A set another attempt left staged goes in first; the restore then replaces it.
  recoverFolder(path, { dropUnfinished: false })
  const staging = join(path, STAGING)
  mkdirSync(staging, { mode: 0o700 })
  try {
    for (const k of set.kept) {
      if (k.link !== undefined) {
        symlinkSync(k.link, join(staging, k.name))
        continue
      }
      const from = join(dir, k.name)
      writeDurably(join(staging, k.name), readFileSync(from), lstatSync(from).mode & 0o777)
    }
    writeDurably(
      join(staging, MANIFEST),
      JSON.stringify({ files: set.kept.map((k) => k.name), remove: set.absent }),
      SECRET
    )
    fsyncFolder(staging)
  } catch (err) {
    rmSync(staging, { recursive: true, force: true })
    throw err
  }
  finishStaged(path)
  dropPrevious(path)
  return { kind: 'restored', files: set.kept.map((k) => k.name) }
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
