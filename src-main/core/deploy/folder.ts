/**
 * A folder target: the certificate files a web server reads, in the layout it expects. Every
 * file is written atomically (temp file in the same folder, fsync, rename, fsync of the folder),
 * so a server reloading at any moment reads the old file or the new one, never half of one.
 * Files holding a private key are 0600 (mkcert writes its key files the same way).
 */
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { buildPfx } from './pfx'

export const FOLDER_LAYOUTS = ['nginx', 'apache', 'haproxy', 'iis'] as const
export type FolderLayout = (typeof FOLDER_LAYOUTS)[number]

export interface FolderConfig {
  path: string
  layout: FolderLayout
  /** Also write certificate.pfx (always on for IIS). */
  pfx: boolean
}

export interface FolderMaterial {
  domain: string
  certificatePem: string
  chainPem: string
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
  /** HAProxy: certificate, chain and key in one PEM. */
  combined: string | null
  pfx: string | null
}

const PUBLIC = 0o644
const SECRET = 0o600

/**
 * The same four PEM files for every layout, named as certbot names them, because nginx
 * (`ssl_certificate fullchain.pem`), Apache 2.4.8+ (`SSLCertificateFile fullchain.pem`) and most
 * guides expect them; HAProxy adds `haproxy.pem` (its `crt` wants leaf, chain and key in one
 * file), IIS adds `certificate.pfx` (it imports PKCS#12 only).
 */
export async function writeFolder(
  config: FolderConfig,
  m: FolderMaterial
): Promise<{ files: WrittenFiles; summary: string }> {
  const cert = ensureNewline(m.certificatePem)
  const chain = ensureNewline(m.chainPem)
  const fullchain = cert + chain
  const key = m.privateKeyPem ? ensureNewline(m.privateKeyPem) : null
  const wantPfx = config.pfx || config.layout === 'iis'

  // Everything is built before anything is renamed, so a failure (no key for a PFX) leaves
  // the folder as it was.
  const planned: { name: string; data: string | Buffer; mode: number; role: keyof WrittenFiles }[] = [
    { name: 'cert.pem', data: cert, mode: PUBLIC, role: 'cert' },
    { name: 'chain.pem', data: chain, mode: PUBLIC, role: 'chain' },
    { name: 'fullchain.pem', data: fullchain, mode: PUBLIC, role: 'fullchain' }
  ]
  if (key) planned.push({ name: 'privkey.pem', data: key, mode: SECRET, role: 'key' })
  if (config.layout === 'haproxy') {
    planned.push({ name: 'haproxy.pem', data: fullchain + (key ?? ''), mode: key ? SECRET : PUBLIC, role: 'combined' })
  }
  if (wantPfx) {
    if (!key) throw new Error(`could not write certificate.pfx: CertDesk does not hold the private key for ${m.domain}`)
    if (!m.pfxPassword) throw new Error('could not write certificate.pfx: its password is missing from the OS keychain')
    const pfx = await buildPfx({
      certificatePem: cert,
      chainPem: chain,
      privateKeyPem: key,
      password: m.pfxPassword,
      friendlyName: m.domain
    })
    planned.push({ name: 'certificate.pfx', data: pfx, mode: SECRET, role: 'pfx' })
  }

  mkdirSync(config.path, { recursive: true })
  const temps: { temp: string; final: string }[] = []
  try {
    for (const f of planned) {
      const final = join(config.path, f.name)
      const temp = join(config.path, `.${f.name}.certdesk-${randomBytes(6).toString('hex')}.tmp`)
      writeDurably(temp, f.data, f.mode)
      temps.push({ temp, final })
    }
    for (const t of temps) renameSync(t.temp, t.final)
  } catch (err) {
    for (const t of temps) rmSync(t.temp, { force: true })
    throw new Error(`could not write ${config.path}: ${(err as Error).message}`, { cause: err })
  }
  fsyncFolder(config.path)

  const files: WrittenFiles = { cert: '', chain: '', fullchain: '', key: null, combined: null, pfx: null }
  for (const f of planned) files[f.role] = join(config.path, f.name)
  return {
    files,
    summary: `wrote ${planned.map((f) => f.name).join(', ')} to ${config.path} (${config.layout} layout)`
  }
}

function writeDurably(path: string, data: string | Buffer, mode: number): void {
  // `wx`: never follow a planted file or link at the temp name; the mode applies at creation,
  // so a key is never readable by others even for a moment.
  const fd = openSync(path, 'wx', mode)
  try {
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

const ensureNewline = (s: string): string => (s.endsWith('\n') ? s : `${s}\n`)
