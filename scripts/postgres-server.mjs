// A private PostgreSQL server for the tests, the benchmarks and the reliability run: Debian's
// PostgreSQL 15 (`initdb` into a temporary folder, its own free port on 127.0.0.1, its socket in
// that folder). initdb and postgres refuse to run as root, so as root the server runs as the
// `postgres` system user (created when missing). It ends with the process that started it
// however that one ends: `stop()`; `setpriv --pdeathsig INT` (a fast shutdown when the starter
// dies, even by SIGKILL); and a detached watcher that removes the folder then.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export const PG_BIN = '/usr/lib/postgresql/15/bin'
/** The superuser the callers connect as. */
export const PG_USER = 'certdesk'

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts })
  if (r.status !== 0) throw new Error(`could not run ${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || '').trim()}`)
}

/** The unprivileged account to run the server as, or undefined when we are not root. */
function serverAccount() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined
  const id = (flag) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' })
  if (id('-u').status !== 0)
    run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) }
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.unref()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port
      s.close(() => resolve(port))
    })
  })

/**
 * Starts the server. `settings` are `-c name=value` pairs on top of the defaults below (a test
 * server turns durability off; a benchmark keeps fsync and full-page writes, as a real one).
 */
export async function startPostgresServer({ settings = {} } = {}) {
  if (!existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(
      `could not start PostgreSQL: ${PG_BIN}/initdb is missing (Debian: apt-get install postgresql; npm run setup does it)`
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
  // TCP on 127.0.0.1 asks for the password (SCRAM), so a refused one can be seen.
  run(
    join(PG_BIN, 'initdb'),
    [
      '-D',
      data,
      '-U',
      PG_USER,
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
  const all = { listen_addresses: '127.0.0.1', max_connections: '300', shared_buffers: '64MB', ...settings }
  const args = ['--pdeathsig', 'INT', '--', join(PG_BIN, 'postgres'), '-D', data, '-p', String(port), '-k', dir]
  for (const [k, v] of Object.entries(all)) args.push('-c', `${k}=${v}`)
  const server = spawn('setpriv', args, { ...(account ?? {}), stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  server.stderr?.on('data', (b) => (log = (log + b.toString()).slice(-4000)))
  // Removes the folder once this process is gone, however it went.
  const watcher = spawn(
    'sh',
    ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; sleep 5; rm -rf "${dir}"`],
    { detached: true, stdio: 'ignore' }
  )
  watcher.unref()
  const info = { socketDir: dir, port, password }
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
        throw new Error(`could not start PostgreSQL: ${err.message}\n${log}`, { cause: err })
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    info,
    pid: server.pid,
    /** A URL over the socket (trusted), as `--database` takes it. */
    socketUrl: (database) => `postgres://${PG_USER}@localhost:${port}/${database}?host=${encodeURIComponent(dir)}`,
    /** The same database over TCP on 127.0.0.1 with the password. */
    tcpUrl: (database) => `postgres://${PG_USER}:${password}@127.0.0.1:${port}/${database}`,
    /** Runs `sql` as the superuser in `database` (default: postgres). */
    async query(sql, database = 'postgres') {
      const c = new pg.Client(adminConfig(info, database))
      await c.connect()
      try {
        return await c.query(sql)
      } finally {
        await c.end()
      }
    },
    async stop() {
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once('exit', r))
        server.kill('SIGINT')
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export function adminConfig(info, database) {
  return { host: info.socketDir, port: info.port, user: PG_USER, database }
}
