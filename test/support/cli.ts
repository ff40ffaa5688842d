import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { engineEnv } from './engine-env'

export const ROOT = join(__dirname, '..', '..')
export const CLI = join(ROOT, 'bin', 'certdesk.cjs')

/** The environment for `certdesk args`: the engine of the test run for the data dir it names. */
export function envFor(args: string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const i = args.indexOf('--data-dir')
  return i >= 0 && args[i + 1] ? engineEnv(args[i + 1], env) : env
}

/** Runs `certdesk …` to the end and parses its JSON output. */
export function certdesk(
  args: string[],
  env: NodeJS.ProcessEnv = process.env
): { code: number; json: Record<string, unknown>; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: envFor(args, env), timeout: 60_000 })
  let json: Record<string, unknown>
  try {
    json = JSON.parse(r.stdout || r.stderr)
  } catch {
    json = {}
  }
  return { code: r.status ?? -1, json, stderr: r.stderr }
}

/** `certdesk admin credit add`: a top-up written by the admin CLI, another process than the server. */
export function cliTopUp(dataDir: string, resellerId: number, usd: number): ReturnType<typeof certdesk> {
  return certdesk([
    'admin',
    '--data-dir',
    dataDir,
    'credit',
    'add',
    '--reseller',
    String(resellerId),
    '--amount',
    String(usd)
  ])
}

/** `certdesk serve` on a free port; resolves with its base URL once it printed it. */
export async function serve(
  dataDir: string,
  extra: string[] = []
): Promise<{ url: string; child: ChildProcess; exited: Promise<number> }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', ...extra], {
    env: engineEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
  let err = ''
  child.stderr?.on('data', (d) => (err += d))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 30 s: ${err}`)), 30_000)
    child.stdout?.on('data', (d) => {
      out += d
      const m = /(http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })
  return { url, child, exited }
}

/**
 * `certdesk …` without blocking this process, for commands that talk back to a server the test
 * runs (a webhook receiver): spawnSync would stop its event loop.
 */
export function certdeskAsync(
  args: string[],
  timeoutMs = 60_000
): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: envFor(args, process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs
    })
    let out = ''
    let err = ''
    child.stdout?.on('data', (d) => (out += d))
    child.stderr?.on('data', (d) => (err += d))
    child.on('close', (code) => {
      let json: Record<string, unknown>
      try {
        json = JSON.parse(out || err)
      } catch {
        json = {}
      }
      resolve({ code: code ?? -1, json, stderr: err })
    })
  })
}
