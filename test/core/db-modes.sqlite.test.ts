/**
 * The store holds API key hashes, the ledger and wrapped private keys: only its owner may read
 * it. The data dir is 0700 and the SQLite file with its WAL and shared-memory files 0600,
 * whatever the umask and whatever looser modes an older version or a copy left behind.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { DB_FILE, openDatabase } from '../../src-main/core/store/db'

const base = mkdtempSync(join(tmpdir(), 'certdesk-modes-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

const savedUmask = process.umask()
afterEach(() => {
  process.umask(savedUmask)
})

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(3, '0')

function modes(dir: string): Record<string, string> {
  const db = join(dir, DB_FILE)
  return { dir: mode(dir), db: mode(db), wal: mode(`${db}-wal`), shm: mode(`${db}-shm`) }
}

const PRIVATE = { dir: '700', db: '600', wal: '600', shm: '600' }

describe('who can read the store on disk', () => {
  it('tightens a 0755 data dir and a 0644 store (with a stale 0644 WAL and SHM) left from before', () => {
    process.umask(0o022)
    const dir = join(base, 'loose')
    mkdirSync(dir)
    chmodSync(dir, 0o755)
    const first = openDatabase(dir)
    first.prepare("INSERT INTO settings (key, value) VALUES ('probe', 'kept')").run()
    first.close()
    const db = join(dir, DB_FILE)
    chmodSync(dir, 0o755)
    chmodSync(db, 0o644)
    // What a crash (or a copy of a running store) leaves: a WAL and SHM beside the store.
    writeFileSync(`${db}-wal`, '')
    writeFileSync(`${db}-shm`, '')
    chmodSync(`${db}-wal`, 0o644)
    chmodSync(`${db}-shm`, 0o644)

    const again = openDatabase(dir)
    again.prepare("UPDATE settings SET value = 'changed' WHERE key = 'probe'").run()
    expect(modes(dir)).toEqual(PRIVATE)
    expect(again.prepare("SELECT value FROM settings WHERE key = 'probe'").get()).toEqual({ value: 'changed' })
    again.close()
  })

  it('creates a private dir, store, WAL and SHM with umask 000', () => {
    process.umask(0o000)
    const dir = join(base, 'umask-000', 'nested')
    const db = openDatabase(dir)
    db.prepare("INSERT INTO settings (key, value) VALUES ('probe', 'x')").run()
    expect(modes(dir)).toEqual(PRIVATE)
    db.close()
  })

  it('keeps a WAL and SHM that SQLite makes again on a later open private, with umask 000', () => {
    process.umask(0o000)
    const dir = join(base, 'reopen')
    mkdirSync(dir, { mode: 0o777 })
    chmodSync(dir, 0o777)
    // A 0666 store made by another tool under umask 000.
    writeFileSync(join(dir, DB_FILE), '')
    chmodSync(join(dir, DB_FILE), 0o666)
    openDatabase(dir).close()
    // The last connection to close removes the WAL and SHM; the next open makes them again.
    const db = openDatabase(dir)
    db.prepare("INSERT INTO settings (key, value) VALUES ('probe', 'y')").run()
    expect(modes(dir)).toEqual(PRIVATE)
    db.close()
  })
})
