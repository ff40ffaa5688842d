/**
 * `certdesk admin store copy --to …`: the book of a data dir's SQLite file (or of the
 * PostgreSQL database `--database` names) copied whole into an empty PostgreSQL database or a
 * new SQLite file, ids kept, and checked against the source before it is kept (store/copy.ts).
 * The keychain's secrets are not in the store and are not copied (docs/store.md).
 */
import { join } from 'node:path'
import { AuditLog, type ActionStart } from '../admins/audit-log'
import { DB_FILE } from './db'
import { isPresent } from '../exclusive-file'
import { openStore } from './'
import { checkSource, copyStore, EXIT_NOINPUT, StoreCopyError, type CopyProgress, type CopyResult } from './copy'
import { openCopyTarget } from './copy-target'
import { EXIT_USAGE, redactUrl } from './postgres-errors'
import type { Clock } from '../time'

export { StoreCopyError, type CopyProgress } from './copy'

export interface BookCopyOptions {
  /** The data dir whose SQLite file is the source, unless `database` names one. */
  dataDir: string
  /** The source's PostgreSQL URL. */
  database?: string
  /** A PostgreSQL URL, or the path of a new SQLite file. */
  to: string
  nativeBinding?: string
  batch?: number
  onProgress?: (p: CopyProgress) => void | Promise<void>
  /**
   * The copy as an admin action, written into the copy's audit log once the copy is checked
   * (the source's log is copied whole; the source itself is never written to).
   */
  audit?: { start: ActionStart; clock: Clock }
}

export interface BookCopy extends CopyResult {
  /** The source and the target as messages name them (no password). */
  from: string
  to: string
}

export async function copyBook(opts: BookCopyOptions): Promise<BookCopy> {
  const from = opts.database !== undefined ? redactUrl(opts.database) : join(opts.dataDir, DB_FILE)
  if (opts.database === undefined && !isPresent(from)) {
    throw new StoreCopyError(
      `could not copy the store: there is no store in ${opts.dataDir} (no ${DB_FILE}); name its data dir with --data-dir, or its database with --database`,
      EXIT_NOINPUT
    )
  }
  if (opts.database !== undefined && redactUrl(opts.database) === redactUrl(opts.to)) {
    throw new StoreCopyError(`could not copy the store: the source and the target are the same database`, EXIT_USAGE)
  }
  // The source is checked before the target is opened, so a source that cannot be copied
  // leaves the target as it was (opening an empty database creates CertDesk's schema in it).
  const source = await openStore(
    opts.database !== undefined
      ? { engine: 'postgres', url: opts.database, options: { poolSize: 2 } }
      : { engine: 'sqlite', dataDir: opts.dataDir, nativeBinding: opts.nativeBinding }
  )
  try {
    await checkSource(source)
    const target = await openCopyTarget(opts.to, opts.nativeBinding)
    let kept = false
    try {
      const result = await copyStore(source, target.store, {
        targetName: target.name,
        batch: opts.batch,
        onProgress: opts.onProgress
      })
      if (opts.audit) {
        const { start, clock } = opts.audit
        await new AuditLog({ store: target.store, clock }).record(
          { ...start, targets: { ...start.targets, from } },
          200
        )
      }
      await target.keep()
      kept = true
      return { ...result, from, to: target.name }
    } finally {
      if (!kept) await target.drop().catch(() => undefined)
    }
  } finally {
    await source.close()
  }
}
