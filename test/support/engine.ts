/**
 * Which store engine a test run uses, and the service opened on it. `CERTDESK_TEST_ENGINE=postgres`
 * (scripts/test.mjs sets it for its second vitest run) puts every book in PostgreSQL: each data
 * dir a test opens gets a fresh database of the test server (postgres.ts), the same one each
 * time that data dir is opened again (a restart, a second process), so a test reads exactly as
 * it does on SQLite. The CLI and `serve` processes a test starts get it through
 * CERTDESK_DATABASE. Databases are dropped when the test file ends (engine-cleanup.ts).
 *
 * A test that reaches into the SQLite file itself (a backup, a lock held by another process, a
 * crash point, a full disk) is SQLite-only by nature: its file is named `*.sqlite.test.ts`, and
 * the PostgreSQL run leaves it out (vitest.config.mts).
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openService as openRealService, type Service, type ServiceOptions } from '../../src-main/core/service'
import { SqliteStore } from '../../src-main/core/store'
import { DB_FILE, type Db } from '../../src-main/core/store/db'
import { databaseFor } from './engine-env'
import { PG_BIN, serverInfo } from './postgres'

export { databaseFor, dropDatabases, engineEnv, TEST_ENGINE } from './engine-env'

const ROOT = join(__dirname, '..', '..')

/** The core's `openService`, on the engine of this run. */
export function openService(opts: ServiceOptions): Promise<Service> {
  return openRealService({ ...opts, database: opts.database ?? databaseFor(opts.dataDir) })
}

/** The SQLite connection of a service, for what only a SQLite test does (pragmas, migrations). */
export function sqliteOf(service: Service): Db {
  const store = service.ctx.store
  if (!(store instanceof SqliteStore)) throw new Error('this step runs on SQLite only')
  return store.writer
}

/**
 * Every byte the store of `service` keeps, for tests that a secret never reaches it: the data
 * dir's files after a WAL checkpoint on SQLite, a dump of the database on PostgreSQL.
 */
export function storedBytes(service: Service): { where: string; bytes: Buffer }[] {
  if (service.engine === 'sqlite') sqliteOf(service).pragma('wal_checkpoint(TRUNCATE)')
  return bookBytes(service.dataDir)
}

/**
 * Every byte the book of `dataDir` keeps, as another process finds it (no service open in this
 * one): the data dir's files (the SQLite file and its WAL) on SQLite, a dump of the database on
 * PostgreSQL.
 */
export function bookBytes(dataDir: string): { where: string; bytes: Buffer }[] {
  const url = databaseFor(dataDir)
  if (!url) {
    return readdirSync(dataDir)
      .filter((f) => statSync(join(dataDir, f)).isFile())
      .map((f) => ({ where: f, bytes: readFileSync(join(dataDir, f)) }))
  }
  const info = serverInfo()
  const name = new URL(url).pathname.slice(1)
  const r = spawnSync(
    join(PG_BIN, 'pg_dump'),
    ['-h', info.socketDir, '-p', String(info.port), '-U', 'certdesk', '--data-only', name],
    { maxBuffer: 256 * 1024 * 1024 }
  )
  if (r.status !== 0) throw new Error(`could not dump ${name}: ${String(r.stderr)}`)
  return [{ where: `database ${name}`, bytes: r.stdout }]
}

/** `bookBytes` as one text, for `toContain` / `not.toContain`. */
export const bookText = (dataDir: string): string =>
  bookBytes(dataDir)
    .map((b) => b.bytes.toString('latin1'))
    .join('')

/**
 * Runs `sql` (one or more statements) on the book of `dataDir` from another process, as a
 * repair by hand or another admin tool would, knowing nothing of CertDesk: better-sqlite3 on
 * the SQLite file, psql on the PostgreSQL database.
 */
export function writeByHand(dataDir: string, sql: string): void {
  const url = databaseFor(dataDir)
  if (url) {
    const info = serverInfo()
    const name = new URL(url).pathname.slice(1)
    const r = spawnSync(
      join(PG_BIN, 'psql'),
      [
        '-h',
        info.socketDir,
        '-p',
        String(info.port),
        '-U',
        'certdesk',
        '-d',
        name,
        '-v',
        'ON_ERROR_STOP=1',
        '-qc',
        sql
      ],
      { encoding: 'utf8' }
    )
    if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
    return
  }
  const sqlite = createRequire(join(ROOT, 'package.json')).resolve('better-sqlite3')
  const script = `const D = require(${JSON.stringify(sqlite)}); const db = new D(process.argv[1]); db.pragma('busy_timeout = 5000'); db.exec(process.argv[2]); db.close()`
  const r = spawnSync(process.execPath, ['-e', script, join(dataDir, DB_FILE), sql], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
}

/** The first column of the first row of `sql`, read from the book of `dataDir` by another process. */
export function readByHand(dataDir: string, sql: string): string | number | null {
  const url = databaseFor(dataDir)
  if (url) {
    const info = serverInfo()
    const name = new URL(url).pathname.slice(1)
    const r = spawnSync(
      join(PG_BIN, 'psql'),
      [
        '-h',
        info.socketDir,
        '-p',
        String(info.port),
        '-U',
        'certdesk',
        '-d',
        name,
        '-v',
        'ON_ERROR_STOP=1',
        '-Atqc',
        sql
      ],
      { encoding: 'utf8' }
    )
    if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
    const text = r.stdout.split('\n')[0]
    return text === '' ? null : /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text
  }
  const sqlite = createRequire(join(ROOT, 'package.json')).resolve('better-sqlite3')
  const script = `const D = require(${JSON.stringify(sqlite)}); const db = new D(process.argv[1], { readonly: true }); process.stdout.write(JSON.stringify(db.prepare(process.argv[2]).pluck().get() ?? null)); db.close()`
  const r = spawnSync(process.execPath, ['-e', script, join(dataDir, DB_FILE), sql], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
  return JSON.parse(r.stdout) as string | number | null
}

/** Every row of `sql` (no placeholders) read from the book of `dataDir` by another process, as JSON values. */
export function rowsByHand<T = Record<string, unknown>>(dataDir: string, sql: string): T[] {
  const url = databaseFor(dataDir)
  if (url) {
    const text = readByHand(dataDir, `SELECT COALESCE(json_agg(t), '[]'::json)::text FROM (${sql}) t`)
    return JSON.parse(String(text)) as T[]
  }
  const sqlite = createRequire(join(ROOT, 'package.json')).resolve('better-sqlite3')
  const script = `const D = require(${JSON.stringify(sqlite)}); const db = new D(process.argv[1], { readonly: true }); process.stdout.write(JSON.stringify(db.prepare(process.argv[2]).all())); db.close()`
  const r = spawnSync(process.execPath, ['-e', script, join(dataDir, DB_FILE), sql], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024
  })
  if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
  return JSON.parse(r.stdout) as T[]
}

/** `startCertDesk`'s store options for `dataDir` on the engine of this run. */
export const onEngine = (dataDir: string): { dataDir: string; database?: string } => ({
  dataDir,
  database: databaseFor(dataDir)
})
