/**
 * Validation by constructed email (BR §3.2.2.4.4): who may approve each name, the approval
 * messages and their codes, recording an approval, and the outbox that keeps the messages.
 */
import { createHash, randomBytes } from 'node:crypto'
import { APPROVER_LOCAL_PARTS, constructedEmailAllowed, CONSTRUCTED_EMAIL_SUNSET } from './cab-policy'
import { deliverMail, type DcvMethod } from '../dcv/dcv'
import { authorizationDomains } from '../dcv/authorization-domains'
import { baseDomain, isWildcard } from '../dcv/domains'
import { conflict, invalid, ServiceError } from '../errors'
import { recordEvent } from '../events'
import type { Order } from '../orders/orders'
import { isoDate, isoTimestamp } from '../time'
import { countApprovalSend } from './approval-mail-limits'
import { readChecks, readRequest, requestNames, touchOrder, type DcvRow } from './records'
import type { CertificatesScope } from './scope'
import type { Store } from '../store'

/** Subject of an approval message; the outbox reads the name back from it. */
const approvalSubject = (name: string, orderNumber: string): string =>
  `Approve the certificate for ${name} (order ${orderNumber})`
const SUBJECT_NAME_RE = /^Approve the certificate for (\S+) \(order /

/** The approver when the request names none: admin@ at the name's base domain (BR §3.2.2.4.4 lists it first). */
export const defaultApprover = (name: string): string => `${APPROVER_LOCAL_PARTS[0]}@${baseDomain(name)}`

/**
 * A constructed approver address for `name`, normalised (BR §3.2.2.4.4): one of
 * APPROVER_LOCAL_PARTS at an Authorization Domain Name of the name, that is the name or a
 * parent of it up to its registrable domain, never at a public suffix such as `co.uk`.
 * Anything else (another mailbox, another domain, a second address, header tricks) is 400.
 */
export function approverAddress(name: string, address: string): string {
  const shown = JSON.stringify(String(address).slice(0, 254))
  const m =
    typeof address === 'string' && address.length <= 254
      ? /^([a-z0-9-]+)@([a-z0-9.-]+)$/.exec(address.trim().toLowerCase())
      : null
  if (!m || !(APPROVER_LOCAL_PARTS as readonly string[]).includes(m[1])) {
    throw invalid(
      `approver_email ${shown} is not an approver address; use one of ${APPROVER_LOCAL_PARTS.join('@, ')}@ at the domain`
    )
  }
  const [, local, at] = m
  const domains = authorizationDomains(name)
  if (!domains.includes(at)) {
    const base = baseDomain(name)
    throw invalid(
      domains.length === 0
        ? `approver_email ${shown} cannot validate ${base}: it has no registrable domain on the Public Suffix List`
        : `approver_email ${shown} is not at ${base} or a parent domain of it up to ${domains[domains.length - 1]}`
    )
  }
  return `${local}@${at}`
}

/** The message says why email validation is refused from the sunset on. */
export function emailSunsetMessage(): string {
  return `email validation is no longer allowed: the Baseline Requirements retire constructed-email validation (§3.2.2.4.4) from ${isoDate(CONSTRUCTED_EMAIL_SUNSET)}; use http, https or dns`
}

const hashCode = (code: string): string => createHash('sha256').update(code.trim().toUpperCase()).digest('hex')

/** Approval codes: 10 characters of an alphabet without look-alikes (0/O, 1/I). */
function approvalCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
  return Array.from(randomBytes(10), (b) => alphabet[b % alphabet.length]).join('')
}

/**
 * The approver of each name validated by email. `approverEmail` is the spec's one field: the
 * order domain's mailbox, and the same mailbox as many labels up at each other name (never past
 * its registrable domain). `perName` picks the mailbox of single names (the desktop app's
 * choice, `dcv_per_name`); `previous` keeps what names already had. A name left without one gets
 * admin@ at its base domain: the reseller API v3.0 (POST /ssl/configure, POST /ssl/change-dcv)
 * makes approver_email optional and email the default method.
 */
export function approversFor(
  order: Order,
  methods: Map<string, DcvMethod>,
  names: string[],
  now: Date,
  choice: {
    approverEmail?: string
    perName?: Record<string, string> | [string, string][]
    previous?: Map<string, string>
  }
): Map<string, string> {
  for (const n of names) {
    const method = methods.get(n)
    // BR §3.2.2.4.18: the file method cannot validate a wildcard name.
    if ((method === 'http' || method === 'https') && isWildcard(n))
      throw invalid(`${method} validation cannot validate the wildcard name ${n} (BR §3.2.2.4.18); use dns or email`)
  }
  const map = new Map<string, string>()
  const email = names.filter((n) => methods.get(n) === 'email')
  const perName = Array.isArray(choice.perName) ? choice.perName : Object.entries(choice.perName ?? {})
  const picked = perName.map(([given, address]) => {
    const name = String(given).trim().toLowerCase()
    if (!names.includes(name)) {
      throw invalid(
        `could not choose an approver: ${JSON.stringify(String(given).slice(0, 253))} is not a name of order ${order.orderNumber}`
      )
    }
    if (methods.get(name) !== 'email') {
      throw invalid(`approver_email of ${name} is only for email validation, not ${methods.get(name)}`)
    }
    return [name, address] as const
  })
  if (choice.approverEmail !== undefined && email.length === 0) {
    throw invalid(`approver_email is only for email validation, not ${methods.get(names[0]) ?? 'none'}`)
  }
  if (email.length === 0) return map
  if (!constructedEmailAllowed(now)) throw invalid(emailSunsetMessage())
  for (const n of email) {
    if (authorizationDomains(n).length === 0) {
      throw invalid(
        `could not validate ${n} by email: it has no registrable domain on the Public Suffix List; use dns or http`
      )
    }
    map.set(n, choice.previous?.get(n) ?? defaultApprover(n))
  }
  if (choice.approverEmail !== undefined) {
    const primary = approverAddress(names[0], choice.approverEmail)
    const [local, at] = primary.split('@')
    // The same mailbox, as many labels up from each name as the given one is from the first.
    const depth = authorizationDomains(names[0]).indexOf(at)
    for (const n of email) {
      const domains = authorizationDomains(n)
      map.set(n, n === names[0] ? primary : `${local}@${domains[Math.min(depth, domains.length - 1)]}`)
    }
  }
  for (const [name, address] of picked) map.set(name, approverAddress(name, address))
  return map
}

/** The check row of one name of the order; 400 when the order has no such name. */
async function checkOf(db: Store, order: Order, name: string, verb: string): Promise<DcvRow> {
  const wanted = String(name).trim().toLowerCase()
  const check = (await readChecks(db, order.id)).find((c) => c.name === wanted)
  if (!check) {
    throw invalid(
      `could not ${verb}: ${JSON.stringify(String(name).slice(0, 253))} is not a name of order ${order.orderNumber}`
    )
  }
  return check
}

/** The checks a send mails: names waiting for email approval that have an approver (`only`: those names). */
const pendingEmailChecks = async (db: Store, orderId: number, only?: ReadonlySet<string>): Promise<DcvRow[]> =>
  (await readChecks(db, orderId)).filter(
    (c) => c.method === 'email' && c.status !== 'valid' && c.approver_email && (only === undefined || only.has(c.name))
  )

/**
 * Counts the send `sendApprovals(…, only)` makes next against the approval-mail limits, or
 * throws 429 (approval-mail-limits.ts). Call it inside the write transaction of the change that
 * leads to the send, after the checks are reset, so a refusal changes nothing.
 */
export async function countPendingApprovals(
  db: Store,
  order: Order,
  now: Date,
  only?: ReadonlySet<string>
): Promise<void> {
  await countApprovalSend(db, order, (await pendingEmailChecks(db, order.id, only)).length, now)
}

/**
 * Mails a fresh code for every pending email check of the order, a send counted beforehand
 * with `countPendingApprovals`. A message SMTP refuses does
 * not undo the configure or change-dcv that asked for it: its name shows the reason, and
 * /ssl/resend-validation tries again. `only` limits it to those names. Returns the reasons of the
 * messages that failed.
 */
export async function sendApprovals(
  scope: CertificatesScope,
  order: Order,
  now: Date,
  only?: ReadonlySet<string>
): Promise<string[]> {
  const db = scope.ctx.store
  const failed: string[] = []
  for (const c of await pendingEmailChecks(db, order.id, only)) {
    const code = approvalCode()
    const mail = {
      to: c.approver_email as string,
      subject: approvalSubject(c.name, order.orderNumber),
      text:
        `A TLS certificate for ${c.name} was requested through order ${order.orderNumber}.\n\n` +
        `If you control ${baseDomain(c.name)} and approve it, give this approval code to your provider:\n\n    ${code}\n\n` +
        `They enter it with POST /ssl/approve (order_id ${order.id}). If you did not expect this, ignore this message.\n`
    }
    let delivery: 'smtp' | 'outbox'
    try {
      delivery = await deliverMail(scope.settings, mail)
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err)
      // The old code (if any) stays valid: a failed resend must not void a delivered message.
      const reason = `could not send the approval email to ${mail.to}: ${why}`
      await db.run('UPDATE dcv_checks SET detail = ? WHERE id = ?', reason, c.id)
      failed.push(reason)
      continue
    }
    const ts = isoTimestamp(now)
    await db.tx(async () => {
      await db.run(
        `UPDATE dcv_checks SET email_code_hash = ?, email_sent_at = ?, status = 'pending', detail = ? WHERE id = ?`,
        hashCode(code),
        ts,
        delivery === 'smtp'
          ? `approval email sent to ${mail.to}`
          : `approval email to ${mail.to} is in the outbox (no SMTP server configured)`,
        c.id
      )
      await db.run(
        'INSERT INTO email_outbox (order_id, to_address, subject, body, delivery, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        order.id,
        mail.to,
        mail.subject,
        delivery === 'smtp' ? mail.text.replace(code, '(code sent by email)') : mail.text,
        delivery,
        ts
      )
    })
  }
  return failed
}

/** An approval message as the outbox keeps it. */
export interface OutboxMessage {
  id: number
  orderId: number | null
  /** The name the message asks approval for. */
  name: string | null
  to: string
  subject: string
  body: string
  delivery: string
  createdAt: string
}

/** Validation messages kept when no SMTP server is set (and copies of those sent). */
export async function outbox(db: Store, orderId?: number): Promise<OutboxMessage[]> {
  const rows = (
    orderId === undefined
      ? await db.all('SELECT * FROM email_outbox ORDER BY id DESC')
      : await db.all('SELECT * FROM email_outbox WHERE order_id = ? ORDER BY id DESC', orderId)
  ) as {
    id: number
    order_id: number | null
    to_address: string
    subject: string
    body: string
    delivery: string
    created_at: string
  }[]
  return rows.map((r) => ({
    id: r.id,
    orderId: r.order_id,
    name: SUBJECT_NAME_RE.exec(r.subject)?.[1] ?? null,
    to: r.to_address,
    subject: r.subject,
    body: r.body,
    delivery: r.delivery,
    createdAt: r.created_at
  }))
}

/** POST /ssl/resend-validation: a fresh approval message (new codes); email method only. */
export async function resendValidation(scope: CertificatesScope, resellerId: number, orderId: number): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  if (order.status !== 'validation_pending') {
    throw conflict(
      `could not resend validation for order ${order.orderNumber}: it is ${order.status}, not validation_pending`
    )
  }
  const pending = (await readChecks(db, order.id)).filter((c) => c.status !== 'valid')
  if (!pending.some((c) => c.method === 'email')) {
    const method = pending[0]?.method ?? (await readRequest(db, order.id)).dcv_method
    throw conflict(
      `could not resend validation for order ${order.orderNumber}: its method is ${method}, not email; nothing is sent for ${method}`
    )
  }
  const now = scope.ctx.clock()
  if (!constructedEmailAllowed(now)) throw invalid(emailSunsetMessage())
  await db.tx(async () => await countPendingApprovals(db, order, now))
  const failed = await sendApprovals(scope, order, now)
  if (failed.length > 0) throw new ServiceError('unavailable', failed.join('; '))
}

/**
 * Records an email approval: the code from the message (POST /ssl/approve, beyond the
 * reseller API v3.0, which has no call for it). With `name` the code must be the one mailed
 * for that name (the desktop app approves name by name).
 */
export async function recordApproval(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  code: string,
  name?: string
): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  if (order.status !== 'validation_pending') {
    throw conflict(
      `could not record approval for order ${order.orderNumber}: it is ${order.status}, not validation_pending`
    )
  }
  const now = scope.ctx.clock()
  // BR §3.2.2.4.4: no validation by constructed email on or after the sunset, even with an older code.
  if (!constructedEmailAllowed(now)) throw invalid(emailSunsetMessage())
  const check = name === undefined ? null : await checkOf(db, order, name, 'record approval')
  const approved = (await db.all(
    `UPDATE dcv_checks SET status = 'valid', validated_at = ?, checked_at = ?, detail = ?, email_code_hash = NULL
       WHERE order_id = ? AND method = 'email' AND status <> 'valid' AND email_code_hash = ? ${check ? 'AND id = ?' : ''}
       RETURNING name, approver_email`,
    isoTimestamp(now),
    isoTimestamp(now),
    `approved by the code mailed to the approver`,
    order.id,
    hashCode(code),
    ...(check ? [check.id] : [])
  )) as { name: string; approver_email: string | null }[]
  if (approved.length === 0)
    throw invalid(
      check
        ? `could not record approval for ${check.name}: the code does not match its pending approval`
        : 'could not record approval: the code does not match a pending approval of this order'
    )
  for (const a of approved) {
    await recordEvent(db, now, {
      type: 'validation.passed',
      resellerId,
      orderId: order.id,
      message: `Domain validation of ${a.name} by email approved by ${a.approver_email ?? 'the approver'} for order ${order.orderNumber}`,
      data: { name: a.name, method: 'email' }
    })
  }
}

/**
 * Another approver for one name waiting for email approval (the desktop app's per-name
 * choice): the address must be a constructed one for that name (BR §3.2.2.4.4); a new code
 * goes to it and the name's earlier code stops working. Other names keep their codes.
 */
export async function chooseApprover(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  name: string,
  approverEmail: string
): Promise<void> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  if (order.status !== 'validation_pending') {
    throw conflict(
      `could not change the approver of order ${order.orderNumber}: it is ${order.status}, not validation_pending`
    )
  }
  const now = scope.ctx.clock()
  if (!constructedEmailAllowed(now)) throw invalid(emailSunsetMessage())
  const check = await checkOf(db, order, name, 'change the approver')
  if (check.status === 'valid') {
    throw conflict(`could not change the approver of ${check.name}: it is validated already`)
  }
  if (check.method !== 'email') {
    throw conflict(
      `could not change the approver of ${check.name}: it is validated by ${check.method}; switch it to email with change-dcv first`
    )
  }
  const approver = approverAddress(check.name, approverEmail)
  const names = await requestNames(db, order.id)
  await db.tx(async () => {
    await db.run(
      `UPDATE dcv_checks SET approver_email = ?, status = 'pending', detail = NULL, checked_at = NULL,
             email_code_hash = NULL, email_sent_at = NULL WHERE id = ?`,
      approver,
      check.id
    )
    if (check.name === names[0]) {
      await db.run('UPDATE certificate_requests SET approver_email = ? WHERE order_id = ?', approver, order.id)
    }
    await touchOrder(db, order.id, now)
    await countPendingApprovals(db, order, now, new Set([check.name]))
  })
  await sendApprovals(scope, order, now, new Set([check.name]))
}
