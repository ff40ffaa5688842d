/**
 * CSV exports of the desktop lists, written by the main process straight into a file the user
 * chose: batches of rows read by key (src-main/core/orders/list-pages.ts), turned into CSV text
 * (RFC 4180, csv-stringify) and appended to the file, so time is linear in the rows and memory is
 * one batch. A job runs on whatever screen the user goes to, reports its progress with an
 * estimate, and can be cancelled. The rows go to a private temp file beside the chosen name
 * (core/exclusive-file.ts), which takes that name only when the export is whole: a cancelled or failed
 * export leaves nothing, and nobody ever reads half an export under its name.
 */
import { stringify } from 'csv-stringify/sync'
import { promises as fs } from 'node:fs'
import { dirname, isAbsolute, sep } from 'node:path'
import { conflict, invalid, notFound } from '../core/errors'
import { createBeside, discard, publish, type ExclusiveTemp } from '../core/exclusive-file'
import { EXPORT_HEADERS, type ListPages } from '../core/orders/list-pages'
import type { ExportJobView, ExportRequest } from '../../src-shared/list-records'

/** Rows per batch: larger batches were no faster and grew the main process by more (150 MB at 10,000). */
const BATCH = 1_000
/** Finished jobs kept for the UI to report on. */
const KEEP_FINISHED = 20

interface Job extends ExportJobView {
  resellerId: number
  cancel: boolean
  started: number
}

/** A file name the save dialog may suggest: plain, ending in .csv. */
export const SUGGESTED_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.csv$/

/**
 * The checks an export path passes before anything is written: absolute, no `..` segment, a
 * `.csv` name, in an existing directory, and not an existing file, directory or symlink. The rows
 * then go to a temp file created with O_EXCL and O_NOFOLLOW, which takes the name with link(2),
 * so a file or link appearing in between is refused by the kernel too, and nothing the user
 * already has is overwritten.
 */
export async function checkExportPath(path: string): Promise<string> {
  const why = (reason: string) => invalid(`could not export to ${JSON.stringify(path)}: ${reason}`)
  if (path.includes('\0')) throw why('the path holds a NUL character')
  if (!isAbsolute(path)) throw why('the path must be absolute (start with /)')
  if (path.split(/[\\/]/).includes('..')) throw why('the path must not hold a ".." segment')
  if (path.endsWith(sep) || !/\.csv$/i.test(path)) throw why('the file name must end in .csv')
  const parent = await fs.lstat(dirname(path)).catch(() => null)
  if (!parent?.isDirectory()) throw why('its folder does not exist')
  const existing = await fs.lstat(path).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : e))
  if (existing instanceof Error) throw why(existing.message)
  if (existing) {
    const what = existing.isSymbolicLink() ? 'a symbolic link' : existing.isDirectory() ? 'a folder' : 'a file'
    throw why(`${what} of that name exists already; choose a new file name`)
  }
  return path
}

export class ExportJobs {
  private readonly jobs: Job[] = []
  private nextId = 1

  constructor(private readonly pages: ListPages) {}

  list(): ExportJobView[] {
    return this.jobs.map((j) => this.view(j))
  }

  async start(resellerId: number, req: ExportRequest): Promise<ExportJobView> {
    const path = await checkExportPath(req.path)
    const file = await createBeside(path).catch((e: NodeJS.ErrnoException) => {
      throw invalid(`could not export to ${JSON.stringify(path)}: ${e.code ?? e.message}`)
    })
    const job: Job = {
      id: this.nextId++,
      list: req.list,
      path,
      state: 'running',
      rows: 0,
      total: await this.pages.exportTotal(req.list, resellerId, req.filter),
      secondsLeft: null,
      error: null,
      startedAt: new Date().toISOString(),
      resellerId,
      cancel: false,
      started: performance.now()
    }
    this.jobs.push(job)
    const finished = this.jobs.filter((j) => j.state !== 'running')
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED)))
      this.jobs.splice(this.jobs.indexOf(old), 1)
    void this.run(job, file, req)
    return this.view(job)
  }

  cancel(id: number): ExportJobView {
    const job = this.jobs.find((j) => j.id === id)
    if (!job) throw notFound(`export ${id} not found`)
    if (job.state === 'running') job.cancel = true
    return this.view(job)
  }

  /**
   * Forgets a finished job, so its notice stays gone on every screen and after a reload; a
   * running export is cancelled first (409 until then).
   */
  dismiss(id: number): void {
    const job = this.jobs.find((j) => j.id === id)
    if (!job) throw notFound(`export ${id} not found`)
    if (job.state === 'running') throw conflict(`could not dismiss export ${id}: it is still running; cancel it first`)
    this.jobs.splice(this.jobs.indexOf(job), 1)
  }

  /** Forgets every finished job (signing out: the next person to sign in sees none of them). */
  dismissFinished(): void {
    for (const j of this.jobs.filter((x) => x.state !== 'running')) this.jobs.splice(this.jobs.indexOf(j), 1)
  }

  /** Resolves once no job runs (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.jobs.some((j) => j.state === 'running')) await new Promise((r) => setTimeout(r, 20))
  }

  private async run(job: Job, file: ExclusiveTemp, req: ExportRequest): Promise<void> {
    try {
      await file.handle.write(stringify([EXPORT_HEADERS[req.list]], { record_delimiter: 'windows' }))
      let after = null
      for (;;) {
        if (job.cancel) break
        const batch = await this.pages.exportBatch(req.list, job.resellerId, req, after, BATCH)
        if (batch.rows.length > 0) await file.handle.write(stringify(batch.rows, { record_delimiter: 'windows' }))
        job.rows += batch.rows.length
        // Rows written after the total was read (new orders) count too.
        job.total = Math.max(job.total, job.rows)
        const seconds = (performance.now() - job.started) / 1000
        job.secondsLeft = job.rows > 0 ? ((job.total - job.rows) * seconds) / job.rows : null
        if (batch.rows.length < BATCH || !batch.last) break
        after = batch.last
        // Let the bridge answer between batches.
        await new Promise((r) => setImmediate(r))
      }
      if (job.cancel) {
        await discard(file)
        job.state = 'cancelled'
      } else {
        await publish(file, job.path, `the ${req.list}`)
        job.state = 'done'
        job.secondsLeft = 0
      }
    } catch (err) {
      await discard(file)
      job.state = 'failed'
      job.error = `could not export the ${req.list}: ${(err as Error).message}`
    }
  }

  private view(j: Job): ExportJobView {
    return {
      id: j.id,
      list: j.list,
      path: j.path,
      state: j.state,
      rows: j.rows,
      total: j.total,
      secondsLeft: j.secondsLeft === null ? null : Math.round(j.secondsLeft * 10) / 10,
      error: j.error,
      startedAt: j.startedAt
    }
  }
}
