/** Key-value settings kept in SQLite. Never a secret: those go to the keychain. */
import type { Db } from './db'

export class Settings {
  constructor(private readonly db: Db) {}

  get(key: string): string | null {
    const row = this.db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined
    return row?.value ?? null
  }

  set(key: string, value: string): void {
    this.db
      .prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value')
      .run(key, value)
  }

  getOrCreate(key: string, make: () => string): string {
    this.db.prepare('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)').run(key, make())
    return this.get(key) as string
  }
}
