/**
 * Domain control validation of an order's names (BR §3.2.2.4): one check row per name, the
 * checks a status poll or the scheduler runs, and which earlier validations may be reused
 * (BR §4.2.1: a validation is reused only within the reuse period of the day).
 */
import { constructedEmailAllowed, CONSTRUCTED_EMAIL_SUNSET, dcvReuseDays } from './cab-policy'
import { checkDns, checkHttp, checkStatus, dcvNetwork, type CheckResult, type DcvMethod } from '../dcv/dcv'
import { baseDomain } from '../dcv/domains'
import { recordEvent } from '../events'
import { pool } from '../pool'
import { addDays, isoDate, isoTimestamp, parseDate } from '../time'
import { dcvToken, orderById, readChecks, type DcvRow } from './records'
import type { CertificatesScope } from './scope'
import type { Store } from '../store'

/** Names checked at once by one status poll or scheduler pass. */
const CHECK_CONCURRENCY = 8

/** A validated check still inside the reuse period of `now` (BR §4.2.1). */
export const freshlyValid = (c: DcvRow, now: Date): boolean =>
  c.status === 'valid' && c.validated_at
    ? addDays(parseDate(c.validated_at), dcvReuseDays(now)).getTime() > now.getTime()
    : false

/**
 * One check row per name, each with its own method. `keep` says which earlier validations
 * survive: none (a first configure), every fresh valid one (change-dcv changes only what is not
 * yet validated), or fresh valid ones whose method stays (reissue; BR §4.2.1 reuse). The rest
 * start pending. With `only`, the other names are left exactly as they are (a change of one
 * name's method must not restart the others).
 */
export async function resetChecks(
  db: Store,
  orderId: number,
  names: string[],
  methods: Map<string, DcvMethod>,
  approvers: Map<string, string>,
  now: Date,
  keep: 'none' | 'valid' | 'valid-same-method',
  only?: ReadonlySet<string>
): Promise<void> {
  const kept = new Set(
    keep === 'none'
      ? []
      : (await readChecks(db, orderId))
          .filter((c) => freshlyValid(c, now))
          .filter((c) => keep === 'valid' || c.method === methods.get(c.name))
          .map((c) => c.name)
  )
  const others = db.inList(names, true)
  await db.run(`DELETE FROM dcv_checks WHERE order_id = ? AND name ${others.sql}`, orderId, others.arg)
  for (const name of names) {
    if (kept.has(name) || (only && !only.has(name))) continue
    await db.run(
      `INSERT INTO dcv_checks (order_id, name, method, approver_email, status) VALUES (?, ?, ?, ?, 'pending')
       ON CONFLICT(order_id, name) DO UPDATE SET method = excluded.method, approver_email = excluded.approver_email, status = 'pending',
         detail = NULL, checked_at = NULL, validated_at = NULL, email_code_hash = NULL, email_sent_at = NULL`,
      orderId,
      name,
      methods.get(name) ?? null,
      approvers.get(name) ?? null
    )
  }
}

/** Checks that are not validated within the reuse period of `now` (BR §4.2.1). */
export async function staleChecks(db: Store, orderId: number, now: Date): Promise<DcvRow[]> {
  return (await readChecks(db, orderId)).filter((c) => !freshlyValid(c, now))
}

/**
 * Runs every pending check, a few names at a time (a 250-name order must not wait for 250
 * sequential timeouts); true when all names are valid.
 */
export async function runChecks(scope: CertificatesScope, orderId: number): Promise<boolean> {
  const db = scope.ctx.store
  const now = scope.ctx.clock()
  const pending = (await readChecks(db, orderId)).filter((c) => c.status !== 'valid')
  const network = pending.filter((c) => c.method !== 'email')
  const updateSql = `UPDATE dcv_checks SET status = ?, detail = ?, checked_at = ?, validated_at = ? WHERE id = ?`
  let allValid = network.length === pending.length
  for (let i = 0; i < network.length; i += CHECK_CONCURRENCY) {
    const batch = network.slice(i, i + CHECK_CONCURRENCY)
    const results = await Promise.all(batch.map((c) => checkName(scope, orderId, c)))
    for (const [j, c] of batch.entries()) {
      const result = results[j]
      const status = checkStatus(result)
      await db.run(updateSql, status, result.detail, isoTimestamp(now), result.ok ? isoTimestamp(now) : null, c.id)
      // The log tells what changed: a pass, or a name that can no longer pass. A name still
      // waiting for its owner logs nothing, however often a status poll looks.
      if (status !== 'pending' && status !== c.status) {
        await recordEvent(db, now, {
          type: result.ok ? 'validation.passed' : 'validation.failed',
          resellerId: (await orderById(scope, orderId)).resellerId,
          orderId,
          message: `Domain validation of ${c.name} by ${c.method} ${result.ok ? 'passed' : 'failed'}: ${result.detail}`,
          data: { name: c.name, method: c.method }
        })
      }
      if (!result.ok) allValid = false
    }
  }
  return allValid
}

/**
 * Checks the stale names again before an automatic reissue. A name validated by email cannot
 * be re-checked: it waits for a new approval. Returns why each name that did not pass failed.
 */
export async function recheckStale(
  scope: CertificatesScope,
  orderId: number,
  stale: DcvRow[],
  now: Date
): Promise<string[]> {
  const db = scope.ctx.store
  const failures: string[] = []
  // A few names at a time, as runChecks: a renewal of many names must not wait for each
  // slow name in turn.
  const results = await pool(stale, CHECK_CONCURRENCY, async (c) =>
    c.method === 'email' ? Promise.resolve(null) : await checkName(scope, orderId, c)
  )
  for (const [i, c] of stale.entries()) {
    const result = results[i]
    if (result?.ok) {
      await db.run(
        `UPDATE dcv_checks SET status = 'valid', detail = ?, checked_at = ?, validated_at = ? WHERE id = ?`,
        result.detail,
        isoTimestamp(now),
        isoTimestamp(now),
        c.id
      )
    } else {
      const detail =
        result?.detail ??
        (constructedEmailAllowed(now)
          ? 'email approval is older than the reuse period; a new approval email was sent'
          : `email validation is retired from ${isoDate(CONSTRUCTED_EMAIL_SUNSET)}; choose http, https or dns with /ssl/change-dcv`)
      await db.run(
        `UPDATE dcv_checks SET status = 'pending', detail = ?, checked_at = ? WHERE id = ?`,
        detail,
        isoTimestamp(now),
        c.id
      )
      failures.push(`${c.name}: ${detail}`)
    }
  }
  return failures
}

/** One name's check by its method, or by the external CA when it validates the order itself. */
async function checkName(scope: CertificatesScope, orderId: number, c: DcvRow): Promise<CheckResult> {
  if (scope.external && (await scope.external.handles(orderId))) return scope.external.check(orderId, c.name)
  const t = await dcvToken(scope.ctx.store, orderId)
  const domain = baseDomain(c.name)
  const net = await dcvNetwork(scope.settings)
  if (c.method === 'dns') return checkDns(domain, t, net)
  return checkHttp(c.method === 'https' ? 'https' : 'http', domain, t, net)
}
