/**
 * Which files of a folder an import reads, decided from the folder's listing alone (no file is
 * opened here): certificate and key files by extension, in subfolders too; anything that is not
 * a regular file is listed as skipped and never opened; a symbolic link is listed with why it
 * was not followed, or, when the admin asks, followed while it stays inside the folder (Let's
 * Encrypt's `live/<name>/cert.pem → ../../archive/<name>/cert2.pem`).
 */
import { readdirSync, readlinkSync, realpathSync, statSync, type Dirent } from 'node:fs'
import { basename, dirname, extname, join, parse as parsePath } from 'node:path'
import { invalid } from '../errors'
import { inside, kindOf } from './read-file'

/** Extensions a certificate or key file has; other files in a scanned folder are not opened. */
export const CERT_EXTENSIONS = new Set(['.pem', '.crt', '.cer', '.cert', '.der', '.pfx', '.p12', '.key'])
/** A scan stops here: a certificate folder, not a disk. */
const MAX_SCAN_ENTRIES = 20_000
const MAX_SCAN_DEPTH = 16

/** A file to read: `path` as the admin sees it (under the folder chosen), `open` where it really is. */
export interface Candidate {
  path: string
  open: string
  /** The folder it is listed in, as the admin sees it: keys pair with certificates in the same one. */
  dir: string
  /** Read through a link the admin named or asked to follow. */
  follow: boolean
  /** Not named by the admin: read only to find the key of a certificate beside it. */
  besideOnly?: boolean
}

export interface Scan {
  candidates: Candidate[]
  skipped: { source: string; reason: string }[]
  /** The folder's real path: every file read must lie inside it. */
  realRoot: string
}

const isCertName = (name: string): boolean => CERT_EXTENSIONS.has(extname(name).toLowerCase())

/** Lists what to read under `root`; `followLinks` follows links that stay inside it. */
export function scanFolder(root: string, followLinks: boolean): Scan {
  let realRoot: string
  try {
    realRoot = realpathSync(root)
  } catch {
    throw invalid(`could not scan ${root}: it does not exist`)
  }
  if (!statSync(realRoot).isDirectory()) throw invalid(`could not scan ${root}: it is not a folder`)
  const scan: Scan = { candidates: [], skipped: [], realRoot }
  const seenDirs = new Set<string>()
  let entries = 0
  const skip = (path: string, reason: string): void => {
    scan.skipped.push({ source: `file:${path}`, reason })
  }

  const link = (shown: string, real: string, name: string, depth: number): void => {
    const target = readlinkSync(real)
    const to = JSON.stringify(target).slice(0, 200)
    let st
    try {
      st = statSync(real)
    } catch {
      if (isCertName(name)) skip(shown, `a symbolic link that leads nowhere (to ${to}); not followed`)
      return
    }
    if (!st.isDirectory() && !isCertName(name)) return
    if (!followLinks) {
      skip(
        shown,
        `a symbolic link (to ${to}); not followed: links are followed only on request (--follow-links, or "Follow links inside the folder"), and only inside the folder`
      )
      return
    }
    const resolved = realpathSync(real)
    if (!inside(realRoot, resolved)) {
      skip(shown, `a symbolic link that leads out of the folder (to ${to}); never followed`)
      return
    }
    if (st.isDirectory()) walk(shown, resolved, depth + 1)
    else if (st.isFile()) scan.candidates.push({ path: shown, open: resolved, dir: dirname(shown), follow: true })
    else skip(shown, `a symbolic link to something that is not a regular file (${kindOf(st)}); not read`)
  }

  const walk = (shownDir: string, realDir: string, depth: number): void => {
    // A folder reached twice (a link loop, a link to a folder scanned already) is read once.
    if (depth > MAX_SCAN_DEPTH || seenDirs.has(realDir)) return
    seenDirs.add(realDir)
    let list: Dirent[]
    try {
      list = readdirSync(realDir, { withFileTypes: true })
    } catch (err) {
      skip(shownDir, `could not list this folder: ${(err as NodeJS.ErrnoException).code ?? 'error'}`)
      return
    }
    list.sort((a, b) => a.name.localeCompare(b.name))
    const hasLive = list.some((e) => e.name === 'live' && (e.isDirectory() || e.isSymbolicLink()))
    for (const e of list) {
      if (++entries > MAX_SCAN_ENTRIES) return
      const shown = join(shownDir, e.name)
      const real = join(realDir, e.name)
      if (e.isDirectory()) {
        if (e.name === 'archive' && hasLive) {
          // certbot keeps every earlier certificate in archive/; live/ links to the current ones.
          skip(
            shown,
            "Let's Encrypt's archive of earlier certificates: the current ones are read through live/ (with links followed)"
          )
        } else walk(shown, real, depth + 1)
      } else if (e.isSymbolicLink()) link(shown, real, e.name, depth)
      else if (!isCertName(e.name)) continue
      else if (e.isFile()) scan.candidates.push({ path: shown, open: real, dir: shownDir, follow: false })
      else skip(shown, `not a regular file (${kindOf(e)}); not read`)
    }
  }

  walk(root, realRoot, 0)
  return scan
}

/**
 * Names a certificate's key file has beside it: `site.key` for `site.crt` (Apache, nginx),
 * `site-key.pem` for `site.pem` (mkcert), `privkey.pem` beside `cert.pem` or `fullchain.pem`
 * (certbot's live/), `privkey2.pem` beside `cert2.pem` (its archive/).
 */
export function besideKeyNames(certName: string): string[] {
  const { name: stem } = parsePath(basename(certName))
  const names = [`${stem}.key`, `${stem}-key.pem`]
  const le = /^(?:cert|fullchain)(\d*)$/.exec(stem)
  if (le) names.push(`privkey${le[1]}.pem`)
  return names
}
