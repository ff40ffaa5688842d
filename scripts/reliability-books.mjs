// The books the reliability run checks, on either engine: a data dir's SQLite file, or a
// database of a private PostgreSQL server started for the run (postgres-server.mjs). Each is
// read the way an auditor would, knowing nothing of CertDesk's code: better-sqlite3 on the file,
// `pg` on the database.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { auditPostgres, withClient } from '../bench/lib/postgres-store.mjs'
import { auditStore, Database, DB_FILE } from '../bench/lib/store.mjs'
import { PG_BIN } from './postgres-server.mjs'

/** A book in the SQLite file of `dir`. */
export function sqliteBook(dir, env) {
  const read = (fn) => {
    const db = new Database(join(dir, DB_FILE), { readonly: true })
    try {
      return fn(db)
    } finally {
      db.close()
    }
  }
  return {
    engine: 'SQLite',
    dir,
    env,
    async orderCount(resellerId) {
      return read((db) => db.prepare('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ?').get(resellerId).n)
    },
    async ordersById(ids) {
      return read((db) => {
        const get = db.prepare('SELECT id, total_cents, domain, status, payment_status FROM orders WHERE id = ?')
        return new Map(ids.map((id) => [id, get.get(id)]))
      })
    },
    async balance(resellerId) {
      return read((db) => db.prepare('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?').get(resellerId).b)
    },
    audit: async () => auditStore(dir),
    /** Every byte of the store: the files of the data dir (WAL and SHM included). */
    stored() {
      return readdirSync(dir)
        .filter((f) => f.startsWith(DB_FILE))
        .map((f) => ({ where: f, bytes: readFileSync(join(dir, f)) }))
    }
  }
}

/**
 * A book in a new database `name` of `server`; the data dir `dir` only names its keychain.
 * Every `certdesk` process of the book gets the database through CERTDESK_DATABASE.
 */
export async function postgresBook(server, name, dir, env) {
  await server.query(`CREATE DATABASE ${name}`)
  const url = server.tcpUrl(name)
  const q = (sql, values) => withClient(url, async (c) => (await c.query(sql, values)).rows)
  return {
    engine: 'PostgreSQL',
    dir,
    env: { ...env, CERTDESK_DATABASE: url },
    async orderCount(resellerId) {
      return Number((await q('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = $1', [resellerId]))[0].n)
    },
    async ordersById(ids) {
      const rows = await q(
        'SELECT id, total_cents, domain, status, payment_status FROM orders WHERE id = ANY($1::bigint[])',
        [ids]
      )
      const byId = new Map(
        rows.map((r) => [Number(r.id), { ...r, id: Number(r.id), total_cents: Number(r.total_cents) }])
      )
      return new Map(ids.map((id) => [id, byId.get(id)]))
    },
    async balance(resellerId) {
      return Number((await q('SELECT credit_balance_cents AS b FROM resellers WHERE id = $1', [resellerId]))[0].b)
    },
    audit: () => auditPostgres(url),
    /** Every byte of the database as pg_dump writes it (rows, sequences and schema). */
    stored() {
      const r = spawnSync(join(PG_BIN, 'pg_dump'), [`--dbname=${url}`], { maxBuffer: 1024 * 1024 * 1024 })
      if (r.status !== 0) throw new Error(`could not dump ${name}: ${r.stderr}`)
      return [{ where: `database ${name}`, bytes: r.stdout }]
    }
  }
}
