import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { migrations, openDatabase } from '../../src-main/core/db'

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
})
