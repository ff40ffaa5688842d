/**
 * Priced products kept in memory between requests. Every write to the catalogue tables moves
 * `catalogue_version` (triggers of migration 0003, so the admin CLI in another process counts
 * too); one indexed read of that number per call decides whether the copy is still right.
 */
import type { Db } from './db'
import { keepersComplete } from './store-version'

/** Distinct filters kept at most; the brand filter is free text, so the map must not grow forever. */
const MAX_ENTRIES = 256

export class CatalogueCache {
  private version: string | null = null
  private readonly entries = new Map<string, unknown>()

  constructor(private readonly db: Db) {}

  get<T>(key: string, load: () => T): T {
    const row = this.db
      .prepare(
        `SELECT (SELECT value FROM settings WHERE key = 'catalogue_version') AS value,
                (SELECT schema_version FROM pragma_schema_version) AS schema`
      )
      .get() as { value: string | null; schema: number }
    const version = row.value === null ? null : `${row.value}.${row.schema}`
    if (version === null || version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    // A store from before migration 0003 has no version to check, and a store whose version
    // triggers were dropped has one that no longer moves: never serve a copy then.
    if (version === null || !keepersComplete(this.db, row.schema)) {
      this.version = null
      return load()
    }
    if (this.entries.has(key)) return this.entries.get(key) as T
    const value = load()
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    this.entries.set(key, value)
    return value
  }
}
