import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { migrations, openDatabase } from '../../src-main/core/store/db'

const dir = mkdtempSync(join(tmpdir(), 'certdesk-db-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the store', () => {
  it('applies every numbered migration in order and records the last in user_version', () => {
    const db = openDatabase(join(dir, 'a'))
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1))
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.at(-1)?.version)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    db.close()
  })

  it('opens with an explicit native binding, as the Electron window does with its own build', () => {
    const binding = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node')
    const db = openDatabase(join(dir, 'b'), binding)
    expect(db.prepare('SELECT COUNT(*) AS n FROM products').get()).toEqual({ n: 0 })
    db.close()
    expect(() => openDatabase(join(dir, 'c'), join(dir, 'missing.node'))).toThrow()
  })

  it('upgrades a store made by an older release, whatever its migration files were called', () => {
    // A store left at version 5 by a release whose files had other names, with an order in it.
    const path = join(dir, 'old')
    mkdirSync(path, { recursive: true })
    const old = new Database(join(path, 'certdesk.sqlite'))
    for (const m of migrations.filter((x) => x.version <= 5)) old.exec(m.sql)
    old.pragma('user_version = 5')
    old.prepare("INSERT INTO settings (key, value) VALUES ('kept.from.before', 'yes')").run()
    old.close()
    const db = openDatabase(path)
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.at(-1)?.version)
    expect(db.prepare("SELECT value FROM settings WHERE key = 'kept.from.before'").get()).toEqual({ value: 'yes' })
    expect(db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'acme_subscriptions'").get()).toEqual({
      n: 1
    })
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    db.close()
  })
})
