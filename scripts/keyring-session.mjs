// A private D-Bus session with an unlocked gnome-keyring, so the OS keychain is real in tests
// and in headless browser mode, without touching the user's own keyring. Linux only.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Longest a session may live: the daemons stop by themselves even if we are killed. */
const MAX_LIFETIME = '4h'

/**
 * Starts dbus-daemon and gnome-keyring-daemon. `home` keeps the keyring files (a temp dir by
 * default, removed on stop). Returns the environment to give to processes that use the keychain.
 */
export async function startKeyringSession({ home, password = 'certdesk-test' } = {}) {
  const base = home ?? mkdtempSync(join(tmpdir(), 'certdesk-keyring-'))
  const runtime = join(base, 'runtime')
  const data = join(base, 'data')
  mkdirSync(runtime, { recursive: true, mode: 0o700 })
  mkdirSync(data, { recursive: true, mode: 0o700 })
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, XDG_DATA_HOME: data }
  delete env.DBUS_SESSION_BUS_ADDRESS

  const bus = spawn('timeout', [MAX_LIFETIME, 'dbus-daemon', '--session', '--nofork', '--nopidfile', '--print-address=1'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore']
  })
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

  const keyring = spawn(
    'timeout',
    [MAX_LIFETIME, 'gnome-keyring-daemon', '--foreground', '--unlock', '--components=secrets'],
    { env, stdio: ['pipe', 'ignore', 'ignore'] }
  )
  keyring.stdin.end(password)
  // Ready when the Secret Service name has an owner on the private bus.
  for (let i = 0; ; i++) {
    const r = spawnSync(
      'dbus-send',
      ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus',
        'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets'],
      { env, encoding: 'utf8' }
    )
    if (r.stdout && r.stdout.includes('boolean true')) break
    if (i > 100) throw new Error('could not start gnome-keyring-daemon: the Secret Service did not appear')
    await sleep(100)
  }

  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    keyring.kill('SIGTERM')
    bus.kill('SIGTERM')
    if (!home) rmSync(base, { recursive: true, force: true })
  }
  process.once('exit', stop)
  return {
    env: { DBUS_SESSION_BUS_ADDRESS: address, XDG_RUNTIME_DIR: runtime, XDG_DATA_HOME: data },
    stop
  }
}

/** The data dir a command line names (`--data-dir D`), else CERTDESK_DATA_DIR, else the OS app-data dir. */
export function dataDirFromArgs(args, env = process.env) {
  const i = args.indexOf('--data-dir')
  if (i >= 0 && args[i + 1]) return args[i + 1]
  return env.CERTDESK_DATA_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'CertDesk')
}

function secretServiceAnswers(sessionEnv) {
  const r = spawnSync(
    'dbus-send',
    ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus',
      'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets'],
    { env: { ...process.env, ...sessionEnv }, encoding: 'utf8', timeout: 3000 }
  )
  return Boolean(r.stdout && r.stdout.includes('boolean true'))
}

/**
 * A headless Linux machine has no session keyring. CertDesk then keeps its secrets in a private
 * gnome-keyring whose files live in `<data dir>/keyring`, unlocked with CERTDESK_KEYRING_PASSWORD
 * (default `certdesk`). The first CertDesk process to need it starts it and leaves its address in
 * `keyring/session.json`; others (an admin command next to `npm start`) join that one, so only
 * one daemon ever writes the keyring files. Sets the session variables in `env`; a no-op where a
 * session bus exists. Returns false (and says why) when no keyring could be had.
 */
export async function ensureKeyring(dataDir, env = process.env) {
  if (process.platform !== 'linux' || env.DBUS_SESSION_BUS_ADDRESS) return true
  const home = join(dataDir, 'keyring')
  const file = join(home, 'session.json')
  if (existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8'))
      if (secretServiceAnswers(saved)) {
        Object.assign(env, saved)
        return true
      }
    } catch {
      // a stale or broken file: start a fresh session below
    }
  }
  try {
    if (!existsSync(home)) {
      process.stderr.write(
        `certdesk: no desktop keyring here; keeping secrets in a private gnome-keyring in ${home}` +
          `${env.CERTDESK_KEYRING_PASSWORD ? '' : ' (set CERTDESK_KEYRING_PASSWORD to choose its password)'}\n`
      )
    }
    const session = await startKeyringSession({ home, password: env.CERTDESK_KEYRING_PASSWORD ?? 'certdesk' })
    writeFileSync(file, JSON.stringify(session.env), { mode: 0o600 })
    process.once('exit', () => {
      try {
        if (JSON.parse(readFileSync(file, 'utf8')).DBUS_SESSION_BUS_ADDRESS === session.env.DBUS_SESSION_BUS_ADDRESS) rmSync(file)
      } catch {
        // already gone
      }
      session.stop()
    })
    Object.assign(env, session.env)
    return true
  } catch (err) {
    process.stderr.write(`certdesk: no OS keychain here (${err.message}); commands that keep secrets will fail\n`)
    return false
  }
}
