/**
 * Which store engine a test run uses and where a data dir's book is on it: the part of engine.ts
 * that loads neither the core nor vitest, so the CLI helpers (cli.ts) work in the end-to-end
 * tests (Playwright) too. See engine.ts.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { PG_BIN, serverInfo } from './postgres'

export const TEST_ENGINE: 'sqlite' | 'postgres' =
  process.env.CERTDESK_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/** Data dir → its database, for this test file. */
const databases = new Map<string, { name: string; url: string }>()

/**
 * Drops the databases this test file made (engine-cleanup.ts calls it after each file).
 */
export function dropDatabases(): void {
  for (const { name } of databases.values()) psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  databases.clear()
}

/** Runs `sql` in the server's `postgres` database (database administration). */
export function psql(sql: string): void {
  const info = serverInfo()
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
      'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-qc',
      sql
    ],
    { encoding: 'utf8' }
  )
  if (r.status !== 0) throw new Error(`could not run ${sql}: ${r.stderr}`)
}

/**
 * The PostgreSQL URL of the book of `dataDir` on the PostgreSQL run (created from the migrated
 * template the first time), undefined on the SQLite run. Synchronous, so that the CLI helpers,
 * which run `certdesk` to the end, can use it too.
 */
export function databaseFor(dataDir: string): string | undefined {
  if (TEST_ENGINE !== 'postgres') return undefined
  const key = resolve(dataDir)
  let db = databases.get(key)
  if (!db) {
    const info = serverInfo()
    const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`
    psql(`CREATE DATABASE ${name} TEMPLATE certdesk_template`)
    const url = `postgres://certdesk@localhost:${info.port}/${name}?host=${encodeURIComponent(info.socketDir)}`
    databases.set(key, (db = { name, url }))
  }
  return db.url
}

/** The environment for a `certdesk` process on `dataDir`: its database on the PostgreSQL run. */
export function engineEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const url = databaseFor(dataDir)
  return url ? { ...env, CERTDESK_DATABASE: url } : env
}
