/**
 * Brings a PostgreSQL database to the newest schema: for each numbered migration not yet
 * applied, its common part (translated from the SQLite file) and its PostgreSQL part
 * (migrations/postgres/NNNN-name.sql), in one transaction with its number, so a failure leaves
 * the database at the version before it. PostgreSQL's DDL is transactional. Several nodes may
 * start at once: the first takes a session-level advisory lock and migrates, the others
 * wait for it and find nothing left to do.
 */
import type pg from 'pg'
import { migrations } from './db'
import { SCHEMA_TABLE } from './postgres-engine'
import { newTranslationState, translateMigration } from './schema-postgres'

const postgresParts = import.meta.glob<string>('../migrations/postgres/*.sql', {
  query: '?raw',
  import: 'default',
  eager: true
})

/** The PostgreSQL part of each migration number that has one. */
export const postgresMigrations: Map<number, { name: string; sql: string }> = new Map(
  Object.entries(postgresParts).map(([path, sql]) => {
    const name = path.split('/').pop() ?? path
    return [Number.parseInt(name, 10), { name, sql }]
  })
)

/** An arbitrary constant: the advisory lock all CertDesk nodes take to migrate. */
const MIGRATION_LOCK = 0x43_44_4d_47 // "CDMG"

/** The statements migration `version` runs on PostgreSQL, common part first. */
export function postgresScript(version: number): string[] {
  const state = newTranslationState()
  for (const m of migrations) {
    const { statements } = translateMigration(m.sql, state)
    if (m.version !== version) continue
    const own = postgresMigrations.get(m.version)
    return own ? [...statements, own.sql] : statements
  }
  throw new Error(`could not find migration ${version}`)
}

export const latestVersion = (): number => migrations.at(-1)?.version ?? 0

/** Applies every migration above the database's version; answers the version reached. */
export async function migratePostgres(client: pg.ClientBase): Promise<number> {
  const state = newTranslationState()
  // Every translation, in order, so each knows the virtual tables of those before it.
  const plan = migrations.map((m) => ({ ...m, common: translateMigration(m.sql, state).statements }))
  // The lock is the session's, taken before any transaction begins: a transaction's snapshot is
  // taken at its first statement, so a lock waited for inside one would leave it reading the
  // schema as it was before the node that held the lock migrated (and, at SERIALIZABLE, fail).
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
  try {
    await inTransaction(client, async () => {
      await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (version bigint NOT NULL)`)
      await client.query(`INSERT INTO ${SCHEMA_TABLE} SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${SCHEMA_TABLE})`)
    })
    let reached = 0
    for (const m of plan) {
      try {
        await inTransaction(client, async () => {
          const current = Number((await client.query(`SELECT version FROM ${SCHEMA_TABLE}`)).rows[0].version)
          if (m.version > current) {
            for (const sql of m.common) await client.query(sql)
            const own = postgresMigrations.get(m.version)
            if (own) await client.query(own.sql)
            await client.query(`UPDATE ${SCHEMA_TABLE} SET version = $1`, [m.version])
          }
          reached = Math.max(current, m.version)
        })
      } catch (err) {
        throw new Error(`could not update the store to version ${m.version} (${m.name}): ${(err as Error).message}`, {
          cause: err
        })
      }
    }
    await syncIdentitySequences(client)
    return reached
  } finally {
    // A connection that ended frees the lock too (the server does it).
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined)
  }
}

async function inTransaction(client: pg.ClientBase, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN')
  try {
    await work()
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  }
}

/**
 * Moves every identity sequence past the largest id in its table. A row inserted with its id
 * given (a migration's copy, a book copied in from another store, the seeded catalogue) does
 * not move the sequence, and the next row the engine numbers would collide with it.
 */
export async function syncIdentitySequences(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_identity = 'YES'`
  )
  for (const r of rows) {
    const t = r.table_name.replace(/"/g, '""')
    const c = r.column_name.replace(/"/g, '""')
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT MAX("${c}") FROM "${t}"), 0) + 1, false)`,
      [`"${t}"`, c]
    )
  }
}
