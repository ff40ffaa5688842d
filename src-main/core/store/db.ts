/**
 * The SQLite store: one file in the data dir, WAL so the admin CLI can write while `serve`
 * runs, foreign keys on, and numbered migrations recorded in `PRAGMA user_version`.
 */
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { ensurePrivateDir, ensurePrivateFile, tightenIfPresent } from '../paths'
import { installStatementCache } from './statement-cache'
import { storageFault } from './store-faults'

export type Db = Database.Database

// Numbered SQL files named by what they create, bundled as text at build time; each is applied
// once, in one transaction, and its number recorded in `PRAGMA user_version`, so a renamed file
// is never applied twice.
const migrationFiles = import.meta.glob<string>('../migrations/*.sql', {
  query: '?raw',
  import: 'default',
  eager: true
})

export const migrations: { version: number; name: string; sql: string }[] = Object.entries(migrationFiles)
  .map(([path, sql]) => {
    const name = path.split('/').pop() ?? path
    return { version: Number.parseInt(name, 10), name, sql }
  })
  .sort((a, b) => a.version - b.version)

export const DB_FILE = 'certdesk.sqlite'

/**
 * `nativeBinding` is the Electron build of better-sqlite3 when the window opens the store
 * (a native module is built for one runtime, and Electron's ABI differs from Node's); Node uses
 * the module's own build.
 */
export function openDatabase(dataDir: string, nativeBinding?: string): Db {
  const file = join(dataDir, DB_FILE)
  makePrivate(dataDir, file)
  const db = new Database(file, nativeBinding ? { nativeBinding } : {})
  installStatementCache(db)
  db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  // Another process (the admin CLI next to `serve`, a backup) may hold the write lock for a
  // moment: the migrations below wait this long for it. The store engine then turns this wait
  // off, since it sleeps on the only thread, and waits on timers instead (store/sqlite-engine.ts).
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  db.pragma('synchronous = NORMAL')
  try {
    migrate(db)
  } catch (err) {
    // Each migration is one transaction: a full disk leaves the store at the version before it.
    db.close()
    throw storageFault(err, `update the store in ${dataDir} to version ${migrations.at(-1)?.version ?? 0}`) ?? err
  }
  return db
}

/** How long a write of the admin CLI (or while starting) waits for another process's write lock before it answers "busy". */
export const BUSY_TIMEOUT_MS = 5000

/**
 * The data dir 0700 and the store 0600 before SQLite opens it. SQLite would create the store
 * 0644 minus the umask; it creates the WAL and SHM with the store's own mode (and fchmods them
 * to it, so the umask does not matter), which is why the store is made 0600 first. A WAL or
 * SHM left from before (a crash, an older version) is tightened too.
 */
function makePrivate(dataDir: string, file: string): void {
  try {
    ensurePrivateDir(dataDir)
    ensurePrivateFile(file)
    tightenIfPresent(`${file}-wal`)
    tightenIfPresent(`${file}-shm`)
    tightenIfPresent(`${file}-journal`)
  } catch (err) {
    throw new Error(
      `could not open the store in ${dataDir}: could not make it private to its owner: ${(err as Error).message}`,
      {
        cause: err
      }
    )
  }
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number
  for (const m of migrations) {
    if (m.version <= current) continue
    db.transaction(() => {
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    }).immediate()
  }
}
