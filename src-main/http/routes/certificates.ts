/**
 * The certificate half of the spec: POST /csr/decode, POST /ssl/configure, GET /ssl/{order_id},
 * POST /ssl/change-dcv, POST /ssl/resend-validation, POST /ssl/reissue, GET /certificate/{order_id}
 * and its /download. Thin adapters over core/certificates; the JSON shapes of the bodies the
 * spec leaves open are documented in docs/api.md.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { CertificateStatus, NameValidation, SslStatus, StoredCertificate } from '../../core/certificates'
import type { DecodedCsr } from '../../core/csr'
import { REVOCATION_REASONS } from '../../core/certificates/revocation-reasons'
import { DCV_METHODS } from '../../core/dcv'
import type { Service } from '../../core/service'
import { isoDate, parseDate } from '../../core/time'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { Day, IdParam, ok, StringEnum, Timestamp } from '../schemas'
import { ErrorRef } from './common'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])
const Csr = Type.String({ minLength: 1, maxLength: 64 * 1024, description: 'PEM certificate signing request' })
const Method = StringEnum(DCV_METHODS, 'domain control validation method')
const OrderId = Type.Integer({ minimum: 1 })
/** Reseller API v3.0 §POST /ssl/configure: optional; the default is admin@ at each name's base domain. */
const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  description:
    "approver for email validation: admin@, administrator@, webmaster@, hostmaster@ or postmaster@ at the order domain or a parent of it; each other name gets the same mailbox at its own domain. Default: admin@ at each name's base domain"
})

/**
 * Beyond the reseller API v3.0, which has one `dcv_method` per request: names validated by a
 * method of their own (docs/api.md, "Validation per name"). Every other name takes dcv_method.
 */
const PerName = Type.Array(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 253, description: 'a name of the order, as in the CSR' }),
      dcv_method: Method,
      approver_email: Type.Optional(
        Type.String({
          minLength: 3,
          maxLength: 254,
          description:
            'email only: admin@, administrator@, webmaster@, hostmaster@ or postmaster@ at the name or a parent of it up to its registrable domain'
        })
      )
    },
    { additionalProperties: false }
  ),
  {
    maxItems: 1000,
    description:
      'names validated otherwise than by dcv_method: a file for hosts, dns for a wildcard, email where still allowed'
  }
)
const perName = (list: Static<typeof PerName> | undefined) =>
  list?.map((c) => ({ name: c.name, method: c.dcv_method, approverEmail: c.approver_email }))

const CsrJson = Type.Object({
  domain: Nullable(Type.String()),
  common_name: Nullable(Type.String()),
  organization: Nullable(Type.String()),
  organizational_unit: Nullable(Type.String()),
  locality: Nullable(Type.String()),
  state: Nullable(Type.String()),
  country: Nullable(Type.String()),
  email: Nullable(Type.String()),
  sans: Type.Array(Type.String()),
  key_algorithm: Type.String(),
  key_size: Nullable(Type.Integer()),
  curve: Nullable(Type.String()),
  signature_algorithm: Type.String(),
  signature_valid: Type.Boolean(),
  md5: Type.String(),
  sha256: Type.String()
})

const ValidationJson = Type.Object({
  name: Type.String(),
  method: Type.String(),
  status: Type.String({
    description:
      'pending (waiting for the proof; checked_at and detail tell when the last look was and what it found), valid, or failed (cannot pass with these instructions; change the method)'
  }),
  detail: Nullable(Type.String()),
  checked_at: Nullable(Timestamp),
  validated_at: Nullable(Timestamp),
  instructions: Type.Object(
    {
      method: Type.String(),
      url: Type.Optional(Type.String()),
      file_name: Type.Optional(Type.String()),
      file_content: Type.Optional(Type.String()),
      record_name: Type.Optional(Type.String()),
      record_type: Type.Optional(Type.String()),
      record_value: Type.Optional(Type.String()),
      txt_alternative: Type.Optional(Type.String()),
      approver_email: Type.Optional(Type.String()),
      sent_at: Type.Optional(Nullable(Timestamp)),
      approver_choices: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'email: every address that may approve the name (BR §3.2.2.4.4): admin@, administrator@, webmaster@, hostmaster@ and postmaster@ at the name and each parent up to its registrable domain (Public Suffix List)'
        })
      )
    },
    { additionalProperties: false }
  )
})

const SslStatusJson = ok({
  order_id: Type.Integer(),
  order_number: Type.String(),
  domain: Type.String(),
  product: Type.String(),
  status: Type.String(),
  status_note: Nullable(Type.String()),
  dcv_method: Nullable(Type.String()),
  approver_email: Nullable(Type.String()),
  csr: Nullable(Type.Object({ common_name: Nullable(Type.String()), md5: Type.String(), sha256: Type.String() })),
  names: Type.Array(Type.String()),
  validation: Type.Array(ValidationJson),
  certificate_issued: Type.Boolean(),
  certificate_revoked: Type.Boolean(),
  valid_from: Nullable(Day),
  valid_till: Nullable(Day),
  reissue_count: Type.Integer(),
  next_reissue_at: Nullable(Day),
  purchase_end_date: Day
})

const CertificateStatusJson = Type.Object({
  order_id: Type.Integer(),
  domain: Type.String(),
  product: Type.String(),
  brand: Type.String(),
  status: Type.String(),
  valid_from: Nullable(Day),
  valid_till: Nullable(Day),
  has_certificate: Type.Boolean(),
  has_ca_bundle: Type.Boolean(),
  days_remaining: Nullable(Type.Integer()),
  is_expired: Type.Boolean(),
  auto_reissue_enabled: Type.Boolean(),
  max_validity_days: Type.Integer(),
  next_reissue_at: Nullable(Day),
  purchase_end_date: Day,
  reissue_count: Type.Integer(),
  cert_valid_from: Nullable(Day),
  cert_valid_till: Nullable(Day),
  period: Type.Integer(),
  serial_number: Nullable(Type.String()),
  names: Type.Array(Type.String()),
  revoked: Type.Boolean({ description: 'the certificate was revoked; it must not be installed' }),
  revoked_at: Nullable(Timestamp),
  revocation_reason: Nullable(Type.String({ description: 'RFC 5280 §5.3.1 reason name' }))
})

const DownloadJson = Type.Object({
  order_id: Type.Integer(),
  domain: Type.String(),
  valid_from: Day,
  valid_till: Day,
  serial_number: Type.String(),
  certificate_pem: Type.String(),
  ca_bundle: Type.String(),
  private_key_note: Type.String(),
  revoked: Type.Boolean()
})

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
    purchase_end_date: o.purchaseEndDate
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
      summary: 'Decode a CSR: subject, SANs, key, signature check',
      body: Type.Object({ csr: Csr }, { additionalProperties: false }),
      response: { 200: ok({ csr: CsrJson }), ...ErrorRef }
    },
    async (request) => ({ success: true as const, csr: csrJson(await certs.decode(request.body.csr)) })
  )

  r.post(
    '/ssl/configure',
    {
      summary: 'Submit the CSR and the validation method of a pending order',
      body: Type.Object(
        {
          order_id: OrderId,
          csr: Csr,
          dcv_method: Type.Optional(Method),
          approver_email: Type.Optional(Email),
          dcv_per_name: Type.Optional(PerName)
        },
        { additionalProperties: false }
      ),
      response: { 200: SslStatusJson, ...ErrorRef }
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
      summary: 'Live SSL status: runs the validation checks and issues when they pass',
      params: IdParam('order_id'),
      response: { 200: SslStatusJson, ...ErrorRef }
    },
    async (request) => sslJson(await certs.status(caller(request).id, request.params.order_id))
  )

  r.post(
    '/ssl/change-dcv',
    {
      summary:
        'Change the validation method of the names not yet validated (dcv_method), or of single names (dcv_per_name alone)',
      body: Type.Object(
        {
          order_id: OrderId,
          dcv_method: Type.Optional(Method),
          approver_email: Type.Optional(Email),
          dcv_per_name: Type.Optional(PerName)
        },
        { additionalProperties: false }
      ),
      response: { 200: SslStatusJson, ...ErrorRef }
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
      summary: 'Resend the approval email (email validation only; 409 otherwise)',
      body: Type.Object({ order_id: OrderId }, { additionalProperties: false }),
      response: { 200: SslStatusJson, ...ErrorRef }
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
      summary: 'Record an email approval with the code from the approval message (beyond the spec)',
      body: Type.Object(
        { order_id: OrderId, code: Type.String({ minLength: 1, maxLength: 64 }) },
        { additionalProperties: false }
      ),
      response: { 200: SslStatusJson, ...ErrorRef }
    },
    async (request) => {
      const s = await certs.approveEmail(caller(request).id, request.body.order_id, request.body.code)
      return sslJson(s, messageFor(s, 'Approval recorded'))
    }
  )

  r.post(
    '/ssl/reissue',
    {
      summary:
        'Reissue an active certificate, with a new CSR or the stored one (429 with Retry-After past a few reissues per order and hour or day)',
      body: Type.Object(
        {
          order_id: OrderId,
          csr: Type.Optional(Type.String({ maxLength: 64 * 1024 })),
          dcv_method: Type.Optional(Method),
          approver_email: Type.Optional(Email),
          dcv_per_name: Type.Optional(PerName)
        },
        { additionalProperties: false }
      ),
      response: { 200: SslStatusJson, ...ErrorRef }
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
      summary:
        'Revoke a certificate of an order with an RFC 5280 reason (beyond the spec): the local CA lists it on its CRL at once; an external ACME CA is asked to revoke it (RFC 8555 §7.6)',
      body: Type.Object(
        {
          order_id: OrderId,
          reason: StringEnum(REVOCATION_REASONS, 'RFC 5280 §5.3.1 reason, the subset BR §4.9.1.1 allows'),
          serial_number: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 64,
              pattern: '^[0-9A-Fa-f:]+$',
              description: 'the certificate to revoke; the current one when left out'
            })
          )
        },
        { additionalProperties: false }
      ),
      response: { 200: ok({ certificate: CertificateStatusJson }), ...ErrorRef }
    },
    async (request) => {
      const b = request.body
      const who = caller(request).id
      const revoked = await certs.revoke(who, b.order_id, { reason: b.reason, serial: b.serial_number })
      return {
        success: true as const,
        message: `Certificate ${revoked.serial} revoked (${b.reason})`,
        certificate: certificateJson(certs.certificate(who, b.order_id, revoked))
      }
    }
  )

  r.get(
    '/certificate/:order_id',
    {
      summary: 'Certificate status',
      params: IdParam('order_id'),
      response: { 200: ok({ certificate: CertificateStatusJson }), ...ErrorRef }
    },
    async (request) => ({
      success: true as const,
      certificate: certificateJson(certs.certificate(caller(request).id, request.params.order_id))
    })
  )

  r.get(
    '/certificate/:order_id/download',
    {
      summary: 'Certificate and CA bundle (PEM); never the private key',
      params: IdParam('order_id'),
      response: { 200: ok({ certificate: DownloadJson }), ...ErrorRef }
    },
    async (request) => {
      const { order, certificate } = certs.download(caller(request).id, request.params.order_id)
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
