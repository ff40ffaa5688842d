// Everything a fresh machine needs before CertDesk runs or tests: system packages (Debian,
// when root and missing), npm dependencies (with the offline Electron fallback), and the build.
// Safe to run again: each step is skipped when already done.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const log = (msg) => process.stderr.write(`setup: ${msg}\n`)

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts })
  return r.status === 0
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0

/** Commands the tests and the app use, and the Debian package that provides each. */
const SYSTEM = [
  ['dbus-daemon', 'dbus'],
  ['dbus-send', 'dbus'],
  ['gnome-keyring-daemon', 'gnome-keyring'],
  ['chromium', 'chromium'],
  ['openssl', 'openssl'],
  ['pebble', 'pebble'],
  ['pebble-challtestsrv', 'pebble'],
  ['certbot', 'certbot'],
  ['lego', 'lego'],
  // The load generator of the mixed-load section of `npm run bench` (bench/lib/mixed.lua).
  ['wrk', 'wrk'],
  // Real web servers the deploy tests start on loopback ports and reload through command targets.
  ['nginx', 'nginx'],
  ['apache2', 'apache2'],
  ['haproxy', 'haproxy'],
  // libfiu's fiu-run: injects I/O errors (ENOSPC, EIO) into a running process for the fault tests.
  ['fiu-run', 'fiu-utils'],
  // The PostgreSQL server the tests start for the store's second engine (test/support/postgres.ts);
  // Debian keeps its programs off PATH, so the check names the file.
  ['/usr/lib/postgresql/15/bin/initdb', 'postgresql']
]

export function ensureSystemPackages() {
  if (process.platform !== 'linux') return
  const missing = [...new Set(SYSTEM.filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg))]
  if (missing.length === 0) return
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (!root || !has('apt-get')) {
    log(`missing system packages: ${missing.join(' ')}; install them (Debian: apt-get install ${missing.join(' ')})`)
    return
  }
  log(`installing system packages: ${missing.join(' ')}`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  run('apt-get', ['update', '-qq'], { env })
  // Debian starts a freshly installed nginx or apache2 on port 80; the tests start their own on
  // loopback high ports, so the packages' services must not start (policy-rc.d exit 101 = deny).
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = !existsSync(policy)
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 })
  try {
    if (!run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env })) {
      throw new Error(`could not install system packages: ${missing.join(' ')}`)
    }
  } finally {
    if (ownPolicy) rmSync(policy, { force: true })
  }
}

async function canReach(host) {
  try {
    await Promise.race([lookup(host), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 3000))])
    return true
  } catch {
    return false
  }
}

export async function ensureNodeModules() {
  const lock = readFileSync(join(root, 'package-lock.json'))
  const want = createHash('sha256').update(lock).digest('hex')
  const marker = join(root, 'node_modules', '.certdesk-installed')
  if (existsSync(marker) && readFileSync(marker, 'utf8') === want) return
  const env = { ...process.env }
  // npm's electron package downloads its binary from GitHub at install time. Offline, skip
  // that download: everything but the window runs without it (browser mode).
  if (!env.ELECTRON_SKIP_BINARY_DOWNLOAD && !(await canReach('github.com'))) {
    log(
      'the Electron binary cannot be downloaded here (no route to github.com); installing without it, npm start will use browser mode'
    )
    env.ELECTRON_SKIP_BINARY_DOWNLOAD = '1'
  }
  log('installing npm dependencies (npm ci; better-sqlite3 may build from source, about 90 s)')
  if (!run('npm', ['ci', '--no-audit', '--no-fund'], { env })) {
    if (env.ELECTRON_SKIP_BINARY_DOWNLOAD) throw new Error('could not install npm dependencies')
    log('npm ci failed; retrying without the Electron binary download, npm start will use browser mode')
    env.ELECTRON_SKIP_BINARY_DOWNLOAD = '1'
    if (!run('npm', ['ci', '--no-audit', '--no-fund'], { env })) throw new Error('could not install npm dependencies')
  }
  writeFileSync(marker, want)
}

export function build() {
  if (!run(join(root, 'node_modules', '.bin', 'electron-vite'), ['build', '--logLevel', 'warn'])) {
    throw new Error('could not build CertDesk')
  }
}

/** Where the Electron build of better-sqlite3 goes; the Node build stays where npm put it. */
export const ELECTRON_NATIVE_DIR = join(root, 'node_modules', '.certdesk-electron')

/** The Electron binary npm installed, or null (offline installs skip its download). */
export function electronBinary() {
  const dir = join(root, 'node_modules', 'electron')
  const pathTxt = join(dir, 'path.txt')
  if (!existsSync(pathTxt)) return null
  const bin = join(dir, 'dist', readFileSync(pathTxt, 'utf8').trim())
  return existsSync(bin) ? bin : null
}

/**
 * Two runtimes, one native module: Node (CLI, tests, browser mode) and Electron (the window)
 * have different ABIs. better-sqlite3 stays built for Node; where the Electron binary exists, a
 * second copy is built for Electron's ABI into node_modules/.certdesk-electron and the window
 * opens the store with it (better-sqlite3's `nativeBinding` option). That build downloads
 * Electron's headers; when it cannot, set-up says so in one line and npm start uses browser mode.
 */
export function ensureElectronNative() {
  const bin = electronBinary()
  if (!bin) return
  const version = JSON.parse(readFileSync(join(root, 'node_modules', 'electron', 'package.json'), 'utf8')).version
  const marker = join(ELECTRON_NATIVE_DIR, 'built-for')
  if (existsSync(marker) && readFileSync(marker, 'utf8') === version) return
  const nodeGyp = process.env.npm_config_node_gyp
  if (!nodeGyp) {
    log('cannot build better-sqlite3 for Electron (run set-up through npm); npm start will use browser mode')
    return
  }
  const work = mkdtempSync(join(tmpdir(), 'certdesk-electron-native-'))
  try {
    cpSync(join(root, 'node_modules', 'better-sqlite3'), work, { recursive: true })
    rmSync(join(work, 'build'), { recursive: true, force: true })
    const env = { ...process.env }
    // A nodedir in npm's config would point node-gyp at Node's headers, not Electron's.
    delete env.npm_config_nodedir
    const ok = run(
      process.execPath,
      [
        nodeGyp,
        'rebuild',
        '--release',
        '--runtime=electron',
        `--target=${version}`,
        '--dist-url=https://electronjs.org/headers'
      ],
      { cwd: work, env, stdio: 'ignore' }
    )
    if (!ok) {
      log(
        `could not build better-sqlite3 for Electron ${version} (its headers could not be downloaded); npm start will use browser mode`
      )
      return
    }
    mkdirSync(ELECTRON_NATIVE_DIR, { recursive: true })
    cpSync(join(work, 'build', 'Release', 'better_sqlite3.node'), join(ELECTRON_NATIVE_DIR, 'better_sqlite3.node'))
    writeFileSync(marker, version)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

export async function setup() {
  ensureSystemPackages()
  await ensureNodeModules()
  ensureElectronNative()
  build()
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  setup().catch((err) => {
    log(err.message)
    process.exit(1)
  })
}
