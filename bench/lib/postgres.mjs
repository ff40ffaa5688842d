// A PostgreSQL 15 server for a bench run (Debian's packages): `initdb` into a folder of the run,
// its own free port, reached over its socket in that folder only, PostgreSQL's own defaults
// (fsync and synchronous_commit on: a team server keeps what it acknowledged) and the settings
// the caller adds. initdb refuses root, so as
// root the server runs as the `postgres` system user. `setpriv --pdeathsig` stops it with the
// bench process however that ends.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './procs.mjs'

export const PG_BIN = '/usr/lib/postgresql/15/bin'
const USER = 'certdesk'

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts })
  if (r.status !== 0) throw new Error(`could not run ${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || '').trim()}`)
  return r.stdout
}

function account() {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' })
  if (id('-u').status !== 0)
    run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) }
}

/**
 * Starts the server, with `settings` (name → value) on top of the defaults; `database(name)`
 * creates an empty database and answers its URL.
 */
export async function startBenchPostgres(settings = {}) {
  if (!existsSync(join(PG_BIN, 'initdb'))) throw new Error(`could not start PostgreSQL: ${PG_BIN}/initdb is missing`)
  const owner = account()
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-bench-pg-'))
  chmodSync(dir, 0o700)
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, 'data')
  run(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-U', USER, '--auth-local=trust', '--auth-host=reject', '-E', 'UTF8', '--locale=C.UTF-8'],
    owner ?? {}
  )
  const port = await freePort()
  const server = spawn(
    'setpriv',
    [
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
      'listen_addresses=',
      '-c',
      'max_connections=200',
      ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])
    ],
    { ...(owner ?? {}), stdio: ['ignore', 'ignore', 'pipe'] }
  )
  let log = ''
  server.stderr.on('data', (b) => (log = (log + b).slice(-4000)))
  const psql = (database, sql) =>
    run(join(PG_BIN, 'psql'), [
      '-h',
      dir,
      '-p',
      String(port),
      '-U',
      USER,
      '-d',
      database,
      '-v',
      'ON_ERROR_STOP=1',
      '-qAtc',
      sql
    ])
  for (let i = 0; ; i++) {
    const r = spawnSync(join(PG_BIN, 'pg_isready'), ['-h', dir, '-p', String(port)], { encoding: 'utf8' })
    if (r.status === 0) break
    if (i > 600 || server.exitCode !== null) throw new Error(`could not start PostgreSQL: ${log}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    psql,
    database(name) {
      psql('postgres', `CREATE DATABASE ${name}`)
      return `postgres://${USER}@localhost:${port}/${name}?host=${encodeURIComponent(dir)}`
    },
    async stop() {
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve))
        server.kill('SIGINT')
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
