/**
 * What `certdesk admin store copy` refuses, each with one line on stderr and a sysexits code,
 * leaving the target as it was: a database that holds a book, tables of something else or
 * CertDesk's schema at another version; a source whose books do not balance; a target that
 * drops rows (the check after the copy rolls everything back); wrong URLs and passwords; and
 * file targets that exist, are links, have a journal planted beside them or lie in a missing
 * folder. (SQLite-only by name: the sources are SQLite files it edits by hand.)
 */
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyPlan } from '../../src-main/core/store/copy-plan'
import { freePort } from '../support/acme'
import { serve } from '../support/cli'
import { createTestDatabase, PG_BIN, type TestDatabase } from '../support/postgres'
import { certdesk, oneLine, pgValue, seedDesktopBook, type SeededBook } from '../support/store-copy'

let book: SeededBook
const work = mkdtempSync(join(tmpdir(), 'certdesk-copy-refusals-'))
const databases: TestDatabase[] = []

beforeAll(async () => {
  book = await seedDesktopBook()
})
afterAll(async () => {
  for (const d of databases) await d.drop()
  rmSync(work, { recursive: true, force: true })
  if (book) rmSync(book.dataDir, { recursive: true, force: true })
})

async function database(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const d = await createTestDatabase(opts)
  databases.push(d)
  return d
}

async function sql(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(text)
  } finally {
    await c.end()
  }
}

/** Everything in the database, its sequences included, as pg_dump writes it. */
function dump(url: string): string {
  const r = spawnSync(join(PG_BIN, 'pg_dump'), ['--no-owner', `--dbname=${url}`], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`could not dump: ${r.stderr}`)
  // pg_dump fences its output with a random key each time (\restrict, PostgreSQL 15.14).
  return r.stdout.replace(/^\\(un)?restrict .*$/gm, '')
}

const copyTo = (to: string, extra: string[] = [], cwd?: string) =>
  certdesk(['admin', '--data-dir', book.dataDir, ...extra, 'store', 'copy', '--to', to], { cwd })

describe('store copy into a database that is not empty', () => {
  it('refuses a database that holds a book, and changes nothing in it (exit 73)', async () => {
    const d = await database()
    const add = certdesk(['admin', '--database', d.tcpUrl, 'reseller', 'add', '--name', 'Team', '--email', 't@x.test'])
    expect(add.code, add.stderr).toBe(0)
    expect(certdesk(['admin', '--database', d.tcpUrl, 'credit', 'add', '--reseller', '1', '--amount', '25']).code).toBe(
      0
    )
    const before = dump(d.tcpUrl)
    const r = copyTo(d.tcpUrl)
    expect(r.code, r.stderr).toBe(73)
    expect(oneLine(r, d.password)).toMatch(
      /already holds a book \(1 reseller, 1 ledger row[^)]*\); copy into an empty database.*nothing was changed/
    )
    expect(r.stdout).toBe('')
    expect(dump(d.tcpUrl)).toBe(before)
  })

  it('refuses a database with tables of something else, without creating CertDesk schema in it', async () => {
    const d = await database({ empty: true })
    await sql(
      d.tcpUrl,
      `CREATE TABLE invoices_of_another_app (id int PRIMARY KEY); INSERT INTO invoices_of_another_app VALUES (1)`
    )
    const before = dump(d.tcpUrl)
    const r = copyTo(d.tcpUrl)
    expect(r.code, r.stderr).toBe(73)
    expect(oneLine(r, d.password)).toContain("holds tables that are not CertDesk's (invoices_of_another_app)")
    expect(dump(d.tcpUrl)).toBe(before)
  })

  it("refuses CertDesk's schema at another version, and does not migrate it", async () => {
    const d = await database()
    const version = copyPlan().version
    await sql(d.tcpUrl, `UPDATE certdesk_schema SET version = ${version - 1}`)
    const before = dump(d.tcpUrl)
    const r = copyTo(d.tcpUrl)
    expect(r.code, r.stderr).toBe(73)
    expect(oneLine(r)).toContain(`schema at version ${version - 1}, and this CertDesk writes version ${version}`)
    expect(dump(d.tcpUrl)).toBe(before)
  })

  it('takes a database a server was started on once: the seeded catalogue and install id make way', async () => {
    const d = await database()
    const started = await serve(join(work, 'started-once'), ['--database', d.tcpUrl])
    started.child.kill('SIGTERM')
    expect(await started.exited).toBe(0)
    const theirs = await pgValue(d.tcpUrl, `SELECT value FROM settings WHERE key = 'install_id'`)
    expect(theirs).toMatch(/^[0-9a-f-]{36}$/)
    const r = copyTo(d.tcpUrl)
    expect(r.code, r.stderr).toBe(0)
    const source = new Database(join(book.dataDir, 'certdesk.sqlite'), { readonly: true })
    const ours = source.prepare(`SELECT value FROM settings WHERE key = 'install_id'`).pluck().get()
    source.close()
    // The book keeps its install id, which names its keychain entries.
    expect(await pgValue(d.tcpUrl, `SELECT value FROM settings WHERE key = 'install_id'`)).toBe(ours)
    expect(ours).not.toBe(theirs)
  })
})

describe('store copy checks the source and the copy', () => {
  it('refuses a source whose books do not balance, before the target is touched (exit 65)', async () => {
    const dataDir = mkdtempSync(join(work, 'unbalanced-'))
    copyFileSync(join(book.dataDir, 'certdesk.sqlite'), join(dataDir, 'certdesk.sqlite'))
    const db = new Database(join(dataDir, 'certdesk.sqlite'))
    db.prepare('UPDATE resellers SET credit_balance_cents = credit_balance_cents + 1 WHERE id = ?').run(book.resellerId)
    db.close()
    const d = await database({ empty: true })
    const r = certdesk(['admin', '--data-dir', dataDir, 'store', 'copy', '--to', d.tcpUrl])
    expect(r.code, r.stderr).toBe(65)
    expect(oneLine(r)).toMatch(
      new RegExp(
        `books do not balance \\(reseller ${book.resellerId}: balance .* USD, its ledger rows sum to .* USD\\)`
      )
    )
    // Not even CertDesk's schema was created in the target.
    expect(await pgValue(d.tcpUrl, `SELECT to_regclass('certdesk_schema') IS NULL`)).toBe(true)
  })

  it('rolls the whole copy back when the target does not keep every row (exit 70)', async () => {
    const d = await database()
    // A rule of the database's own that quietly drops events: the count check must see it.
    await sql(d.tcpUrl, `CREATE RULE swallow AS ON INSERT TO events DO INSTEAD NOTHING`)
    const r = copyTo(d.tcpUrl)
    expect(r.code, r.stderr).toBe(70)
    expect(oneLine(r)).toMatch(/the target kept 0 of \d+ rows written to events .*nothing was kept/)
    for (const table of ['resellers', 'orders', 'credit_transactions', 'invoices'])
      expect(Number(await pgValue(d.tcpUrl, `SELECT COUNT(*) FROM ${table}`)), table).toBe(0)
  })
})

describe('store copy by a user that may write but does not own the tables', () => {
  it('says the copy needs the owner, and leaves the database as it was (exit 77)', async () => {
    const d = await database()
    const role = `copier_${d.name}`
    await sql(
      d.tcpUrl,
      `CREATE ROLE ${role} LOGIN PASSWORD 'Copier-pass-1';
       GRANT USAGE, CREATE ON SCHEMA public TO ${role};
       GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role};
       GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ${role};`
    )
    try {
      const before = dump(d.tcpUrl)
      const r = copyTo(`postgres://${role}:Copier-pass-1@127.0.0.1:${d.port}/${d.name}`)
      expect(r.code, r.stderr).toBe(77)
      expect(oneLine(r, 'Copier-pass-1')).toContain('its user does not own the tables')
      expect(dump(d.tcpUrl)).toBe(before)
    } finally {
      await sql(d.tcpUrl, `DROP OWNED BY ${role}; DROP ROLE ${role}`)
    }
  })
})

describe('store copy: wrong addresses are one line and an exit code', () => {
  it('a refused password on the target (77), never shown', async () => {
    const d = await database({ empty: true })
    const r = copyTo(`postgres://certdesk:Wr0ng-secret@127.0.0.1:${d.port}/${d.name}`)
    expect(r.code, r.stderr).toBe(77)
    expect(oneLine(r, 'Wr0ng-secret')).toContain('the server refused the password of user "certdesk"')
  })

  it('a URL of another kind (64), an unreachable server (69), a refused password on the source (77)', async () => {
    const mysql = copyTo('mysql://root:hunter2@127.0.0.1/certdesk')
    expect(mysql.code, mysql.stderr).toBe(64)
    expect(oneLine(mysql, 'hunter2')).toContain('mysql is not a PostgreSQL URL')
    // A port nothing listens on any more.
    const port = await freePort()
    const away = copyTo(`postgres://certdesk@127.0.0.1:${port}/certdesk`)
    expect(away.code, away.stderr).toBe(69)
    expect(oneLine(away)).toContain(`nothing answers on 127.0.0.1:${port}`)
    const d = await database()
    const source = certdesk([
      'admin',
      '--database',
      `postgres://certdesk:Wr0ng-secret@127.0.0.1:${d.port}/${d.name}`,
      'store',
      'copy',
      '--to',
      join(work, 'never.sqlite')
    ])
    expect(source.code, source.stderr).toBe(77)
    oneLine(source, 'Wr0ng-secret')
    expect(existsSync(join(work, 'never.sqlite'))).toBe(false)
  })

  it('a data dir without a store (66), and no --to (usage, 2)', () => {
    const empty = mkdtempSync(join(work, 'no-store-'))
    const r = certdesk(['admin', '--data-dir', empty, 'store', 'copy', '--to', join(work, 'none.sqlite')])
    expect(r.code, r.stderr).toBe(66)
    expect(oneLine(r)).toContain(`there is no store in ${empty}`)
    // Nothing was created in the data dir on the way.
    expect(readdirSync(empty)).toEqual([])
    const usage = certdesk(['admin', '--data-dir', book.dataDir, 'store', 'copy'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(/--to is required/)
  })
})

describe('store copy into a file writes only a new file', () => {
  const leftovers = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.partial'))

  it('refuses a file that exists, and leaves it as it was (73)', () => {
    const dir = mkdtempSync(join(work, 'exists-'))
    writeFileSync(join(dir, 'book.sqlite'), 'precious')
    const r = copyTo(join(dir, 'book.sqlite'))
    expect(r.code, r.stderr).toBe(73)
    expect(oneLine(r)).toContain('a file, folder or link of that name exists')
    expect(readFileSync(join(dir, 'book.sqlite'), 'utf8')).toBe('precious')
    expect(leftovers(dir)).toEqual([])
  })

  it('refuses a link, to a file or to nothing, and writes through neither (73)', () => {
    const dir = mkdtempSync(join(work, 'links-'))
    writeFileSync(join(dir, 'victim'), 'precious')
    symlinkSync(join(dir, 'victim'), join(dir, 'to-file.sqlite'))
    symlinkSync(join(dir, 'planted'), join(dir, 'dangling.sqlite'))
    for (const name of ['to-file.sqlite', 'dangling.sqlite']) {
      const r = copyTo(join(dir, name))
      expect(r.code, r.stderr).toBe(73)
      oneLine(r)
    }
    expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('precious')
    expect(existsSync(join(dir, 'planted'))).toBe(false)
    expect(leftovers(dir)).toEqual([])
  })

  it('refuses a name with a journal planted beside it, which SQLite would read into the copy (73)', () => {
    const dir = mkdtempSync(join(work, 'planted-wal-'))
    writeFileSync(join(dir, 'book.sqlite-wal'), 'not ours')
    const r = copyTo(join(dir, 'book.sqlite'))
    expect(r.code, r.stderr).toBe(73)
    expect(oneLine(r)).toContain('book.sqlite-wal lies beside it')
    expect(existsSync(join(dir, 'book.sqlite'))).toBe(false)
  })

  it('refuses a folder that does not exist, or a folder as the name (73)', () => {
    const missing = copyTo(join(work, 'no-such-folder', 'book.sqlite'))
    expect(missing.code, missing.stderr).toBe(73)
    expect(oneLine(missing)).toContain('its folder does not exist')
    const folder = mkdtempSync(join(work, 'folder-'))
    const asName = copyTo(folder)
    expect(asName.code, asName.stderr).toBe(73)
    expect(readdirSync(folder)).toEqual([])
  })

  it('takes a relative name with ../ from where the command runs, and writes there only', () => {
    const base = mkdtempSync(join(work, 'relative-'))
    mkdirSync(join(base, 'here'))
    mkdirSync(join(base, 'there'))
    const r = copyTo(join('..', 'there', '..', 'there', 'book.sqlite'), [], join(base, 'here'))
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).to).toBe(join(base, 'there', 'book.sqlite'))
    expect(readdirSync(join(base, 'there'))).toEqual(['book.sqlite'])
    expect(readdirSync(join(base, 'here'))).toEqual([])
  })
})
