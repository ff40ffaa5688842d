/**
 * HAProxy (Debian's /usr/sbin/haproxy) in front of several CertDesk nodes, as a team server runs
 * it: one frontend per service on a free loopback port, each in TCP mode (TLS passed through to
 * the nodes, the ACME server) or HTTP mode (the reseller API), round robin over the nodes, a
 * node marked down after two failed connection checks, and a connection a dead node refuses
 * sent to another one (`option redispatch`, `retries`).
 *
 * Its configuration lives in a temporary folder of its own. It stops with `stop()`, and also
 * when the test process dies however it dies: `setpriv --pdeathsig KILL` ends HAProxy with its
 * parent, and a detached watcher removes the folder once that process is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './acme'

export const HAPROXY = '/usr/sbin/haproxy'

export interface Backend {
  name: string
  host?: string
  port: number
}

export interface FrontendSpec {
  mode: 'tcp' | 'http'
  /** The loopback port to listen on; a free one unless given (a URL named before HAProxy starts). */
  port?: number
  backends: Backend[]
  /**
   * HTTP mode over TLS: HAProxy ends the clients' TLS with this certificate chain and key and
   * opens its own TLS to each node, checked against `nodeCaPem` for `nodeName` (sent as SNI too).
   * Each request then goes to the next node, not each connection (TCP mode passes TLS through
   * and keeps a client's connection on one node).
   */
  tls?: { chainPem: string; keyPem: string; nodeCaPem: string; nodeName: string }
}

export interface Balancer<K extends string> {
  /** The loopback port of each frontend. */
  ports: Record<K, number>
  /** The folder holding haproxy.cfg and the admin socket. */
  dir: string
  /** HAProxy's process (setpriv runs it in its own place). */
  pid: number
  /** What HAProxy thinks of each node of a frontend now (`UP`, `DOWN`, …), from its admin socket. */
  states(frontend: K): Promise<Record<string, string>>
  /**
   * Requests (HTTP mode: answers of any status) or connections (TCP mode) each node of a
   * frontend has had so far, from HAProxy's statistics.
   */
  served(frontend: K): Promise<Record<string, number>>
  /** Everything HAProxy wrote to stderr. */
  log(): string
  stop(): Promise<void>
}

/** Milliseconds between two connection checks of a node; two failed ones mark it down. */
const CHECK_INTER_MS = 300

function config(dir: string, frontends: [string, FrontendSpec, number][]): string {
  const lines = [
    'global',
    '  maxconn 4096',
    `  stats socket ${join(dir, 'admin.sock')} mode 600 level admin`,
    '',
    'defaults',
    '  timeout connect 2s',
    // Long enough for an ACME finalize or a slow order under load; a dead node's connections
    // end at once anyway (the kernel resets them).
    '  timeout client 60s',
    '  timeout server 60s',
    '  retries 3',
    '  option redispatch',
    ''
  ]
  for (const [name, spec, port] of frontends) {
    if (spec.tls) {
      writeFileSync(join(dir, `${name}.pem`), `${spec.tls.chainPem.trim()}\n${spec.tls.keyPem.trim()}\n`, {
        mode: 0o600
      })
      writeFileSync(join(dir, `${name}-nodes-ca.pem`), spec.tls.nodeCaPem)
    }
    const bind = spec.tls ? ` ssl crt ${join(dir, `${name}.pem`)}` : ''
    const toNode = spec.tls
      ? ` ssl verify required ca-file ${join(dir, `${name}-nodes-ca.pem`)} verifyhost ${spec.tls.nodeName} sni str(${spec.tls.nodeName})`
      : ''
    if (spec.tls && spec.mode !== 'http') throw new Error(`could not configure ${name}: TLS is ended in HTTP mode only`)
    lines.push(
      `frontend ${name}`,
      `  mode ${spec.mode}`,
      `  bind 127.0.0.1:${port}${bind}`,
      `  default_backend ${name}_nodes`,
      '',
      `backend ${name}_nodes`,
      `  mode ${spec.mode}`,
      '  balance roundrobin',
      ...(spec.mode === 'http' ? ['  option http-keep-alive'] : []),
      `  default-server inter ${CHECK_INTER_MS}ms fall 2 rise 1`,
      ...spec.backends.map((b) => `  server ${b.name} ${b.host ?? '127.0.0.1'}:${b.port} check${toNode}`),
      ''
    )
  }
  return lines.join('\n')
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })
}

export async function startHaproxy<K extends string>(frontends: Record<K, FrontendSpec>): Promise<Balancer<K>> {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-haproxy-'))
  const entries: [K, FrontendSpec, number][] = []
  for (const [name, spec] of Object.entries(frontends) as [K, FrontendSpec][]) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`could not name a frontend ${name}`)
    entries.push([name, spec, spec.port ?? (await freePort())])
  }
  const cfg = join(dir, 'haproxy.cfg')
  writeFileSync(cfg, config(dir, entries))
  const check = spawn(HAPROXY, ['-c', '-q', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
  let checkErr = ''
  check.stderr?.on('data', (d) => (checkErr += d))
  const checked = await new Promise<number>((r) => check.on('exit', (code) => r(code ?? -1)))
  if (checked !== 0) throw new Error(`could not start HAProxy: its configuration is refused: ${checkErr}`)

  // -db: in the foreground, no master process; -W would fork a master that outlives setpriv's signal.
  const child: ChildProcess = spawn('setpriv', ['--pdeathsig', 'KILL', '--', HAPROXY, '-db', '-f', cfg], {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let log = ''
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const watcher = spawn(
    'sh',
    ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; sleep 2; rm -rf "${dir}"`],
    { detached: true, stdio: 'ignore' }
  )
  watcher.unref()

  const started = Date.now()
  for (const [, , port] of entries) {
    while (!(await listening(port))) {
      if (child.exitCode !== null || Date.now() - started > 30_000) {
        child.kill('SIGKILL')
        throw new Error(`could not start HAProxy on 127.0.0.1:${port}: ${log}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  const admin = (command: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = connect(join(dir, 'admin.sock'))
      let out = ''
      s.on('data', (d) => (out += d))
      s.on('end', () => resolve(out))
      s.on('error', reject)
      s.end(`${command}\n`)
    })

  return {
    ports: Object.fromEntries(entries.map(([name, , port]) => [name, port])) as Record<K, number>,
    dir,
    pid: child.pid ?? -1,
    states: async (frontend) => {
      // `show servers state <backend>`: one line per server, its name 4th and operational state 6th
      // (0 stopped, 1 starting, 2 running, 3 soft-stopped).
      const out = await admin(`show servers state ${frontend}_nodes`)
      const states: Record<string, string> = {}
      for (const line of out.split('\n')) {
        const f = line.trim().split(/\s+/)
        if (f.length < 6 || !/^\d+$/.test(f[0])) continue
        states[f[3]] = f[5] === '2' ? 'UP' : 'DOWN'
      }
      return states
    },
    served: async (frontend) => {
      const mode = frontends[frontend].mode
      // `show stat`: CSV with a `# pxname,svname,…` header line, one line per server.
      const [header, ...rows] = (await admin('show stat')).split('\n').filter((l) => l.trim() !== '')
      const col = header.replace(/^#\s*/, '').split(',')
      const at = (name: string): number => col.indexOf(name)
      const counts: Record<string, number> = {}
      for (const row of rows) {
        const f = row.split(',')
        if (f[at('pxname')] !== `${frontend}_nodes` || ['BACKEND', 'FRONTEND'].includes(f[at('svname')])) continue
        counts[f[at('svname')]] =
          mode === 'http'
            ? ['hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx', 'hrsp_5xx'].reduce(
                (n, c) => n + Number(f[at(c)] || 0),
                0
              )
            : Number(f[at('stot')] || 0)
      }
      return counts
    },
    log: () => log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
