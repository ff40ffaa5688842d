/**
 * A team server on loopback, with real parts: `certdesk serve` nodes as separate processes on
 * one PostgreSQL database of the test server (postgres.ts), HAProxy in front of them
 * (haproxy.ts: the reseller API to the nodes' loopback listeners; the public name's frontend to
 * the nodes' public TLS listeners, ending TLS and opening its own to a node, or passing TLS
 * through), and an admin's view of the same book in this process (a service opened on the
 * database, as `certdesk admin --database` would).
 *
 * Every node is started with the one public base URL, `https://certs.team.test:<frontend port>`
 * (`--public-url`), and its public listener on a loopback port of its own (`--public-listen`):
 * the ACME directory and every URL a node hands out name the balancer. The name is no name of
 * this machine; clients resolve it to HAProxy through `team.via` (a hosts file of their own,
 * client-network.ts) or `team.lookup` (Node's https agents).
 *
 * Each node runs under `setpriv --pdeathsig KILL`, so none outlives the test process however it
 * ends; `kill()` sends SIGKILL to the node itself, as a crash or the OOM killer would.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { lookup, type LookupOptions } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openService, type Service } from '../../src-main/core/service'
import { usdToCents } from '../../src-main/core/billing/money'
import { listenerKeyAndCsr } from '../../src-main/acme/listener-key'
import { freePort } from './acme'
import { CLI } from './cli'
import { startHaproxy, type Balancer } from './haproxy'
import { createTestDatabase, type TestDatabase } from './postgres'
import { hostsOverlay } from './client-network'

/** TEAM_NAME is the balancer (127.0.0.1); any other name as the system resolves it. */
const teamLookup = ((hostname: string, options: LookupOptions, callback: (...a: unknown[]) => void) => {
  if (hostname.toLowerCase() !== TEAM_NAME) return lookup(hostname, options, callback as never)
  if (options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }])
  return callback(null, '127.0.0.1', 4)
}) as unknown as LookupFunction

/** The public name of the team's tests: a DNS name (public-url.ts refuses `localhost`), resolved by the clients alone. */
export const TEAM_NAME = 'certs.team.test'

export interface TeamNode {
  name: string
  pid: number
  apiPort: number
  acmePort: number
  /** The node's public TLS listener (on 127.0.0.1), which the balancer's public frontend reaches. */
  publicPort: number
  /** The node's own reseller API, past the balancer. */
  api: string
  /** What the node wrote on stdout and stderr so far. */
  output(): string
  exited: Promise<number | string>
  /** SIGKILL to the node: no clean-up of any kind runs. */
  kill(): Promise<void>
  /** SIGTERM: the node stops as `serve` does on a signal. */
  stop(): Promise<number | string>
}

export interface NodeOptions {
  name: string
  database: string
  /** The public base URL, the balancer's: https://certs.team.test:<port>. */
  publicUrl: string
  schedulerSeconds?: number
  apiPort?: number
  acmePort?: number
  publicPort?: number
}

export async function startTeamNode(opts: NodeOptions): Promise<TeamNode> {
  const apiPort = opts.apiPort ?? (await freePort())
  const acmePort = opts.acmePort ?? (await freePort())
  const publicPort = opts.publicPort ?? (await freePort())
  const dataDir = mkdtempSync(join(tmpdir(), `certdesk-${opts.name}-`))
  const args = [
    CLI,
    'serve',
    '--data-dir',
    dataDir,
    '--database',
    opts.database,
    '--port',
    String(apiPort),
    '--acme-port',
    String(acmePort),
    '--public-url',
    opts.publicUrl,
    '--public-listen',
    `127.0.0.1:${publicPort}`,
    // Behind the balancer every client has its address: the per-address limit would count
    // them all as one (public-listener.ts, DEFAULT_PUBLIC_RATE).
    '--public-rate-limit',
    '0',
    ...(opts.schedulerSeconds ? ['--scheduler-interval', String(opts.schedulerSeconds)] : [])
  ]
  const child: ChildProcess = spawn('setpriv', ['--pdeathsig', 'KILL', '--', process.execPath, ...args], {
    env: { ...process.env, CERTDESK_DATABASE: undefined },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout?.on('data', (d) => (out += d))
  child.stderr?.on('data', (d) => (out += d))
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      rmSync(dataDir, { recursive: true, force: true })
      resolve(code ?? signal ?? -1)
    })
  )
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${opts.name} did not start in 90 s: ${out}`)), 90_000)
    const look = (): void => {
      if (/listening on/.test(out) && /ACME directory at/.test(out) && /public listener \(TLS\) on/.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', look)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${opts.name} exited with ${code}: ${out}`))
    })
  })
  return {
    name: opts.name,
    pid: child.pid ?? -1,
    apiPort,
    acmePort,
    publicPort,
    api: `http://127.0.0.1:${apiPort}`,
    output: () => out,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    }
  }
}

export interface Team {
  db: TestDatabase
  nodes: TeamNode[]
  balancer: Balancer<'api' | 'acme'>
  /** The reseller API through the balancer. */
  api: string
  /** The public base URL, the balancer's (https://certs.team.test:<port>); the ACME server is under /acme. */
  acmeBase: string
  /** The argv that runs a client command that resolves TEAM_NAME to the balancer (certbot, lego). */
  via(cmd: string, args: string[]): string[]
  /** A `lookup` for Node's agents that resolves TEAM_NAME to the balancer. */
  lookup: LookupFunction
  /** The book as an admin sees it, from this process. */
  admin: Service
  /** A reseller in the Standard group with `credit` USD and an API key. */
  reseller(name: string, credit: number): Promise<{ id: number; key: string }>
  /** The node a `job_runs` row names (`host:pid:tag`), if it is one of the team's. */
  nodeNamed(runNode: string): TeamNode | undefined
  /** Starts another node on the same book, behind the balancer in the place of `replaces`. */
  restart(replaces: TeamNode): Promise<TeamNode>
  stop(): Promise<void>
}

export interface TeamOptions {
  schedulerSeconds?: number
  /**
   * How HAProxy carries the public name: `http` ends TLS with a certificate of the CertDesk CA
   * for TEAM_NAME, opens its own TLS to a node's public listener (checked for the same name) and
   * sends each request to the next node (a client's requests, and so its nonces, go from node to
   * node); `tcp` passes TLS through to the nodes' public listeners, one client connection to one
   * node.
   */
  acmeMode?: 'http' | 'tcp'
  /** The reseller API's frontend: `tcp` (a connection per node) unless `http` (a request per node). */
  apiMode?: 'http' | 'tcp'
  /** What the book holds before any node starts, written through the admin's service. */
  before?: (admin: Service) => Promise<void>
}

/**
 * `count` nodes started together on a fresh database (so their start-up races are part of the
 * test), then HAProxy in front of them.
 */
export async function startTeam(count: number, opts: TeamOptions = {}): Promise<Team> {
  const db = await createTestDatabase()
  const adminDir = mkdtempSync(join(tmpdir(), 'certdesk-team-admin-'))
  const admin = await openService({ dataDir: adminDir, database: db.url })
  await opts.before?.(admin)
  const acmeFront = await freePort()
  const acmeBase = `https://${TEAM_NAME}:${acmeFront}`
  const ports = await Promise.all(
    Array.from({ length: count }, async () => ({
      api: await freePort(),
      acme: await freePort(),
      public: await freePort()
    }))
  )
  const nodes = await Promise.all(
    ports.map((p, i) =>
      startTeamNode({
        name: `node${i + 1}`,
        database: db.url,
        publicUrl: acmeBase,
        schedulerSeconds: opts.schedulerSeconds,
        apiPort: p.api,
        acmePort: p.acme,
        publicPort: p.public
      })
    )
  )
  const acmeMode = opts.acmeMode ?? 'http'
  let tls: { chainPem: string; keyPem: string; nodeCaPem: string; nodeName: string } | undefined
  if (acmeMode === 'http') {
    // The balancer's own certificate for the public name, from the CA the nodes (and every
    // ACME client) trust.
    const k = await listenerKeyAndCsr([TEAM_NAME])
    tls = {
      chainPem: await admin.acmeServer.listenerCertificate(k.csrDer, [TEAM_NAME]),
      keyPem: k.keyPem,
      nodeCaPem: await admin.acmeServer.rootPem(),
      nodeName: TEAM_NAME
    }
  }
  const balancer = await startHaproxy({
    api: { mode: opts.apiMode ?? 'tcp', backends: nodes.map((n) => ({ name: n.name, port: n.apiPort })) },
    acme: {
      mode: acmeMode,
      port: acmeFront,
      tls,
      backends: nodes.map((n) => ({ name: n.name, port: n.publicPort }))
    }
  })
  const hosts = hostsOverlay(TEAM_NAME, '127.0.0.1')
  let counter = 0
  return {
    db,
    nodes,
    balancer,
    api: `http://127.0.0.1:${balancer.ports.api}`,
    acmeBase,
    via: hosts.argv,
    lookup: teamLookup,
    admin,
    async reseller(name, credit) {
      counter += 1
      const r = await admin.resellers.create({
        name,
        email: `team-${counter}@example.test`,
        company: `${name} Ltd`,
        groupId: 1,
        discountRate: 0
      })
      if (credit > 0) await admin.ledger.topUp(r.id, usdToCents(credit))
      return { id: r.id, key: (await admin.resellers.createApiKey(r.id)).key }
    },
    nodeNamed(runNode) {
      const pid = Number(runNode.split(':').at(-2))
      return nodes.find((n) => n.pid === pid)
    },
    async restart(replaces) {
      const node = await startTeamNode({
        name: replaces.name,
        database: db.url,
        publicUrl: acmeBase,
        schedulerSeconds: opts.schedulerSeconds,
        apiPort: replaces.apiPort,
        acmePort: replaces.acmePort,
        publicPort: replaces.publicPort
      })
      nodes[nodes.indexOf(replaces)] = node
      return node
    },
    async stop() {
      await balancer.stop()
      hosts.close()
      await Promise.all(nodes.map((n) => n.stop()))
      await admin.close()
      rmSync(adminDir, { recursive: true, force: true })
      await db.drop()
    }
  }
}
