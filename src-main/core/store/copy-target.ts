/**
 * The store a copy writes into. A PostgreSQL database is looked at on the first connection,
 * before anything in it is migrated or changed: it must be empty, or hold CertDesk's schema at
 * this version and no book. A SQLite file must be new: it is built under a temporary name
 * beside the chosen one, created exclusively without following a link, and takes the chosen
 * name only when the copy is whole and checked, never replacing anything (exclusive-file.ts).
 */
import { basename, resolve } from 'node:path'
import Database from 'better-sqlite3'
import type pg from 'pg'
import { migrate } from './db'
import { createBeside, discard, folderProblem, isPresent, publish, type ExclusiveTemp } from '../exclusive-file'
import { installStatementCache } from './statement-cache'
import { EXIT_CANTCREAT, notEmpty, notEmptyError, StoreCopyError } from './copy'
import { copyPlan, type CopyPlan } from './copy-plan'
import type { Store } from './port'
import { SCHEMA_TABLE } from './postgres-engine'
import { redactUrl } from './postgres-errors'
import { openPostgresStore } from './postgres-open'
import { SqliteStore } from './sqlite-engine'

export interface CopyTarget {
  store: Store
  /** The target as messages name it: its URL without the password, or its file. */
  name: string
  /** After a copy that succeeded: closes the store, and the new file takes its name. */
  keep(): Promise<void>
  /** After a copy that failed or was refused: closes the store; no new file is left. */
  drop(): Promise<void>
}

/** Anything written `scheme://…` names a server (and must be a PostgreSQL URL); the rest is a file. */
export const namesServer = (to: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(to)

export async function openCopyTarget(to: string, nativeBinding?: string): Promise<CopyTarget> {
  return namesServer(to) ? postgresTarget(to) : sqliteTarget(to, nativeBinding)
}

async function postgresTarget(url: string): Promise<CopyTarget> {
  const name = redactUrl(url)
  const plan = copyPlan()
  const store = await openPostgresStore(url, { poolSize: 2, inspect: (client) => inspect(client, plan, name) })
  return { store, name, keep: () => store.close(), drop: () => store.close() }
}

async function inspect(client: pg.ClientBase, plan: CopyPlan, name: string): Promise<void> {
  const first = async (sql: string): Promise<number> =>
    Number(Object.values((await client.query(sql)).rows[0] ?? {})[0] ?? 0)
  const refuse = (why: string) =>
    new StoreCopyError(
      `could not copy the store to ${name}: ${why}; copy into an empty database; nothing was changed`,
      EXIT_CANTCREAT
    )
  const ours = (await client.query(`SELECT to_regclass('${SCHEMA_TABLE}') IS NOT NULL AS ours`)).rows[0]?.ours === true
  if (!ours) {
    const { rows } = await client.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`
    )
    if (rows.length > 0) {
      const shown = rows.slice(0, 5).map((r) => r.t)
      throw refuse(
        `the database holds tables that are not CertDesk's (${shown.join(', ')}${rows.length > 5 ? ', …' : ''})`
      )
    }
    return
  }
  const version = await first(`SELECT version FROM ${SCHEMA_TABLE}`)
  if (version !== plan.version) {
    throw refuse(`it holds CertDesk's schema at version ${version}, and this CertDesk writes version ${plan.version}`)
  }
  const why = await notEmpty(plan, first)
  if (why) throw notEmptyError(name, why)
}

/** SQLite's files beside a store, read as part of it when it opens (sqlite.org/tempfiles.html). */
const SIDE_FILES = ['-wal', '-shm', '-journal']

async function sqliteTarget(file: string, nativeBinding?: string): Promise<CopyTarget> {
  const path = resolve(file)
  const refuse = (why: string) =>
    new StoreCopyError(`could not copy the store to ${path}: ${why}; nothing was changed`, EXIT_CANTCREAT)
  if (isPresent(path)) throw refuse('a file, folder or link of that name exists; choose a new name')
  for (const side of SIDE_FILES) {
    // A journal left (or planted) under the new name would be read into the copy when it first opens.
    if (isPresent(path + side))
      throw refuse(`${basename(path + side)} lies beside it, which SQLite would read as part of it; choose a new name`)
  }
  let temp: ExclusiveTemp
  try {
    temp = await createBeside(path)
  } catch (err) {
    throw refuse(folderProblem(err))
  }
  let db: Database.Database | undefined
  try {
    db = new Database(temp.path, nativeBinding ? { nativeBinding } : {})
    installStatementCache(db)
    // A failed copy throws the whole file away, so no journal file lies beside it meanwhile and
    // nothing is synced until the end (publish syncs the file before it takes its name).
    db.pragma('journal_mode = MEMORY')
    db.pragma('synchronous = OFF')
    db.pragma('foreign_keys = ON')
    migrate(db)
  } catch (err) {
    db?.close()
    await discard(temp)
    throw err
  }
  const store = new SqliteStore(db, nativeBinding)
  return {
    store,
    name: path,
    keep: async () => {
      await store.close()
      try {
        await publish(temp, path, 'the copy')
      } catch (err) {
        // The name was taken meanwhile, or the disk refused the last write: nothing is left.
        throw new StoreCopyError((err as Error).message, EXIT_CANTCREAT)
      }
    },
    drop: async () => {
      await store.close()
      await discard(temp)
    }
  }
}
