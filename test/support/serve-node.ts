/**
 * `certdesk serve` as a server node runs it: its own environment (no D-Bus session, a key source
 * named by `--secrets`), its own arguments (the public listener), its printed addresses read
 * back, and stopped by signal. The admin CLI runs beside it with the same environment.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { CLI } from './cli'

export interface ServeNode {
  child: ChildProcess
  /** The loopback reseller API. */
  api: string
  /** Everything serve printed on stdout so far. */
  stdout(): string
  stderr(): string
  exited: Promise<number>
  stop(): Promise<number>
}

/**
 * The environment of a server without a desktop session: no D-Bus address (so no Secret Service
 * can be reached) and none of the headless keyring's variables; HOME and XDG_DATA_HOME where the
 * test can see whether anything was made there.
 */
export function serverEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_DATA_HOME: `${home}/.local/share`, ...extra }
  for (const k of Object.keys(env)) {
    if (k === 'DBUS_SESSION_BUS_ADDRESS' || k.startsWith('CERTDESK_KEYRING') || k === 'XDG_RUNTIME_DIR') delete env[k]
  }
  return env
}

/** `certdesk …` to its end with `env`, its JSON answer parsed. */
export function certdeskIn(
  env: NodeJS.ProcessEnv,
  args: string[]
): { code: number; json: Record<string, unknown>; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 })
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(r.stdout || r.stderr)
  } catch {
    // not JSON: the test reads stdout/stderr
  }
  return { code: r.status ?? -1, json, stdout: r.stdout, stderr: r.stderr }
}

/**
 * Starts serve and resolves once it printed `waitFor` (the public listener's line by default: the
 * last one). `wrap` runs it elsewhere, such as on a test client's machine (client-network.ts
 * `argv`); the wrapper must exec serve, so that the signals reach it.
 */
export async function startServeNode(
  env: NodeJS.ProcessEnv,
  args: string[],
  waitFor: RegExp = /CertDesk reseller API v3\.0 listening on (http:\/\/\S+)/,
  wrap: (cmd: string, args: string[]) => string[] = (cmd, a) => [cmd, ...a]
): Promise<ServeNode> {
  // Under a small sh supervisor that passes SIGHUP and SIGTERM on and stops serve once this test
  // process is gone, even after a kill -9 of the worker: no server outlives a killed test run.
  const supervisor = [
    '"$@" & c=$!',
    "trap 'kill -HUP $c' HUP",
    "trap 'kill -TERM $c' TERM",
    'while kill -0 "$OWNER" 2>/dev/null && kill -0 $c 2>/dev/null; do sleep 1 & wait $!; done',
    'kill -0 $c 2>/dev/null && kill -TERM $c',
    'wait $c'
  ].join('\n')
  const child = spawn(
    'sh',
    ['-c', supervisor, 'sh', ...wrap(process.execPath, [CLI, 'serve', '--port', '0', ...args])],
    {
      env: { ...env, OWNER: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  let out = ''
  let err = ''
  child.stdout?.on('data', (d) => (out += d))
  child.stderr?.on('data', (d) => (err += d))
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not print ${waitFor} in 60 s: ${out}${err}`)), 60_000)
    const look = (): void => {
      if (waitFor.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', look)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}: ${out}${err}`))
    })
  })
  const api = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? ''
  return {
    child,
    api,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    }
  }
}
