/**
 * The certificate half of the spec: POST /csr/decode, POST /ssl/configure, GET /ssl/{order_id},
 * POST /ssl/change-dcv, POST /ssl/resend-validation, POST /ssl/reissue, GET /certificate/{order_id}
 * and its /download. Thin adapters over core/certificates; the JSON shapes of the bodies the
 * spec leaves open are documented in docs/api.md.
 */
import type { Static } from '@sinclair/typebox'
import type { CertificateStatus, NameValidation, SslStatus, StoredCertificate } from '../../core/certificates'
import type { DecodedCsr } from '../../core/certificates/csr'
import type { Service } from '../../core/service'
import { isoDate, parseDate } from '../../core/time'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import {
  ApproveBody,
  CertificateStatusResponse,
  ChangeDcvBody,
  ConfigureBody,
  CsrDecodeBody,
  CsrDecodeResponse,
  DownloadResponse,
  IdParams,
  OrderOnlyBody,
  ReissueBody,
  RevokeBody,
  SslStatusJson,
  type DcvPerName,
  type CertificateStatusJson,
  type CsrJson,
  type ValidationJson
} from '../schemas'

/** The per-name choices of a request as the core takes them. */
const perName = (list: Static<typeof DcvPerName> | undefined) =>
  list?.map((c) => ({ name: c.name, method: c.dcv_method, approverEmail: c.approver_email }))

/** Spec, "Certificate download record": the service never returns the private key. */
export const PRIVATE_KEY_NOTE =
  'The private key was created with the CSR on your side and was never sent to CertDesk; it is not returned here.'

function csrJson(d: DecodedCsr): Static<typeof CsrJson> {
  return {
    domain: d.commonName,
    common_name: d.commonName,
    organization: d.organization,
    organizational_unit: d.organizationalUnit,
    locality: d.locality,
    state: d.state,
    country: d.country,
    email: d.email,
    sans: d.dnsNames,
    key_algorithm: d.keyAlgorithm,
    key_size: d.keySize,
    curve: d.curve,
    signature_algorithm: d.signatureAlgorithm,
    signature_valid: d.signatureValid,
    md5: d.md5,
    sha256: d.sha256
  }
}

function validationJson(v: NameValidation): Static<typeof ValidationJson> {
  const i = v.instructions
  const instructions =
    i.method === 'dns'
      ? {
          method: i.method,
          record_name: i.recordName,
          record_type: i.recordType,
          record_value: i.recordValue,
          txt_alternative: i.txtAlternative
        }
      : i.method === 'email'
        ? { method: i.method, approver_email: i.approverEmail, sent_at: i.sentAt, approver_choices: i.approverChoices }
        : { method: i.method, url: i.url, file_name: i.fileName, file_content: i.fileContent }
  return {
    name: v.name,
    method: v.method,
    status: v.status,
    detail: v.detail,
    checked_at: v.checkedAt,
    validated_at: v.validatedAt,
    instructions
  }
}

const day = (ts: string | null | undefined): string | null => (ts ? isoDate(parseDate(ts)) : null)

function sslJson(s: SslStatus, message?: string): Static<typeof SslStatusJson> {
  const o = s.order
  return {
    success: true,
    ...(message ? { message } : {}),
    order_id: o.id,
    order_number: o.orderNumber,
    domain: o.domain,
    product: o.productName,
    status: o.status,
    status_note: o.statusNote,
    dcv_method: s.dcvMethod,
    approver_email: s.approverEmail,
    csr: s.csr ? { common_name: s.csr.commonName, md5: s.csr.md5, sha256: s.csr.sha256 } : null,
    names: s.names,
    validation: s.validation.map(validationJson),
    certificate_issued: s.certificate !== null,
    certificate_revoked: s.certificate?.revokedAt != null,
    valid_from: day(s.certificate?.validFrom),
    valid_till: day(s.certificate?.validTill),
    reissue_count: o.reissueCount,
    next_reissue_at: o.nextReissueAt,
    purchase_end_date: o.purchaseEndDate,
    unattended_renewal: s.unattendedRenewal
  }
}

function certificateJson(c: CertificateStatus): Static<typeof CertificateStatusJson> {
  const o = c.order
  const cert: StoredCertificate | null = c.certificate
  return {
    order_id: o.id,
    domain: o.domain,
    product: o.productName,
    brand: o.brand,
    status: o.status,
    valid_from: day(cert?.validFrom),
    valid_till: day(cert?.validTill),
    has_certificate: cert !== null,
    has_ca_bundle: cert !== null && cert.chainPem.includes('BEGIN CERTIFICATE'),
    days_remaining: c.daysRemaining,
    is_expired: c.isExpired,
    auto_reissue_enabled: o.autoReissue,
    max_validity_days: o.maxValidityDays,
    next_reissue_at: o.nextReissueAt,
    purchase_end_date: o.purchaseEndDate,
    reissue_count: o.reissueCount,
    cert_valid_from: o.certValidFrom,
    cert_valid_till: o.certValidTill,
    period: o.periodMonths,
    serial_number: cert?.serial ?? null,
    names: cert?.names ?? [],
    revoked: cert?.revokedAt != null,
    revoked_at: cert?.revokedAt ?? null,
    revocation_reason: cert?.revocationReason ?? null
  }
}

const messageFor = (s: SslStatus, action: string): string =>
  s.order.status === 'completed'
    ? `${action}; the certificate is issued`
    : s.validation.every((v) => v.status === 'valid' || v.method === 'email')
      ? `${action}; an approval email went to each approver address`
      : `${action}; complete the validation below, then GET /ssl/${s.order.id}`

export function registerCertificateRoutes(r: ApiRouter, service: Service): void {
  const certs = service.certificates

  r.post(
    '/csr/decode',
    {
      operationId: 'decodeCsr',
      tags: ['SSL'],
      summary: 'Decode and check a CSR',
      description:
        'Reads a certificate signing request and tells what it asks for: subject, names, key type and size, whether its signature verifies, and its MD5 and SHA-256 (the names of the validation file and record). Nothing is stored.',
      body: CsrDecodeBody,
      response: { 200: CsrDecodeResponse }
    },
    async (request) => ({ success: true as const, csr: csrJson(await certs.decode(request.body.csr)) })
  )

  r.post(
    '/ssl/configure',
    {
      operationId: 'configureSsl',
      tags: ['SSL'],
      summary: 'Submit the CSR and how the names are validated',
      description:
        'Gives a pending order its CSR and validation method. The order moves to validation_pending and the answer carries, for each name, what to publish (a file, a DNS record) or where the approval email went. Code-signing orders are issued here.',
      body: ConfigureBody,
      response: { 200: SslStatusJson }
    },
    async (request) => {
      const b = request.body
      const s = await certs.configure(caller(request).id, {
        orderId: b.order_id,
        csr: b.csr,
        dcvMethod: b.dcv_method,
        approverEmail: b.approver_email,
        perName: perName(b.dcv_per_name)
      })
      return sslJson(s, messageFor(s, 'CSR accepted'))
    }
  )

  r.get(
    '/ssl/:order_id',
    {
      operationId: 'getSslStatus',
      tags: ['SSL'],
      summary: "Check an order's validation and issue when it passes",
      description:
        'Looks again for the proof of every name still pending and, when all pass, issues the certificate in the same call. Poll it after publishing the validation file or record.',
      params: IdParams('order_id', 'The order.'),
      response: { 200: SslStatusJson }
    },
    async (request) => sslJson(await certs.status(caller(request).id, request.params.order_id))
  )

  r.post(
    '/ssl/change-dcv',
    {
      operationId: 'changeDcvMethod',
      tags: ['SSL'],
      summary: 'Change how the remaining names, or single names, are validated',
      description:
        'Switches the names not validated yet to another method (email, http, https or dns) and answers the new instructions; names already validated stay validated. With dcv_per_name and no dcv_method, only the names listed change, and every other name keeps its file, record or approval code.',
      body: ChangeDcvBody,
      response: { 200: SslStatusJson }
    },
    async (request) => {
      const b = request.body
      const s = await certs.changeDcv(
        caller(request).id,
        b.order_id,
        b.dcv_method,
        b.approver_email,
        perName(b.dcv_per_name)
      )
      const changed = b.dcv_method
        ? `Validation method changed to ${b.dcv_method}`
        : `Validation method changed for ${b.dcv_per_name?.map((c) => `${c.name} (${c.dcv_method})`).join(', ')}`
      return sslJson(s, messageFor(s, changed))
    }
  )

  r.post(
    '/ssl/resend-validation',
    {
      operationId: 'resendValidationEmail',
      tags: ['SSL'],
      summary: 'Send the approval emails again',
      description:
        'Sends the approval emails of the names waiting for email validation again, with new codes (the old ones stop working). 409 when no name waits for email approval.',
      body: OrderOnlyBody,
      response: { 200: SslStatusJson }
    },
    async (request) =>
      sslJson(
        await certs.resendValidation(caller(request).id, request.body.order_id),
        'Approval email sent again with a new code'
      )
  )

  r.post(
    '/ssl/approve',
    {
      operationId: 'approveValidationEmail',
      tags: ['SSL'],
      summary: 'Record the code of an approval email',
      description:
        'Records the approval code a mailbox received; when every name is then valid, the certificate is issued in the same call. A wrong code is 400.',
      body: ApproveBody,
      response: { 200: SslStatusJson }
    },
    async (request) => {
      const s = await certs.approveEmail(caller(request).id, request.body.order_id, request.body.code)
      return sslJson(s, messageFor(s, 'Approval recorded'))
    }
  )

  r.post(
    '/ssl/reissue',
    {
      operationId: 'reissueCertificate',
      tags: ['SSL'],
      summary: 'Reissue an active certificate',
      description:
        'Issues the certificate of a completed order again, with a new CSR or the stored one. With the same names and method and validations still fresh it is issued at once; otherwise the order waits for validation of what changed, and the old certificate stays downloadable. At most 3 reissues per order within 60 minutes and 10 within 24 hours: past that, 429 with Retry-After.',
      body: ReissueBody,
      response: { 200: SslStatusJson }
    },
    async (request) => {
      const b = request.body
      const s = await certs.reissue(caller(request).id, {
        orderId: b.order_id,
        csr: b.csr,
        dcvMethod: b.dcv_method,
        approverEmail: b.approver_email,
        perName: perName(b.dcv_per_name)
      })
      return sslJson(s, messageFor(s, 'Reissue accepted'))
    }
  )

  r.post(
    '/ssl/revoke',
    {
      operationId: 'revokeCertificate',
      tags: ['SSL'],
      summary: 'Revoke a certificate with its reason',
      description:
        'Beyond the spec. Revokes the current certificate of the order (or the one serial_number names) with an RFC 5280 reason. A certificate of the local CA is listed at once on the CRL its CRL Distribution Points name; one from an external ACME CA is revoked there (RFC 8555 §7.6) and recorded only once the CA agrees. A revoked certificate is never deployed again, and the automatic reissue stops until the order is reissued. 409 when it is already revoked or expired.',
      body: RevokeBody,
      response: { 200: CertificateStatusResponse }
    },
    async (request) => {
      const b = request.body
      const who = caller(request).id
      const revoked = await certs.revoke(who, b.order_id, { reason: b.reason, serial: b.serial_number })
      return {
        success: true as const,
        message: `Certificate ${revoked.serial} revoked (${b.reason})`,
        certificate: certificateJson(await certs.certificate(who, b.order_id, revoked))
      }
    }
  )

  r.get(
    '/certificate/:order_id',
    {
      operationId: 'getCertificateStatus',
      tags: ['Certificates'],
      summary: "Show an order's certificate status",
      description:
        'Whether the order has a certificate, its dates, days remaining, serial, names and renewal plan. Before issuance has_certificate is false and the dates are null.',
      params: IdParams('order_id', 'The order.'),
      response: { 200: CertificateStatusResponse }
    },
    async (request) => ({
      success: true as const,
      certificate: certificateJson(await certs.certificate(caller(request).id, request.params.order_id))
    })
  )

  r.get(
    '/certificate/:order_id/download',
    {
      operationId: 'downloadCertificate',
      tags: ['Certificates'],
      summary: "Download an order's certificate and CA bundle",
      description:
        'The certificate and the issuing intermediate as PEM. 404 until a certificate exists. The private key is never returned: it stayed where the CSR was made.',
      params: IdParams('order_id', 'The order.'),
      response: { 200: DownloadResponse }
    },
    async (request) => {
      const { order, certificate } = await certs.download(caller(request).id, request.params.order_id)
      return {
        success: true as const,
        certificate: {
          order_id: order.id,
          domain: order.domain || (certificate.names[0] ?? ''),
          valid_from: isoDate(parseDate(certificate.validFrom)),
          valid_till: isoDate(parseDate(certificate.validTill)),
          serial_number: certificate.serial,
          certificate_pem: certificate.certificatePem,
          ca_bundle: certificate.chainPem,
          private_key_note: PRIVATE_KEY_NOTE,
          revoked: certificate.revokedAt !== null
        }
      }
    }
  )
}
