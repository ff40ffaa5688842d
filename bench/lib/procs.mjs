// Child processes of a bench or reliability run. Each server runs under `timeout`, so it stops
// by itself even when the run that started it is killed; `stop` ends it early.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { CLI } from './paths.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/** CPU milliseconds (user + system) the process `pid` has used so far, from /proc. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK
}

/** A free TCP port on 127.0.0.1 (free when asked; a listener takes it soon after). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/** The median of a list of figures (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const running = new Set()
const servers = new Set()
// SIGKILL to `timeout` would leave its child running, so the servers themselves are killed too.
process.once('exit', () => {
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const p of running) p.kill('SIGKILL')
})

/** The pid of the process `timeout` runs (the one whose memory and death matter). */
async function childPid(pid) {
  for (let i = 0; i < 200; i++) {
    try {
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
      if (kids) return Number(kids.split(/\s+/)[0])
    } catch {
      // not there yet, or gone: checked again below
    }
    await sleep(10)
  }
  throw new Error(`could not find the process started by timeout (pid ${pid})`)
}

/**
 * Starts `node <script> …args` under `timeout` and resolves when it printed a URL on stdout.
 * Returns { url, pid (the node process), rss(), kill9(), stop(), exited, log() }.
 */
export async function startNode(script, args, { env = process.env, lifetime = 1200, nodeArgs = [] } = {}) {
  const t0 = process.hrtime.bigint()
  const child = spawn('timeout', ['--signal=KILL', String(lifetime), process.execPath, ...nodeArgs, script, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  running.add(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child)
      resolve(code ?? signal)
    })
  )
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} printed no URL in 120 s: ${err}`)), 120_000)
    const look = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout.on('data', look)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited with ${code} before listening: ${err}`))
    })
  })
  const pid = await childPid(child.pid)
  servers.add(pid)
  void exited.then(() => servers.delete(pid))
  return {
    url,
    pid,
    startedAt: t0,
    exited,
    log: () => out + err,
    alive: () => child.exitCode === null && child.signalCode === null,
    /** Resident memory of the server process in MB: now and at its peak. */
    rss() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
      return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }
    },
    kill9() {
      process.kill(pid, 'SIGKILL')
      return exited
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // already gone
      }
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const code = await exited
      clearTimeout(t)
      return code
    }
  }
}

/** `certdesk serve` on a free loopback port over `dataDir`; `nodeArgs` such as `--cpu-prof`. */
export const startCertdesk = (dataDir, env, extra = [], nodeArgs = []) =>
  startNode(CLI, ['serve', '--data-dir', dataDir, '--port', '0', ...extra], { env, nodeArgs })
