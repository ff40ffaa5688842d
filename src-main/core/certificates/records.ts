/**
 * The certificate records of an order and their rows: the request (CSR, names, method), one
 * DCV check per name, the certificates issued; the reads over them and the status the
 * reseller API v3.0 shows for an order (GET /ssl/{order_id}, GET /certificate/{order_id}).
 */
import { randomBytes } from 'node:crypto'
import { approverChoices } from '../dcv/authorization-domains'
import type { DecodedCsr } from './csr'
import {
  dcvFileContent,
  dcvFileName,
  dcvFilePath,
  dnsRecordName,
  dnsRecordValue,
  type DcvMethod,
  type DcvToken
} from '../dcv/dcv'
import { baseDomain } from '../dcv/domains'
import { conflict } from '../errors'
import type { Order } from '../orders/orders'
import { inOrder } from '../pool'
import type { UnattendedRenewal } from '../acme-client/renewal-plan'
import { isoTimestamp } from '../time'
import { reasonName, type RevocationReason } from './revocation-reasons'
import type { CertificatesScope } from './scope'
import type { Store } from '../store'

export type IssueReason = 'initial' | 'reissue' | 'auto_reissue'

/** A certificate as stored: what GET /certificate/{order_id}/download hands out. */
export interface StoredCertificate {
  id: number
  orderId: number
  serial: string
  issuer: string
  certificatePem: string
  chainPem: string
  names: string[]
  validFrom: string
  validTill: string
  reason: IssueReason
  createdAt: string
  /** When it was revoked (RFC 5280 §5.3.1 reason beside it); null while it is not. */
  revokedAt: string | null
  revocationReason: RevocationReason | null
}

/** What the certificate code hands over after committing a certificate (to the deploys). */
export type CertificateHandover = Pick<StoredCertificate, 'orderId' | 'reason' | 'certificatePem' | 'chainPem'>

export interface NameValidation {
  name: string
  method: DcvMethod
  status: 'pending' | 'valid' | 'failed'
  detail: string | null
  checkedAt: string | null
  validatedAt: string | null
  /** What the domain owner must do, for the method chosen. */
  instructions:
    | { method: 'http' | 'https'; url: string; fileName: string; fileContent: string }
    | { method: 'dns'; recordName: string; recordType: 'CNAME' | 'TXT'; recordValue: string; txtAlternative: string }
    | { method: 'email'; approverEmail: string; sentAt: string | null; approverChoices: string[] }
}

export interface SslStatus {
  order: Order
  dcvMethod: DcvMethod | 'none' | null
  approverEmail: string | null
  csr: { commonName: string | null; md5: string; sha256: string } | null
  names: string[]
  validation: NameValidation[]
  certificate: StoredCertificate | null
  /** Whether renewals at the external ACME CA run with nobody; null for the local CA. */
  unattendedRenewal: UnattendedRenewal | null
}

export interface CertificateStatus {
  order: Order
  certificate: StoredCertificate | null
  daysRemaining: number | null
  isExpired: boolean
}

export interface RequestRow {
  order_id: number
  csr_pem: string
  csr_md5: string
  csr_sha256: string
  names: string
  subject: string
  dcv_method: DcvMethod | 'none'
  approver_email: string | null
  unique_value: string
  submitted_at: string
  pending_issue: IssueReason | null
}

export interface DcvRow {
  id: number
  order_id: number
  name: string
  method: DcvMethod
  approver_email: string | null
  status: 'pending' | 'valid' | 'failed'
  detail: string | null
  checked_at: string | null
  validated_at: string | null
  email_code_hash: string | null
  email_sent_at: string | null
}

export interface CertRow {
  id: number
  order_id: number
  serial: string
  issuer: string
  certificate_pem: string
  chain_pem: string
  names: string
  valid_from: string
  valid_till: string
  reason: IssueReason
  created_at: string
  revoked_at: string | null
  revocation_reason: number | null
}

export const toCert = (r: CertRow): StoredCertificate => ({
  id: r.id,
  orderId: r.order_id,
  serial: r.serial,
  issuer: r.issuer,
  certificatePem: r.certificate_pem,
  chainPem: r.chain_pem,
  names: JSON.parse(r.names) as string[],
  validFrom: r.valid_from,
  validTill: r.valid_till,
  reason: r.reason,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  revocationReason: reasonName(r.revocation_reason)
})

export async function findRequest(db: Store, orderId: number): Promise<RequestRow | undefined> {
  return (await db.get('SELECT * FROM certificate_requests WHERE order_id = ?', orderId)) as RequestRow | undefined
}

/** The request of an order; 409 until a CSR was configured. */
export async function readRequest(db: Store, orderId: number): Promise<RequestRow> {
  const r = await findRequest(db, orderId)
  if (!r) throw conflict(`order ${orderId} has no CSR yet; POST /ssl/configure first`)
  return r
}

export async function requestNames(db: Store, orderId: number): Promise<string[]> {
  return JSON.parse((await readRequest(db, orderId)).names) as string[]
}

export async function readChecks(db: Store, orderId: number): Promise<DcvRow[]> {
  return (await db.all('SELECT * FROM dcv_checks WHERE order_id = ? ORDER BY id', orderId)) as DcvRow[]
}

export async function latestCertificate(db: Store, orderId: number): Promise<StoredCertificate | null> {
  const row = (await db.get('SELECT * FROM certificates WHERE order_id = ? ORDER BY id DESC LIMIT 1', orderId)) as
    CertRow | undefined
  return row ? toCert(row) : null
}

/** Every certificate of an order, newest first. */
export async function certificateHistory(db: Store, orderId: number): Promise<StoredCertificate[]> {
  return ((await db.all('SELECT * FROM certificates WHERE order_id = ? ORDER BY id DESC', orderId)) as CertRow[]).map(
    toCert
  )
}

export async function readCertificate(db: Store, id: number): Promise<StoredCertificate> {
  return toCert((await db.get('SELECT * FROM certificates WHERE id = ?', id)) as CertRow)
}

/** The values the DCV file and record of an order are made from. */
export async function dcvToken(db: Store, orderId: number): Promise<DcvToken> {
  const r = await readRequest(db, orderId)
  return { md5: r.csr_md5, sha256: r.csr_sha256, unique: r.unique_value }
}

export async function storeRequest(
  db: Store,
  order: Order,
  csr: DecodedCsr,
  names: string[],
  subject: Record<string, string>,
  method: DcvMethod | 'none',
  approver: string | null,
  pending: IssueReason,
  now: Date
): Promise<void> {
  const existing = (await db.get(
    'SELECT csr_md5, unique_value FROM certificate_requests WHERE order_id = ?',
    order.id
  )) as { csr_md5: string; unique_value: string } | undefined
  // A new unique value with every new CSR, so an old validation file never validates a new request.
  const unique = existing && existing.csr_md5 === csr.md5 ? existing.unique_value : randomBytes(10).toString('hex')
  await db.run(
    `INSERT INTO certificate_requests (order_id, csr_pem, csr_md5, csr_sha256, names, subject, dcv_method, approver_email, unique_value, submitted_at, pending_issue)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(order_id) DO UPDATE SET csr_pem = excluded.csr_pem, csr_md5 = excluded.csr_md5, csr_sha256 = excluded.csr_sha256,
       names = excluded.names, subject = excluded.subject, dcv_method = excluded.dcv_method, approver_email = excluded.approver_email,
       unique_value = excluded.unique_value, submitted_at = excluded.submitted_at, pending_issue = excluded.pending_issue`,
    order.id,
    csr.pem,
    csr.md5,
    csr.sha256,
    JSON.stringify(names),
    JSON.stringify(subject),
    method,
    approver,
    unique,
    isoTimestamp(now),
    pending
  )
}

export async function orderStatus(db: Store, orderId: number): Promise<string> {
  return ((await db.get('SELECT status FROM orders WHERE id = ?', orderId)) as { status: string }).status
}

/** An order by id alone (the scheduler's and the status poll's view), through its reseller. */
export async function orderById(scope: CertificatesScope, orderId: number): Promise<Order> {
  const { reseller_id } = (await scope.ctx.store.get('SELECT reseller_id FROM orders WHERE id = ?', orderId)) as {
    reseller_id: number
  }
  return await scope.orders.get(reseller_id, orderId)
}

export async function setOrderStatus(
  db: Store,
  orderId: number,
  status: string,
  note: string | null,
  now: Date
): Promise<void> {
  await db.run(
    'UPDATE orders SET status = ?, status_note = ?, updated_at = ? WHERE id = ?',
    status,
    note,
    isoTimestamp(now),
    orderId
  )
}

export async function touchOrder(db: Store, orderId: number, now: Date): Promise<void> {
  await db.run('UPDATE orders SET updated_at = ? WHERE id = ?', isoTimestamp(now), orderId)
}

/** GET /ssl/{order_id}: the order, its request, each name's validation and the newest certificate. */
export async function sslStatus(scope: CertificatesScope, resellerId: number, orderId: number): Promise<SslStatus> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  const req = await findRequest(db, orderId)
  const token = req ? { md5: req.csr_md5, sha256: req.csr_sha256, unique: req.unique_value } : null
  return {
    order,
    dcvMethod: req?.dcv_method ?? null,
    approverEmail: req?.approver_email ?? null,
    csr: req
      ? {
          commonName: (JSON.parse(req.names) as string[])[0] ?? (JSON.parse(req.subject) as { CN?: string }).CN ?? null,
          md5: req.csr_md5,
          sha256: req.csr_sha256
        }
      : null,
    names: req ? (JSON.parse(req.names) as string[]) : [],
    validation: token ? await inOrder(await readChecks(db, orderId), (c) => nameValidation(scope, c, token)) : [],
    certificate: await latestCertificate(db, orderId),
    unattendedRenewal: (await scope.external?.unattendedRenewal(orderId)) ?? null
  }
}

async function nameValidation(scope: CertificatesScope, c: DcvRow, t: DcvToken): Promise<NameValidation> {
  const domain = baseDomain(c.name)
  const external =
    scope.external && (await scope.external.handles(c.order_id))
      ? await scope.external.instructions(c.order_id, c.name)
      : null
  const instructions: NameValidation['instructions'] =
    external ??
    (c.method === 'dns'
      ? {
          method: 'dns',
          recordName: dnsRecordName(t, domain),
          recordType: 'CNAME',
          recordValue: dnsRecordValue(t),
          txtAlternative: dnsRecordValue(t)
        }
      : c.method === 'email'
        ? {
            method: 'email',
            approverEmail: c.approver_email ?? '',
            sentAt: c.email_sent_at,
            approverChoices: approverChoices(c.name)
          }
        : {
            method: c.method,
            url: `${c.method}://${domain}${dcvFilePath(t)}`,
            fileName: dcvFileName(t),
            fileContent: dcvFileContent(t)
          })
  return {
    name: c.name,
    method: c.method,
    status: c.status,
    detail: c.detail,
    checkedAt: c.checked_at,
    validatedAt: c.validated_at,
    instructions
  }
}
