// A private D-Bus session with an unlocked gnome-keyring, so the OS keychain is real in tests
// and in headless browser mode, without touching the user's own keyring. Linux only.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
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
