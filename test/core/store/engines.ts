/**
 * Both engines of the store port, opened the way CertDesk opens them: SQLite in a fresh data
 * dir, PostgreSQL in a fresh database of the test server (test/support/postgres.ts), each at
 * the newest schema. Tests that must hold on both run once per engine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EngineName, Store } from '../../../src-main/core/store'
import { openPostgresStore, type PostgresOpenOptions } from '../../../src-main/core/store/postgres-open'
import { newTranslationState, splitStatements, translateMigration } from '../../../src-main/core/store/schema-postgres'
import { openSqliteStore, type SqliteStoreOptions } from '../../../src-main/core/store/sqlite-engine'
import { createTestDatabase } from '../../support/postgres'

export const ENGINES: readonly EngineName[] = ['sqlite', 'postgres']

export interface EngineFixture {
  engine: EngineName
  /** Another store on the same book (another connection, as another process or node has). */
  open(options?: SqliteStoreOptions & PostgresOpenOptions): Promise<Store>
  /** SQLite: the data dir; PostgreSQL: the database URL. */
  where: string
  /** Closes every store opened and removes the book. */
  dispose(): Promise<void>
}

export async function engineFixture(engine: EngineName): Promise<EngineFixture> {
  const opened: Store[] = []
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'certdesk-store-'))
    return {
      engine,
      where: dir,
      open: async (options) => {
        const s = openSqliteStore(dir, undefined, options)
        opened.push(s)
        return s
      },
      dispose: async () => {
        for (const s of opened) await s.close().catch(() => undefined)
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
  const db = await createTestDatabase()
  return {
    engine,
    where: db.url,
    open: async (options) => {
      const s = await openPostgresStore(db.url, options)
      opened.push(s)
      return s
    },
    dispose: async () => {
      for (const s of opened) await s.close().catch(() => undefined)
      await db.drop()
    }
  }
}

/**
 * Runs a SQLite schema script on either engine, through the same translation the migrations
 * take on PostgreSQL (core/store/schema-postgres.ts), for tables a test brings itself.
 */
export async function createTables(store: Store, script: string): Promise<void> {
  const statements =
    store.engine === 'postgres'
      ? translateMigration(script, newTranslationState()).statements
      : splitStatements(script).map((s) => s.sql)
  for (const sql of statements) await store.run(sql)
}
