/**
 * Priced products kept in memory between requests. Every write to the catalogue tables moves
 * the catalogue's version (triggers of migrations 0003 and 0009, so the admin CLI in another
 * process or another node counts too); one indexed read of that number per call decides
 * whether the copy is still right.
 */
import type { Store } from '../store'

/** Distinct filters kept at most; the brand filter is free text, so the map must not grow forever. */
const MAX_ENTRIES = 256

export class CatalogueCache {
  private version: string | null = null
  private readonly entries = new Map<string, unknown>()

  constructor(private readonly store: Store) {}

  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    // A store whose version triggers were dropped answers a version never given out twice
    // (store-version.ts), so nothing kept is ever served then.
    const version = await this.store.catalogueVersion()
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    if (this.entries.has(key)) return this.entries.get(key) as T
    const value = await load()
    // Another call saw a newer version while this one loaded: what it loaded may be older.
    if (this.version !== version) return value
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    this.entries.set(key, value)
    return value
  }
}
