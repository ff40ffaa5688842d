/**
 * Deploy runs: one per target and certificate, with the attempts made for it. A run is created
 * pending when a certificate is stored (or a deploy is asked for) and read back for the
 * scheduler's report, the CLI and the desktop app.
 */
import { X509Certificate } from 'node:crypto'
import { latestCertificate, type StoredCertificate } from '../certificates/records'
import { reasonName } from '../certificates/revocation-reasons'
import { invalid, notFound } from '../errors'
import type { Page, Paging } from '../billing/ledger'
import { isoTimestamp } from '../time'
import { deployOrder, type TargetKind } from './targets'
import type { Store } from '../store'

export type DeployTrigger = 'issued' | 'reissued' | 'auto_reissue' | 'manual'
/** The files a run deploys: the certificate and its chain as stored. */
export type DeployedPems = Pick<StoredCertificate, 'certificatePem' | 'chainPem'>

export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'superseded'

export interface DeployAttempt {
  attempt: number
  ok: boolean
  summary: string
  request: string | null
  responseCode: number | null
  output: string | null
  startedAt: string
  finishedAt: string
}

export interface DeployRun {
  id: number
  targetId: number
  kind: TargetKind
  orderId: number
  serial: string
  trigger: DeployTrigger
  status: RunStatus
  attempts: number
  nextAttemptAt: string | null
  lastError: string | null
  createdAt: string
  updatedAt: string
  history: DeployAttempt[]
}

export interface RunRow {
  id: number
  target_id: number
  order_id: number
  serial: string
  certificate_pem: string
  chain_pem: string
  valid_from: string
  valid_till: string
  trigger: DeployTrigger
  status: RunStatus
  attempts: number
  next_attempt_at: string | null
  last_error: string | null
  created_at: string
  updated_at: string
}

export interface ParsedCertificate {
  serial: string
  validFrom: string
  validTill: string
}

export function parseCertificate(pem: string): ParsedCertificate {
  let c: X509Certificate
  try {
    c = new X509Certificate(pem)
  } catch (err) {
    throw invalid(`could not read certificate: ${(err as Error).message}`)
  }
  return {
    serial: c.serialNumber.toUpperCase(),
    validFrom: isoTimestamp(new Date(c.validFrom)),
    validTill: isoTimestamp(new Date(c.validTo))
  }
}

export async function listRuns(db: Store, orderId: number, page: Paging): Promise<Page<DeployRun>> {
  await deployOrder(db, orderId)
  const ids = (await db.all(
    'SELECT id FROM deploy_runs WHERE order_id = ? ORDER BY id DESC LIMIT ? OFFSET ?',
    orderId,
    page.limit,
    page.offset
  )) as { id: number }[]
  const { n } = (await db.get('SELECT COUNT(*) AS n FROM deploy_runs WHERE order_id = ?', orderId)) as {
    n: number
  }
  const items: DeployRun[] = []
  for (const r of ids) items.push(await readRun(db, r.id))
  return { items, total: n, ...page }
}

export async function readRun(db: Store, runId: number): Promise<DeployRun> {
  const r = (await db.get(
    'SELECT r.*, t.kind FROM deploy_runs r JOIN deploy_targets t ON t.id = r.target_id WHERE r.id = ?',
    runId
  )) as (RunRow & { kind: TargetKind }) | undefined
  if (!r) throw notFound(`deploy run ${runId} not found`)
  const history = (await db.all(
    `SELECT attempt, ok, summary, request, response_code AS responseCode, output, started_at AS startedAt,
         finished_at AS finishedAt FROM deploy_attempts WHERE run_id = ? ORDER BY attempt`,
    runId
  )) as (Omit<DeployAttempt, 'ok'> & { ok: number })[]
  return {
    id: r.id,
    targetId: r.target_id,
    kind: r.kind,
    orderId: r.order_id,
    serial: r.serial,
    trigger: r.trigger,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    history: history.map((h) => ({ ...h, ok: h.ok === 1 }))
  }
}

export async function createRuns(
  db: Store,
  orderId: number,
  trigger: DeployTrigger,
  cert: ParsedCertificate,
  certificatePem: string,
  chainPem: string,
  now: Date
): Promise<number[]> {
  const ts = isoTimestamp(now)
  const targets = (await db.all(
    'SELECT id FROM deploy_targets WHERE order_id = ? AND removed_at IS NULL ORDER BY id',
    orderId
  )) as { id: number }[]
  // A run not attempted yet (a reissue in its quiet period) takes the newer certificate in
  // place: one run per target for a burst, and its webhook delivery id stays the same.
  const waiting = new Map(
    (
      (await db.all(
        `SELECT target_id, MAX(id) AS id FROM deploy_runs WHERE order_id = ? AND status = 'pending' AND attempts = 0
           GROUP BY target_id`,
        orderId
      )) as { target_id: number; id: number }[]
    ).map((r) => [r.target_id, r.id])
  )
  const retakeSql = `UPDATE deploy_runs SET serial = ?, certificate_pem = ?, chain_pem = ?, valid_from = ?, valid_till = ?, trigger = ?,
       next_attempt_at = ?, last_error = NULL, updated_at = ? WHERE id = ?`
  const insertSql = `INSERT INTO deploy_runs (target_id, order_id, serial, certificate_pem, chain_pem, valid_from, valid_till, trigger,
       status, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`
  const ids: number[] = []
  for (const t of targets) {
    const id = waiting.get(t.id)
    if (id !== undefined) {
      await db.run(
        retakeSql,
        cert.serial,
        certificatePem,
        chainPem,
        cert.validFrom,
        cert.validTill,
        trigger,
        ts,
        ts,
        id
      )
      ids.push(id)
      continue
    }
    ids.push(
      await db.insert(
        insertSql,
        t.id,
        orderId,
        cert.serial,
        certificatePem,
        chainPem,
        cert.validFrom,
        cert.validTill,
        trigger,
        ts,
        ts,
        ts
      )
    )
  }
  // A newer certificate replaces whatever an older run was still retrying.
  await db.run(
    `UPDATE deploy_runs SET status = 'superseded', next_attempt_at = NULL, updated_at = ?
     WHERE order_id = ? AND status = 'pending' AND serial <> ?`,
    ts,
    orderId,
    cert.serial
  )
  return ids
}

/**
 * When the order's certificate `serial` was revoked, and why (certificates/revocation.ts); null
 * while it is not. A revoked certificate is never deployed again.
 */
export async function revocationOf(
  db: Store,
  orderId: number,
  serial: string
): Promise<{ at: string; reason: string } | null> {
  const row = (await db.get(
    'SELECT revoked_at, revocation_reason FROM certificates WHERE order_id = ? AND upper(serial) = upper(?) AND revoked_at IS NOT NULL',
    orderId,
    serial
  )) as { revoked_at: string; revocation_reason: number | null } | undefined
  return row ? { at: row.revoked_at, reason: reasonName(row.revocation_reason) ?? 'unspecified' } : null
}

/**
 * After a failed reload put the previous files back (executors.ts): the runs of this certificate
 * that had succeeded on those targets (the folders, and reloads run again on the previous files)
 * are done again with the failed run's next attempt, or end failed with it. `why` is what their
 * run shows meanwhile.
 */
export async function reopenRuns(
  db: Store,
  run: Pick<RunRow, 'order_id' | 'serial'>,
  targetIds: number[],
  next: Date | null,
  why: string,
  now: Date
): Promise<void> {
  const reopenSql = `UPDATE deploy_runs SET status = ?, next_attempt_at = ?, last_error = ?, updated_at = ?
      WHERE id = (SELECT MAX(id) FROM deploy_runs WHERE target_id = ? AND order_id = ? AND serial = ?) AND status = 'succeeded'`
  for (const id of targetIds) {
    await db.run(
      reopenSql,
      next ? 'pending' : 'failed',
      next ? isoTimestamp(next) : null,
      why,
      isoTimestamp(now),
      id,
      run.order_id,
      run.serial
    )
  }
}

/** The order's current certificate: the newest in the certificate store, else the last one deployed. */
export async function currentCertificate(db: Store, orderId: number): Promise<DeployedPems | null> {
  const stored = await latestCertificate(db, orderId)
  if (stored) return { certificatePem: stored.certificatePem, chainPem: stored.chainPem }
  const last = (await db.get(
    'SELECT certificate_pem AS certificatePem, chain_pem AS chainPem FROM deploy_runs WHERE order_id = ? ORDER BY id DESC LIMIT 1',
    orderId
  )) as DeployedPems | undefined
  return last ?? null
}
