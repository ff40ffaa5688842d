// A private D-Bus session with an unlocked gnome-keyring, so the OS keychain is real in tests
// and in headless browser mode, without touching the user's own keyring. Linux only.
import { spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * Runs a daemon for as long as this process lives, and no longer: a small sh supervisor polls
 * our pid and stops the daemon once we are gone, even after a kill -9 (no orphaned daemons from
 * a killed test run), while a long-running `certdesk serve` keeps its keychain for days. The
 * daemon gets the supervisor's stdin through fd 3, because sh gives a background job /dev/null.
 */
function supervised(command, args, options) {
  const script = [
    'exec 3<&0',
    'owner=$1; shift',
    '"$@" <&3 3<&- &',
    'd=$!',
    "trap 'kill $d 2>/dev/null; exit 0' TERM INT HUP",
    'while kill -0 "$owner" 2>/dev/null && kill -0 "$d" 2>/dev/null; do sleep 1 & wait $!; done',
    'kill $d 2>/dev/null'
  ].join('\n')
  return spawn('sh', ['-c', script, 'sh', String(process.pid), command, ...args], options)
}

/** The password gnome-keyring files of the old layout (`<data dir>/keyring`) were made with. */
const FORMER_DEFAULT_PASSWORD = 'certdesk'

/** A refusal the user must act on (a message that says what to do); the command stops. */
export class KeyringError extends Error {}

/**
 * Starts dbus-daemon and gnome-keyring-daemon. `home` keeps the keyring files (in `home/data`;
 * a temp dir by default, removed on stop); `password` unlocks them (random by default, for a
 * keyring that lives only as long as the session). Returns the environment to give to
 * processes that use the keychain.
 */
export async function startKeyringSession({ home, password } = {}) {
  const base = home ?? mkdtempSync(join(tmpdir(), 'certdesk-keyring-'))
  const data = join(base, 'data')
  privateDir(base)
  privateDir(data)
  // The daemons' sockets live in a short temp path (a Unix socket path is limited to 108 bytes)
  // that goes away with the session; only the keyring files are kept in `home`.
  const runtime = mkdtempSync(join(tmpdir(), 'certdesk-keyring-run-'))
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, XDG_DATA_HOME: data }
  delete env.DBUS_SESSION_BUS_ADDRESS

  const children = []
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    for (const child of children.reverse()) child.kill('SIGTERM')
    rmSync(runtime, { recursive: true, force: true })
    if (!home) rmSync(base, { recursive: true, force: true })
  }
  try {
    const bus = supervised('dbus-daemon', ['--session', '--nofork', '--nopidfile', '--print-address=1'], {
      env,
      stdio: ['ignore', 'pipe', 'ignore']
    })
    children.push(bus)
    const address = await new Promise((resolve, reject) => {
      let out = ''
      const t = setTimeout(() => reject(new Error('could not start dbus-daemon: no address after 10 s')), 10_000)
      bus.stdout.on('data', (d) => {
        out += d
        const line = out.split('\n')[0]
        if (out.includes('\n')) {
          clearTimeout(t)
          resolve(line.trim())
        }
      })
      bus.on('error', (e) => reject(new Error(`could not start dbus-daemon: ${e.message}`)))
      bus.on('exit', (c) => reject(new Error(`could not start dbus-daemon: exited with ${c}`)))
    })
    bus.stdout.removeAllListeners('data')
    bus.stdout.resume()
    env.DBUS_SESSION_BUS_ADDRESS = address

    const keyring = supervised('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
      env,
      stdio: ['pipe', 'ignore', 'ignore']
    })
    children.push(keyring)
    keyring.stdin.end(password ?? randomBytes(24).toString('base64url'))
    // Ready when the Secret Service name has an owner on the private bus.
    for (let i = 0; !secretServiceAnswers({ DBUS_SESSION_BUS_ADDRESS: address }); i++) {
      if (i > 100) throw new Error('could not start gnome-keyring-daemon: the Secret Service did not appear')
      await sleep(100)
    }
  } catch (err) {
    stop()
    throw err
  }
  process.once('exit', stop)
  return {
    env: { DBUS_SESSION_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR: runtime, XDG_DATA_HOME: data },
    stop
  }
}

/** The value of `--name V` or `--name=V` on a command line, else undefined. */
function optionFromArgs(args, name) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name && args[i + 1] !== undefined) return args[i + 1]
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1)
  }
  return undefined
}

/** The data dir a command line names (`--data-dir D`), else CERTDESK_DATA_DIR, else the OS app-data dir. */
export function dataDirFromArgs(args, env = process.env) {
  return (
    optionFromArgs(args, '--data-dir') ||
    env.CERTDESK_DATA_DIR ||
    join(env.XDG_CONFIG_HOME ?? join(env.HOME || homedir(), '.config'), 'CertDesk')
  )
}

/**
 * Whether a command line (or CERTDESK_SECRETS) names a server key source (`--secrets file:PATH`
 * or `systemd`): then no keychain is used at all, and no keyring is started or joined.
 */
export function usesServerSecrets(args, env = process.env) {
  // `admin secrets init` makes a server's keys into a new file and opens no store at all.
  if (args.some((a, i) => a === 'secrets' && args[i + 1] === 'init')) return true
  const v = optionFromArgs(args, '--secrets') ?? env.CERTDESK_SECRETS
  return typeof v === 'string' && (v.trim() === 'systemd' || v.trim().startsWith('file:'))
}

/** `--keyring-dir` and `--keyring-password-file` of a command line, for `ensureKeyring`. */
export function keyringOptionsFromArgs(args) {
  return {
    keyringDir: optionFromArgs(args, '--keyring-dir'),
    passwordFile: optionFromArgs(args, '--keyring-password-file')
  }
}

/**
 * Where the stand-in keyring of a data dir lives: `--keyring-dir`, else CERTDESK_KEYRING_DIR,
 * else `$XDG_DATA_HOME/certdesk/keyrings/<id>` (`~/.local/share/...`), `<id>` naming the data
 * dir's absolute path. Never inside the data dir: a copy of the data dir (a backup) must not
 * carry what unwraps its keys. The same holds for a password file the user names.
 */
export function keyringLocation(dataDir, env = process.env, options = {}) {
  const data = resolve(dataDir)
  const chosen = options.keyringDir || env.CERTDESK_KEYRING_DIR
  const dir = resolve(
    chosen ||
      join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'certdesk', 'keyrings', keyringId(data))
  )
  const named = options.passwordFile || env.CERTDESK_KEYRING_PASSWORD_FILE
  const passwordFile = named ? resolve(named) : null
  if (isInside(dir, data)) {
    throw new KeyringError(
      `could not use the keyring in ${dir}: it is inside the data dir ${data}, and a backup of the data dir must not ` +
        'carry what unlocks its secrets; choose a folder outside it (--keyring-dir or CERTDESK_KEYRING_DIR)'
    )
  }
  if (passwordFile && isInside(passwordFile, data)) {
    throw new KeyringError(
      `could not use the keyring password file ${passwordFile}: it is inside the data dir ${data}, and a backup of ` +
        'the data dir must not carry what unlocks its secrets; keep it outside'
    )
  }
  return { dataDir: data, dir, passwordFile, generatedPasswordFile: join(dir, 'password') }
}

/** A short, stable name for a data dir: the first 16 hex digits of SHA-256 over its real path. */
function keyringId(dataDir) {
  return createHash('sha256').update(realish(dataDir)).digest('hex').slice(0, 16)
}

/** The real path of `p`, resolving symlinks of the part that exists (the rest may not yet). */
function realish(p) {
  const rest = []
  let cur = resolve(p)
  while (!existsSync(cur)) {
    const up = dirname(cur)
    if (up === cur) break
    rest.unshift(basename(cur))
    cur = up
  }
  try {
    return join(realpathSync(cur), ...rest)
  } catch {
    return resolve(p)
  }
}

function isInside(child, parent) {
  const rel = relative(realish(parent), realish(child))
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

function privateDir(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
}

/** True when `home` holds gnome-keyring files (`data/keyrings/*.keyring`). */
function hasKeyringFiles(home) {
  try {
    return readdirSync(join(home, 'data', 'keyrings')).some((f) => f.endsWith('.keyring'))
  } catch {
    return false
  }
}

/** The password that unlocks the keyring, and where it came from (for messages). */
function keyringPassword(loc, env, keyringExists) {
  if (env.CERTDESK_KEYRING_PASSWORD !== undefined) {
    if (env.CERTDESK_KEYRING_PASSWORD === '')
      throw new KeyringError('could not unlock the keyring: CERTDESK_KEYRING_PASSWORD is empty')
    return { password: env.CERTDESK_KEYRING_PASSWORD, source: 'CERTDESK_KEYRING_PASSWORD' }
  }
  if (loc.passwordFile) return { password: readPasswordFile(loc.passwordFile, true), source: loc.passwordFile }
  const file = loc.generatedPasswordFile
  if (!existsSync(file)) {
    if (keyringExists) {
      throw new KeyringError(
        `could not unlock the keyring in ${loc.dir}: its password file ${file} is missing; restore it from your backup, ` +
          'or give the password with CERTDESK_KEYRING_PASSWORD or --keyring-password-file'
      )
    }
    privateDir(loc.dir)
    try {
      // Created once, 0600, never overwritten ('wx'): a second process racing here reads this one's.
      writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' })
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
  }
  return { password: readPasswordFile(file, false), source: file }
}

/**
 * Reads a password file. One the user names must be theirs alone (as OpenSSH demands of a key
 * file); CertDesk's own file is set back to 0600 should something have loosened it.
 */
function readPasswordFile(file, userNamed) {
  let st
  try {
    st = statSync(file)
  } catch (err) {
    throw new KeyringError(
      `could not read the keyring password file ${file}: ${err.code === 'ENOENT' ? 'it does not exist' : err.message}`
    )
  }
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0')
    if (userNamed) {
      throw new KeyringError(
        `could not read the keyring password file ${file}: others may read or change it (mode ${mode}); run chmod 600 ${JSON.stringify(file)}`
      )
    }
    chmodSync(file, 0o600)
  }
  const password = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
  if (password === '') throw new KeyringError(`could not read the keyring password file ${file}: it is empty`)
  return password
}

function dbus(sessionEnv, args) {
  return spawnSync('dbus-send', ['--session', '--print-reply', ...args], {
    env: { ...process.env, ...sessionEnv },
    encoding: 'utf8',
    timeout: 5000
  })
}

const property = (sessionEnv, path, iface, name) =>
  dbus(sessionEnv, [
    '--dest=org.freedesktop.secrets',
    path,
    'org.freedesktop.DBus.Properties.Get',
    `string:${iface}`,
    `string:${name}`
  ])

function secretServiceAnswers(sessionEnv) {
  const r = dbus(sessionEnv, [
    '--dest=org.freedesktop.DBus',
    '/org/freedesktop/DBus',
    'org.freedesktop.DBus.NameHasOwner',
    'string:org.freedesktop.secrets'
  ])
  return Boolean(r.stdout && r.stdout.includes('boolean true'))
}

/** False when the password gnome-keyring was given does not open its keyring (it stays locked). */
function defaultCollectionUnlocked(sessionEnv) {
  const r = property(
    sessionEnv,
    '/org/freedesktop/secrets/aliases/default',
    'org.freedesktop.Secret.Collection',
    'Locked'
  )
  return Boolean(r.stdout && r.stdout.includes('boolean false'))
}

const objectPaths = (out) => [...(out ?? '').matchAll(/object path "([^"]+)"/g)].map((m) => m[1])

/**
 * Every item of every collection of a session, as the `service` and `username` attributes
 * `@napi-rs/keyring` gives its entries; null for an item without them (not made by CertDesk).
 */
function listItems(sessionEnv) {
  const collections = objectPaths(
    property(sessionEnv, '/org/freedesktop/secrets', 'org.freedesktop.Secret.Service', 'Collections').stdout
  )
  const items = []
  for (const collection of collections) {
    for (const item of objectPaths(
      property(sessionEnv, collection, 'org.freedesktop.Secret.Collection', 'Items').stdout
    )) {
      const strings = [
        ...(property(sessionEnv, item, 'org.freedesktop.Secret.Item', 'Attributes').stdout ?? '').matchAll(
          /^\s*string "(.*)"$/gm
        )
      ].map((m) => m[1])
      const attrs = new Map()
      for (let i = 0; i + 1 < strings.length; i += 2) attrs.set(strings[i], strings[i + 1])
      items.push(
        attrs.has('service') && attrs.has('username')
          ? { service: attrs.get('service'), username: attrs.get('username') }
          : null
      )
    }
  }
  return items
}

/**
 * Reads (`read`) or writes (`write`) entries through `@napi-rs/keyring` in a child process
 * bound to one D-Bus session; the secrets travel over its stdin and stdout only.
 */
function keyringItems(mode, sessionEnv, env, payload) {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'keyring-items.mjs')
  const r = spawnSync(process.execPath, [script, mode], {
    input: JSON.stringify(payload),
    env: { ...env, ...sessionEnv },
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024
  })
  if (r.status !== 0)
    throw new KeyringError(
      `could not ${mode} the keychain entries: ${(r.stderr || r.error?.message || 'no answer').split('\n')[0]}`
    )
  return JSON.parse(r.stdout)
}

/**
 * Opens a keyring of the old layout (`<data dir>/keyring`, unlocked with CERTDESK_KEYRING_PASSWORD
 * or else the former default password) in a session of its own, to move it out.
 */
async function openFormerKeyring(former, how, env) {
  const savedFile = join(former, 'session.json')
  if (existsSync(savedFile)) {
    let live = false
    try {
      live = secretServiceAnswers(JSON.parse(readFileSync(savedFile, 'utf8')))
    } catch {
      // a broken file: no live session
    }
    if (live) {
      throw new KeyringError(
        `could not ${how}: an older CertDesk process still uses it; stop that process (npm start, certdesk serve), then run this again`
      )
    }
  }
  const candidates = [...new Set([env.CERTDESK_KEYRING_PASSWORD, FORMER_DEFAULT_PASSWORD].filter(Boolean))]
  for (const password of candidates) {
    const s = await startKeyringSession({ home: former, password })
    if (defaultCollectionUnlocked(s.env)) return s
    s.stop()
  }
  throw new KeyringError(
    `could not ${how}: ${env.CERTDESK_KEYRING_PASSWORD ? 'neither CERTDESK_KEYRING_PASSWORD nor ' : ''}the former default ` +
      'password opens it; run this again with CERTDESK_KEYRING_PASSWORD set to the password it was made with'
  )
}

/**
 * Copies every entry of the old keyring's session into the new one through the Secret Service
 * API and reads them back; returns how many. The copy takes the new keyring's password, so the
 * former default password opens nothing any more.
 */
function copyEntries(oldEnv, newEnv, how, env) {
  const items = listItems(oldEnv)
  const foreign = items.filter((i) => i === null).length
  if (foreign > 0) {
    throw new KeyringError(
      `could not ${how}: it holds ${foreign} entr${foreign === 1 ? 'y' : 'ies'} CertDesk did not make; move them yourself ` +
        '(seahorse, secret-tool), then delete it'
    )
  }
  const entries = keyringItems('read', oldEnv, env, items)
  if (entries.some((e) => e.password === null))
    throw new KeyringError(`could not ${how}: some of its entries could not be read`)
  keyringItems('write', newEnv, env, entries)
  const copied = keyringItems('read', newEnv, env, items)
  if (JSON.stringify(copied) !== JSON.stringify(entries)) {
    throw new KeyringError(`could not ${how}: the copy does not read back the same`)
  }
  return entries.length
}

/**
 * Starts the keyring of `loc` and records its address for other CertDesk processes; the session
 * and the record go when this process exits. `created` says whether its files are new.
 */
async function startOwnKeyring(loc, env, { quiet }) {
  const exists = hasKeyringFiles(loc.dir)
  const { password, source } = keyringPassword(loc, env, exists)
  let started
  try {
    started = await startKeyringSession({ home: loc.dir, password })
  } catch (err) {
    process.stderr.write(`certdesk: no OS keychain here (${err.message}); commands that keep secrets will fail\n`)
    return null
  }
  if (!defaultCollectionUnlocked(started.env)) {
    started.stop()
    throw new KeyringError(`could not unlock the keyring in ${loc.dir}: the password from ${source} does not open it`)
  }
  if (!exists) {
    writeFileSync(join(loc.dir, 'data-dir'), `${loc.dataDir}\n`, { mode: 0o600 })
    process.stderr.write(
      `certdesk: no desktop keyring here; keeping secrets in a private gnome-keyring in ${loc.dir}, unlocked by ` +
        `${source === 'CERTDESK_KEYRING_PASSWORD' ? 'CERTDESK_KEYRING_PASSWORD' : `the password in ${source}`}. ` +
        'Back both up apart from the data dir: a copy of the data dir alone opens none of its secrets.\n'
    )
    if (!quiet && existsSync(join(loc.dataDir, 'certdesk.sqlite'))) {
      process.stderr.write(
        `certdesk: ${loc.dataDir} already holds a store, but its keyring is new: the keys kept before are in the keychain ` +
          'it was used with. If you moved or restored the data dir, point --keyring-dir (or CERTDESK_KEYRING_DIR) at that ' +
          'keyring folder.\n'
      )
    }
  }
  const file = join(loc.dir, 'session.json')
  writeFileSync(file, JSON.stringify(started.env), { mode: 0o600 })
  const stop = () => {
    try {
      if (JSON.parse(readFileSync(file, 'utf8')).DBUS_SESSION_BUS_ADDRESS === started.env.DBUS_SESSION_BUS_ADDRESS)
        rmSync(file)
    } catch {
      // already gone
    }
    started.stop()
  }
  process.once('exit', stop)
  return { env: started.env, created: !exists, stop }
}

/**
 * A headless Linux machine has no session keyring. CertDesk then keeps its secrets in a private
 * gnome-keyring outside the data dir (`keyringLocation`), unlocked with CERTDESK_KEYRING_PASSWORD,
 * or the password in `--keyring-password-file`/CERTDESK_KEYRING_PASSWORD_FILE, or else a random
 * password made on first use in `<keyring dir>/password` (0600). The first CertDesk process to
 * need it starts it and leaves its address in `<keyring dir>/session.json`; others (an admin
 * command next to `npm start`) join that one, so only one daemon ever writes the keyring files.
 *
 * A keyring of the old layout (`<data dir>/keyring`, with the former default password) is moved
 * out on the way: its entries are copied into the new keyring, read back and compared, and only
 * then is the old folder deleted. Anything unexpected leaves the old keyring as it was (and
 * removes a new keyring made for the move), and says what to do.
 *
 * Sets the session variables in `env`; a no-op where a session bus exists. Throws KeyringError
 * when the set-up is unsafe or cannot open the keyring; returns false (and says why) when this
 * machine has no gnome-keyring to run.
 */
export async function ensureKeyring(dataDir, env = process.env, options = {}) {
  if (process.platform !== 'linux' || env.DBUS_SESSION_BUS_ADDRESS) return true
  const loc = keyringLocation(dataDir, env, options)
  const former = join(loc.dataDir, 'keyring')
  if (!hasKeyringFiles(former)) {
    const session = joinRunning(loc.dir) ?? (await startOwnKeyring(loc, env, { quiet: false }))?.env
    if (!session) return false
    Object.assign(env, session)
    return true
  }

  const how = `move the keyring ${former} out of the data dir to ${loc.dir}`
  const old = await openFormerKeyring(former, how, env)
  let own = null
  let session
  let moved
  try {
    session = joinRunning(loc.dir)
    if (!session) {
      own = await startOwnKeyring(loc, env, { quiet: true })
      if (!own) throw new KeyringError(`could not ${how}: the new keyring did not start`)
      session = own.env
    }
    moved = copyEntries(old.env, session, how, env)
  } catch (err) {
    if (own?.created) {
      own.stop()
      rmSync(loc.dir, { recursive: true, force: true })
    }
    throw err instanceof KeyringError ? new KeyringError(`${err.message}; the old keyring is left as it was`) : err
  } finally {
    // Its daemon must be gone before its files are.
    old.stop()
  }
  rmSync(former, { recursive: true, force: true })
  process.stderr.write(
    `certdesk: moved ${moved} keychain entr${moved === 1 ? 'y' : 'ies'} out of the data dir into ${loc.dir}, under the ` +
      `keyring's own password; ${former} is deleted. Backups made before still hold the old keyring with the former ` +
      'default password: delete them, or rotate the secrets they hold.\n'
  )
  Object.assign(env, session)
  return true
}

/** The session another CertDesk process runs for this keyring, when it still answers. */
function joinRunning(dir) {
  const file = join(dir, 'session.json')
  if (!existsSync(file)) return null
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    return secretServiceAnswers(saved) ? saved : null
  } catch {
    return null // a stale or broken file: start a fresh session
  }
}
