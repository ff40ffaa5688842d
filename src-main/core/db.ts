/**
 * The SQLite store: one file in the data dir, WAL so the admin CLI can write while `serve`
 * runs, foreign keys on, and numbered migrations recorded in `PRAGMA user_version`.
 */
import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { installStatementCache } from './statement-cache'

export type Db = Database.Database

// Numbered SQL files, bundled as text at build time (style page, "Migrations as numbered files").
const migrationFiles = import.meta.glob<string>('./migrations/*.sql', {
  query: '?raw',
  import: 'default',
  eager: true
})

export const migrations: { version: number; name: string; sql: string }[] = Object.entries(
  migrationFiles
)
  .map(([path, sql]) => {
    const name = path.split('/').pop() ?? path
    return { version: Number.parseInt(name, 10), name, sql }
  })
  .sort((a, b) => a.version - b.version)

export const DB_FILE = 'certdesk.sqlite'

/**
 * `nativeBinding` is the Electron build of better-sqlite3 when the window opens the store
 * (README, "Two runtimes, one native module"); Node uses the module's own build.
 */
export function openDatabase(dataDir: string, nativeBinding?: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const db = new Database(join(dataDir, DB_FILE), nativeBinding ? { nativeBinding } : {})
  installStatementCache(db)
  db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  // Another process (the admin CLI next to `serve`) may hold the write lock for a moment.
  db.pragma('busy_timeout = 5000')
  db.pragma('synchronous = NORMAL')
  migrate(db)
  return db
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
