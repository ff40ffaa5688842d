/**
 * A real PostgreSQL for the tests: Debian's PostgreSQL 15 server (`initdb` into a temporary
 * folder, its own free port on 127.0.0.1, its socket in that folder), started once per test run
 * by the global setup, with a migrated template database; each test file takes a fresh
 * database copied from the template (`CREATE DATABASE … TEMPLATE`, a file copy, far quicker
 * than migrating again).
 *
 * initdb and postgres refuse to run as root, so as root the server runs as the `postgres`
 * system user (created when missing). It ends with the run however the run ends: `stop()` in
 * the global teardown; `setpriv --pdeathsig` sends it SIGINT (fast shutdown) when the process
 * that started it dies, even by SIGKILL; and a detached watcher removes the folder then.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './acme'

export const PG_BIN = '/usr/lib/postgresql/15/bin'
/** The superuser the tests connect as. */
const USER = 'certdesk'
const TEMPLATE = 'certdesk_template'

/** What the global setup hands the test files through the environment. */
interface ServerInfo {
  socketDir: string
  port: number
  password: string
}
const ENV = 'CERTDESK_TEST_POSTGRES'

function run(cmd: string, args: string[], opts: { uid?: number; gid?: number } = {}): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts })
  if (r.status !== 0) throw new Error(`could not run ${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || '').trim()}`)
}

/** The unprivileged account to run the server as, or undefined when we are not root. */
function serverAccount(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' })
  if (id('-u').status !== 0)
    run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) }
}

export interface RunningPostgres {
  info: ServerInfo
  env: Record<string, string>
  stop(): Promise<void>
}

/** Starts the server and migrates the template database (global setup). */
export async function startPostgres(migrate: (client: pg.Client) => Promise<unknown>): Promise<RunningPostgres> {
  if (!existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(
      `could not start PostgreSQL for the tests: ${PG_BIN}/initdb is missing (Debian: apt-get install postgresql; npm run setup does it)`
    )
  }
  const account = serverAccount()
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-pg-'))
  const data = join(dir, 'data')
  const password = randomBytes(18).toString('hex')
  const pwfile = join(dir, 'pw')
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 })
  chmodSync(dir, 0o700)
  if (account) {
    chownSync(dir, account.uid, account.gid)
    chownSync(pwfile, account.uid, account.gid)
  }
  // Local (socket) connections are trusted: only this folder's owner can reach the socket.
  // TCP on 127.0.0.1 asks for the password (SCRAM), so the tests can see a refused one.
  run(
    join(PG_BIN, 'initdb'),
    [
      '-D',
      data,
      '-U',
      USER,
      `--pwfile=${pwfile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-sync'
    ],
    account ?? {}
  )
  rmSync(pwfile)
  const port = await freePort()
  const args = [
    '--pdeathsig',
    'INT',
    '--',
    join(PG_BIN, 'postgres'),
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    // A test server: nothing here must survive a power cut, and every file starts one database.
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
    '-c',
    'shared_buffers=64MB'
  ]
  const server: ChildProcess = spawn('setpriv', args, { ...(account ?? {}), stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  server.stderr?.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-4000)))
  // Removes the folder once this process is gone, however it went.
  const watcher = spawn(
    'sh',
    ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; sleep 5; rm -rf "${dir}"`],
    { detached: true, stdio: 'ignore' }
  )
  watcher.unref()
  const info: ServerInfo = { socketDir: dir, port, password }
  const started = Date.now()
  for (;;) {
    const c = new pg.Client(adminConfig(info, 'postgres'))
    try {
      await c.connect()
      await c.end()
      break
    } catch (err) {
      await c.end().catch(() => undefined)
      if (server.exitCode !== null || Date.now() - started > 60_000)
        throw new Error(`could not start PostgreSQL for the tests: ${(err as Error).message}\n${log}`, { cause: err })
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const admin = new pg.Client(adminConfig(info, 'postgres'))
  await admin.connect()
  await admin.query(`CREATE DATABASE ${TEMPLATE}`)
  await admin.end()
  const template = new pg.Client(adminConfig(info, TEMPLATE))
  await template.connect()
  try {
    await migrate(template)
  } finally {
    await template.end()
  }
  return {
    info,
    env: { [ENV]: JSON.stringify(info) },
    stop: async () => {
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once('exit', r))
        server.kill('SIGINT')
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function serverInfo(): ServerInfo {
  const raw = process.env[ENV]
  if (!raw) throw new Error('could not find the test PostgreSQL: the vitest global setup starts it')
  return JSON.parse(raw) as ServerInfo
}

function adminConfig(info: ServerInfo, database: string): pg.ClientConfig {
  return { host: info.socketDir, port: info.port, user: USER, database }
}

export interface TestDatabase {
  /** A URL over the server's socket, as `--database` takes it. */
  url: string
  /** The same database over TCP on 127.0.0.1 with the password. */
  tcpUrl: string
  name: string
  port: number
  password: string
  drop(): Promise<void>
}

/**
 * A fresh database for one test file: migrated to the newest schema (a copy of the template),
 * or empty with `{ empty: true }` for tests of the migrations themselves.
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const info = serverInfo()
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client(adminConfig(info, 'postgres'))
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}${opts.empty ? '' : ` TEMPLATE ${TEMPLATE}`}`)
  } finally {
    await admin.end()
  }
  return {
    name,
    port: info.port,
    password: info.password,
    url: `postgres://${USER}@localhost:${info.port}/${name}?host=${encodeURIComponent(info.socketDir)}`,
    tcpUrl: `postgres://${USER}:${info.password}@127.0.0.1:${info.port}/${name}`,
    drop: async () => {
      const a = new pg.Client(adminConfig(info, 'postgres'))
      await a.connect()
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await a.end()
      }
    }
  }
}
