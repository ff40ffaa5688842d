/**
 * A token that changes whenever the store changes: `data_version` moves when another
 * connection (the admin CLI, another process) commits, `total_changes()` when this one writes
 * a row, triggers included. Equal tokens mean every query answers as it did before, so a
 * transport may reuse an answer that was computed from the store alone (docs/decisions.md,
 * "Repeated GETs are answered from a cache").
 */
import type { Db } from './db'

export function storeVersion(db: Db): string {
  const row = db.prepare('SELECT (SELECT data_version FROM pragma_data_version) AS d, total_changes() AS c').get() as {
    d: number
    c: number
  }
  return `${row.d}.${row.c}`
}
