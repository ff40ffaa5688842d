/**
 * The PostgreSQL schema is the SQLite schema: a fresh PostgreSQL database migrated through
 * every numbered migration has each table, column (with its type, NOT NULL and whether it is
 * generated), index, unique key, foreign key and trigger that a fresh SQLite store has, under
 * the same names, except the engine-specific objects listed with their counterparts in
 * core/store/counterparts.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrations, openDatabase, type Db } from '../../../src-main/core/store/db'
import { COUNTERPARTS, POSTGRES_ONLY_TABLES } from '../../../src-main/core/store/counterparts'
import { migratePostgres } from '../../../src-main/core/store/postgres-migrate'
import { createTestDatabase, type TestDatabase } from '../../support/postgres'

const PG_TYPE: Record<string, string> = {
  INTEGER: 'bigint',
  TEXT: 'text',
  REAL: 'double precision',
  BLOB: 'bytea'
}

interface Schema {
  /** table → column → "type NOT NULL?" */
  columns: Map<string, Map<string, string>>
  indexes: Set<string>
  /** "table(col, col)" for each unique key, primary keys included */
  uniques: Set<string>
  /** "table.col → other.col" */
  foreignKeys: Set<string>
  /** "trigger on table" */
  triggers: Set<string>
}

function sqliteSchema(db: Db): Schema {
  const master = db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master`).all() as {
    type: string
    name: string
    tbl_name: string
    sql: string | null
  }[]
  const virtual = master
    .filter((m) => m.type === 'table' && /^CREATE VIRTUAL TABLE/i.test(m.sql ?? ''))
    .map((m) => m.name)
  // FTS5 keeps its data in shadow tables named after the virtual table.
  const shadow = (name: string) => virtual.some((v) => name.startsWith(`${v}_`))
  const tables = master
    .filter((m) => m.type === 'table' && !m.name.startsWith('sqlite_') && !virtual.includes(m.name) && !shadow(m.name))
    .map((m) => m.name)
  const s: Schema = {
    columns: new Map(),
    indexes: new Set(),
    uniques: new Set(),
    foreignKeys: new Set(),
    triggers: new Set()
  }
  for (const t of tables) {
    // table_xinfo, not table_info: generated columns too (hidden 2 virtual, 3 stored).
    const cols = db.pragma(`table_xinfo(${t})`) as {
      name: string
      type: string
      notnull: number
      pk: number
      hidden: number
    }[]
    s.columns.set(
      t,
      new Map(
        cols.map((c) => [
          c.name,
          `${PG_TYPE[c.type]}${c.notnull || c.pk ? ' NOT NULL' : ''}${c.hidden >= 2 ? ' GENERATED' : ''}`
        ])
      )
    )
    const pk = cols
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name)
    if (pk.length) s.uniques.add(`${t}(${pk.join(', ')})`)
    for (const ix of db.pragma(`index_list(${t})`) as { name: string; unique: number; partial: number }[]) {
      if (!ix.unique || ix.partial) continue
      const names = (db.pragma(`index_info(${ix.name})`) as { name: string }[]).map((c) => c.name)
      s.uniques.add(`${t}(${names.join(', ')})`)
    }
    for (const fk of db.pragma(`foreign_key_list(${t})`) as { from: string; table: string; to: string }[]) {
      s.foreignKeys.add(`${t}.${fk.from} → ${fk.table}.${fk.to}`)
    }
  }
  for (const m of master) {
    if (m.type === 'index' && m.sql) s.indexes.add(m.name)
    if (m.type === 'trigger') s.triggers.add(`${m.name} on ${m.tbl_name}`)
  }
  return s
}

async function postgresSchema(c: pg.Client): Promise<Schema & { collations: Map<string, string> }> {
  const s = {
    columns: new Map<string, Map<string, string>>(),
    indexes: new Set<string>(),
    uniques: new Set<string>(),
    foreignKeys: new Set<string>(),
    triggers: new Set<string>(),
    collations: new Map<string, string>()
  }
  const cols = await c.query(
    `SELECT table_name, column_name, data_type, is_nullable, is_generated, collation_name FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`
  )
  for (const r of cols.rows) {
    if (!s.columns.has(r.table_name)) s.columns.set(r.table_name, new Map())
    s.columns
      .get(r.table_name)!
      .set(
        r.column_name,
        `${r.data_type}${r.is_nullable === 'NO' ? ' NOT NULL' : ''}${r.is_generated === 'ALWAYS' ? ' GENERATED' : ''}`
      )
    if (r.data_type === 'text') s.collations.set(`${r.table_name}.${r.column_name}`, r.collation_name)
  }
  for (const r of (await c.query(`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`)).rows) {
    s.indexes.add(r.indexname)
  }
  const uniques = await c.query(
    `SELECT t.relname AS tbl, array_agg(a.attname::text ORDER BY k.ord) AS cols
       FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE i.indisunique AND i.indpred IS NULL AND t.relnamespace = current_schema()::regnamespace
      GROUP BY i.indexrelid, t.relname`
  )
  for (const r of uniques.rows) s.uniques.add(`${r.tbl}(${(r.cols as string[]).join(', ')})`)
  const fks = await c.query(
    `SELECT t.relname AS tbl, a.attname AS col, f.relname AS ref, fa.attname AS refcol
       FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.conkey[1]
       JOIN pg_attribute fa ON fa.attrelid = f.oid AND fa.attnum = k.confkey[1]
      WHERE k.contype = 'f' AND t.relnamespace = current_schema()::regnamespace`
  )
  for (const r of fks.rows) s.foreignKeys.add(`${r.tbl}.${r.col} → ${r.ref}.${r.refcol}`)
  const triggers = await c.query(
    `SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`
  )
  for (const r of triggers.rows) s.triggers.add(`${r.tgname} on ${r.relname}`)
  return s
}

let dir: string
let database: TestDatabase
let client: pg.Client
let lite: Schema
let post: Awaited<ReturnType<typeof postgresSchema>>
let reached: number

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-parity-'))
  const db = openDatabase(dir)
  lite = sqliteSchema(db)
  db.close()
  database = await createTestDatabase({ empty: true })
  client = new pg.Client({ connectionString: database.url })
  await client.connect()
  reached = await migratePostgres(client)
  post = await postgresSchema(client)
})

afterAll(async () => {
  await client?.end()
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const counterpartOf = (kind: 'table' | 'trigger', name: string) =>
  COUNTERPARTS.find((c) => c.sqlite.kind === kind && c.sqlite.name === name)

describe('a fresh PostgreSQL database migrated to the newest schema', () => {
  it('reaches the newest migration number', () => {
    expect(reached).toBe(migrations.at(-1)!.version)
  })

  it('has every table and column of SQLite, with the same types, NOT NULL and generated columns', () => {
    for (const [table, cols] of lite.columns) {
      expect(post.columns.get(table), `table ${table}`).toEqual(cols)
    }
    const extra = [...post.columns.keys()].filter((t) => !lite.columns.has(t) && !(t in POSTGRES_ONLY_TABLES))
    expect(extra).toEqual([])
  })

  it('compares text byte by byte, as SQLite does (collation "C")', () => {
    const other = [...post.collations].filter(([, collation]) => collation !== 'C')
    expect(other).toEqual([])
  })

  it('has every index, unique key and foreign key of SQLite', () => {
    expect([...lite.indexes].filter((i) => !post.indexes.has(i))).toEqual([])
    expect([...lite.uniques].filter((u) => !post.uniques.has(u))).toEqual([])
    expect([...lite.foreignKeys].filter((f) => !post.foreignKeys.has(f))).toEqual([])
  })

  it('has every trigger of SQLite under its name, or the named counterpart', () => {
    const missing = [...lite.triggers].filter((t) => {
      if (post.triggers.has(t)) return false
      const c = counterpartOf('trigger', t.split(' on ')[0])
      return !(c && c.postgres.kind === 'index' && post.indexes.has(c.postgres.name))
    })
    expect(missing).toEqual([])
    const extra = [...post.triggers].filter((t) => !lite.triggers.has(t))
    expect(extra).toEqual([])
  })

  it('answers each SQLite-only table with its counterpart', () => {
    for (const c of COUNTERPARTS.filter((x) => x.sqlite.kind === 'table')) {
      expect(post.indexes.has(c.postgres.name), c.why).toBe(true)
    }
  })

  it('migrates again without change (another node starting finds nothing to do)', async () => {
    expect(await migratePostgres(client)).toBe(reached)
    expect((await postgresSchema(client)).triggers).toEqual(post.triggers)
  })
})
