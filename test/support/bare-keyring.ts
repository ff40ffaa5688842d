/**
 * A D-Bus session bus WITHOUT service activation, with a real gnome-keyring-daemon on it that a
 * test can kill and start again. On such a bus (a session whose keyring was started by the login
 * session, a container, a headless box) a killed keyring daemon leaves no Secret Service at all
 * until it is started again, unlike the standard session bus, where the next call has D-Bus
 * start a locked one. That is the case in which a keyring library may fall back to the kernel's
 * in-memory keyring (`/proc/keys`), and what these helpers let a test reproduce.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

export interface BareKeyring {
  /** DBUS_SESSION_BUS_ADDRESS and the XDG folders gnome-keyring keeps its files under. */
  env: NodeJS.ProcessEnv
  /** Starts the keyring daemon (unlocked with the session's password) and waits for the Secret Service. */
  startDaemon(): Promise<void>
  /** SIGKILLs the keyring daemon and waits until the Secret Service name has no owner. */
  killDaemon(): Promise<void>
  secretServiceUp(): boolean
  stop(): void
}

/** Starts the bus in `dir` (a short path: a Unix socket path is limited to 108 bytes). */
export async function startBareKeyring(dir: string, password: string): Promise<BareKeyring> {
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 })
  mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 })
  const socket = join(dir, 'run', 'bus')
  const config = join(dir, 'bus.conf')
  // No <servicedir> and no <standard_session_servicedirs/>: nothing is ever activated.
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`
  )
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${socket}`,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_RUNTIME_DIR: join(dir, 'run')
  }
  const children: ChildProcess[] = []
  // `timeout` ends each daemon even if this test process is killed.
  const bus = spawn('timeout', ['--signal=KILL', '600', 'dbus-daemon', `--config-file=${config}`, '--nofork'], {
    env,
    stdio: 'ignore'
  })
  children.push(bus)
  const busUp = (): boolean =>
    spawnSync(
      'dbus-send',
      ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/', 'org.freedesktop.DBus.GetId'],
      {
        env,
        timeout: 5_000
      }
    ).status === 0
  for (let i = 0; !busUp(); i++) {
    if (i > 100) throw new Error('could not start the test D-Bus session: it did not answer')
    await sleep(100)
  }
  const secretServiceUp = (): boolean => secretServiceOn(env)
  let daemon: ChildProcess | null = null
  const daemonPid = (): number | null => (daemon ? childOf(daemon) : null)
  return {
    env,
    secretServiceUp,
    async startDaemon() {
      daemon = spawn(
        'timeout',
        ['--signal=KILL', '600', 'gnome-keyring-daemon', '--foreground', '--unlock', '--components=secrets'],
        { env, stdio: ['pipe', 'ignore', 'ignore'] }
      )
      children.push(daemon)
      daemon.stdin?.end(password)
      for (let i = 0; !secretServiceUp(); i++) {
        if (i > 150) throw new Error('could not start gnome-keyring-daemon: the Secret Service did not appear')
        await sleep(100)
      }
    },
    async killDaemon() {
      const pid = daemonPid()
      if (!pid) throw new Error('could not find the test keyring daemon')
      process.kill(pid, 'SIGKILL')
      for (let i = 0; secretServiceUp(); i++) {
        if (i > 100) throw new Error('the Secret Service is still there after its daemon was killed')
        await sleep(100)
      }
    },
    stop() {
      for (const c of children.reverse()) {
        const pid = childOf(c)
        try {
          if (pid) process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
        c.kill('SIGKILL')
      }
    }
  }
}

/** Whether the Secret Service name has an owner on the session bus of `env`. */
export const secretServiceOn = (env: NodeJS.ProcessEnv): boolean =>
  spawnSync(
    'dbus-send',
    [
      '--session',
      '--print-reply',
      '--dest=org.freedesktop.DBus',
      '/org/freedesktop/DBus',
      'org.freedesktop.DBus.NameHasOwner',
      'string:org.freedesktop.secrets'
    ],
    { env, encoding: 'utf8', timeout: 5_000 }
  ).stdout.includes('boolean true')

/** The process `timeout` runs (its only child), or null once it is gone. */
function childOf(wrapper: ChildProcess): number | null {
  if (!wrapper.pid) return null
  try {
    const pid = Number(readFileSync(`/proc/${wrapper.pid}/task/${wrapper.pid}/children`, 'utf8').trim().split(/\s+/)[0])
    return pid || null
  } catch {
    return null
  }
}

/** Lines of `/proc/keys` (the keys of the kernel's keyrings this process may view) naming `text`. */
export const kernelKeysNaming = (text: string): string[] =>
  readFileSync('/proc/keys', 'utf8')
    .split('\n')
    .filter((l) => l.includes(text))
