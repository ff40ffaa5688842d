/**
 * Real ACME helpers for tests: free loopback ports, pebble-challtestsrv as the DNS server
 * challenges are checked against, and a runner for certbot/lego/openssl. Every process is
 * started under `timeout`, so it stops by itself even when a test fails or vitest is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command to its end (killed after `seconds`), collecting its output. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; seconds?: number; input?: string; cwd?: string } = {}
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('timeout', ['-k', '5', String(opts.seconds ?? 120), cmd, ...args], {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    // A command that never reads its input may exit before we close it.
    child.stdin.on('error', () => undefined)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(opts.input ?? '')
  })
}

export interface ChallTestSrv {
  dns: string
  management: string
  stop(): Promise<void>
}

/**
 * pebble-challtestsrv as a real DNS server on loopback: every A query answers 127.0.0.1 unless
 * the management API says otherwise (TXT records for dns-01 are set through it).
 */
export async function startChallTestSrv(
  opts: {
    /** `address:port` the DNS server answers on; a free loopback port by default. */
    dns?: string
    /** What every A query answers unless set otherwise; 127.0.0.1 by default. */
    defaultIPv4?: string
  } = {}
): Promise<ChallTestSrv> {
  const dnsAt = opts.dns ?? `127.0.0.1:${await freePort()}`
  const mgmtPort = await freePort()
  const child: ChildProcess = spawn(
    'timeout',
    [
      '-k',
      '5',
      '900',
      'pebble-challtestsrv',
      '-dns01',
      dnsAt,
      '-management',
      `127.0.0.1:${mgmtPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-defaultIPv4',
      opts.defaultIPv4 ?? '127.0.0.1',
      '-defaultIPv6',
      ''
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let log = ''
  child.stdout?.on('data', (d) => (log += d))
  child.stderr?.on('data', (d) => (log += d))
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const management = `http://127.0.0.1:${mgmtPort}`
  for (let i = 0; ; i++) {
    try {
      // Any answer from the management API means both listeners are up.
      await fetch(`${management}/clear-txt`, { method: 'POST', body: JSON.stringify({ host: 'ready.test.' }) })
      break
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error(`could not start pebble-challtestsrv: ${log}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    dns: dnsAt,
    management,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    }
  }
}

export async function setTxt(srv: ChallTestSrv, host: string, value: string): Promise<void> {
  const res = await fetch(`${srv.management}/set-txt`, {
    method: 'POST',
    body: JSON.stringify({ host: `${host}.`, value })
  })
  if (!res.ok) throw new Error(`could not set TXT ${host}: ${res.status}`)
}

/** Answers `host` with `address` (A) instead of the default. */
export async function setA(srv: ChallTestSrv, host: string, address: string): Promise<void> {
  const res = await fetch(`${srv.management}/add-a`, {
    method: 'POST',
    body: JSON.stringify({ host: `${host}.`, addresses: [address] })
  })
  if (!res.ok) throw new Error(`could not set A ${host}: ${res.status}`)
}

/** `certbot certonly --standalone` over http-01 with EAB, its folders under `dir`. */
export function certbotCertonly(o: {
  server: string
  kid: string
  hmac: string
  httpPort: number
  address: string
  dir: string
  names: string[]
  email?: string
}): string[] {
  return [
    'certonly',
    '--standalone',
    '--non-interactive',
    '--agree-tos',
    '-m',
    o.email ?? 'ops@example.com',
    '--server',
    o.server,
    '--eab-kid',
    o.kid,
    `--eab-hmac-key=${o.hmac}`,
    '--preferred-challenges',
    'http',
    '--http-01-port',
    String(o.httpPort),
    '--http-01-address',
    o.address,
    '--config-dir',
    join(o.dir, 'config'),
    '--work-dir',
    join(o.dir, 'work'),
    '--logs-dir',
    join(o.dir, 'logs'),
    ...o.names.flatMap((n) => ['-d', n])
  ]
}
