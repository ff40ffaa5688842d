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
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { adminConfig, PG_BIN, PG_USER, startPostgresServer } from '../../scripts/postgres-server.mjs'

export { PG_BIN }
const TEMPLATE = 'certdesk_template'

/** What the global setup hands the test files through the environment. */
interface ServerInfo {
  socketDir: string
  port: number
  password: string
}
const ENV = 'CERTDESK_TEST_POSTGRES'

export interface RunningPostgres {
  info: ServerInfo
  env: Record<string, string>
  stop(): Promise<void>
}

/** Starts the server and migrates the template database (global setup). */
export async function startPostgres(migrate: (client: pg.Client) => Promise<unknown>): Promise<RunningPostgres> {
  // A test server: nothing here must survive a power cut, and every file starts one database.
  const server = await startPostgresServer({
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }
  })
  await server.query(`CREATE DATABASE ${TEMPLATE}`)
  const template = new pg.Client(adminConfig(server.info, TEMPLATE))
  await template.connect()
  try {
    await migrate(template)
  } finally {
    await template.end()
  }
  return { info: server.info, env: { [ENV]: JSON.stringify(server.info) }, stop: () => server.stop() }
}

export function serverInfo(): ServerInfo {
  const raw = process.env[ENV]
  if (!raw) throw new Error('could not find the test PostgreSQL: the vitest global setup starts it')
  return JSON.parse(raw) as ServerInfo
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
    url: `postgres://${PG_USER}@localhost:${info.port}/${name}?host=${encodeURIComponent(info.socketDir)}`,
    tcpUrl: `postgres://${PG_USER}:${info.password}@127.0.0.1:${info.port}/${name}`,
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
