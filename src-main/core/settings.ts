/** Key-value settings kept in SQLite. Never a secret: those go to the keychain. */
import type { Db } from './db'

/**
 * Lab use only: when `true`, domain validation (http/https DCV and ACME http-01) may connect to
 * loopback, private and other special-purpose addresses. Off unless set, as public CAs refuse
 * such targets (validation-target.ts).
 */
export const ALLOW_PRIVATE_ADDRESSES = 'dcv.allow_private_addresses'

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

  /** A yes/no setting: only the stored text `true` means yes; unset or anything else means no. */
  flag(key: string): boolean {
    return this.get(key) === 'true'
  }

  getOrCreate(key: string, make: () => string): string {
    this.db.prepare('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)').run(key, make())
    return this.get(key) as string
  }
}
