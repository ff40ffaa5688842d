/**
 * The certificate half of the spec: CSR decoding, /ssl/* and /certificate/*. v3.0 leaves these
 * bodies open ("Response bodies not specified"); docs/api.md describes the shapes chosen.
 */
import { Type } from '@sinclair/typebox'
import { DCV_METHODS, REVOCATION_REASONS } from '../../../src-shared/constants'
import { CORE_EXPLAINS } from '../validators'
import { Day, Id, Nullable, ok, StringEnum, Timestamp } from './kit'
import { UnattendedRenewalJson } from './acme'
import { OrderStatus } from './orders'

/** The PEM armour the core looks for (core/certificates/csr.ts); the text around it is ignored. */
export const CSR_PATTERN = '-----BEGIN (NEW )?CERTIFICATE REQUEST-----'

export const Csr = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64 * 1024, pattern: CSR_PATTERN, [CORE_EXPLAINS]: true, description })

export const DcvMethod = (description: string) => StringEnum(DCV_METHODS, description)

export const OrderIdField = (description = 'The order.') => Id(description)

/** Reseller API v3.0 §POST /ssl/configure: optional; the default is admin@ at each name's base domain. */
export const ApproverEmail = Type.String({
  minLength: 3,
  maxLength: 254,
  description:
    "For email validation only: admin@, administrator@, webmaster@, hostmaster@ or postmaster@ at the order domain or a parent of it; each other name gets the same mailbox at its own domain. Default: admin@ at each name's base domain."
})

/**
 * Beyond the reseller API v3.0, which has one `dcv_method` per request: names validated by a
 * method of their own (docs/api.md, "Validation per name"). Every other name takes dcv_method.
 */
export const DcvPerName = Type.Array(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 253, description: 'A name of the order, as in the CSR.' }),
      dcv_method: DcvMethod('How this name is validated.'),
      approver_email: Type.Optional(
        Type.String({
          minLength: 3,
          maxLength: 254,
          description:
            'Email only: admin@, administrator@, webmaster@, hostmaster@ or postmaster@ at the name or a parent of it up to its registrable domain (Public Suffix List).'
        })
      )
    },
    { additionalProperties: false, title: 'NameDcv' }
  ),
  {
    maxItems: 1000,
    description:
      'Names validated otherwise than by dcv_method: a file (http, https) for hosts, dns for a wildcard, email where still allowed.'
  }
)

const Hex = (bits: number, description: string) => Type.String({ pattern: `^[0-9A-F]{${bits / 4}}$`, description })

export const CsrJson = Type.Object(
  {
    domain: Nullable(Type.String({ description: 'the common name' })),
    common_name: Nullable(Type.String()),
    organization: Nullable(Type.String()),
    organizational_unit: Nullable(Type.String()),
    locality: Nullable(Type.String()),
    state: Nullable(Type.String()),
    country: Nullable(Type.String()),
    email: Nullable(Type.String()),
    sans: Type.Array(Type.String(), { description: 'the DNS names of the subject alternative name extension' }),
    key_algorithm: Type.String(),
    key_size: Nullable(Type.Integer({ description: 'RSA modulus bits; null for ECDSA' })),
    curve: Nullable(Type.String({ description: 'the ECDSA curve; null for RSA' })),
    signature_algorithm: Type.String(),
    signature_valid: Type.Boolean({ description: 'whether the CSR is signed by its own key' }),
    md5: Hex(128, 'MD5 of the DER CSR, upper-case hex'),
    sha256: Hex(256, 'SHA-256 of the DER CSR, upper-case hex')
  },
  { title: 'CsrDetails' }
)

export const ValidationStatus = StringEnum(
  ['pending', 'valid', 'failed'] as const,
  'pending: waiting for the proof (checked_at and detail tell when the last look was and what it found); valid; failed: cannot pass with these instructions, change the method'
)

export const ValidationJson = Type.Object(
  {
    name: Type.String(),
    method: DcvMethod('how this name is validated'),
    status: ValidationStatus,
    detail: Nullable(Type.String()),
    checked_at: Nullable(Timestamp()),
    validated_at: Nullable(Timestamp()),
    instructions: Type.Object(
      {
        method: DcvMethod('which of the fields below apply'),
        url: Type.Optional(Type.String({ description: 'http/https: where the file must be served' })),
        file_name: Type.Optional(Type.String()),
        file_content: Type.Optional(Type.String()),
        record_name: Type.Optional(Type.String({ description: 'dns: _<md5>.<domain>' })),
        record_type: Type.Optional(StringEnum(['CNAME', 'TXT'] as const)),
        record_value: Type.Optional(Type.String()),
        txt_alternative: Type.Optional(Type.String({ description: 'dns: a TXT with this value works too' })),
        approver_email: Type.Optional(Type.String({ description: 'email: where the approval message went' })),
        sent_at: Type.Optional(Nullable(Timestamp())),
        approver_choices: Type.Optional(
          Type.Array(Type.String(), {
            description:
              'email: every address that may approve the name (BR §3.2.2.4.4): admin@, administrator@, webmaster@, hostmaster@ and postmaster@ at the name and each parent up to its registrable domain (Public Suffix List)'
          })
        )
      },
      { additionalProperties: false, title: 'ValidationInstructions' }
    )
  },
  { title: 'NameValidation' }
)

export const SslStatusJson = ok(
  {
    order_id: Id('the order'),
    order_number: Type.String(),
    domain: Type.String(),
    product: Type.String(),
    status: OrderStatus,
    status_note: Nullable(Type.String()),
    dcv_method: Nullable(
      StringEnum([...DCV_METHODS, 'none'] as const, 'the validation method asked for; none for code signing')
    ),
    approver_email: Nullable(Type.String()),
    csr: Nullable(
      Type.Object({
        common_name: Nullable(Type.String()),
        md5: Hex(128, 'MD5 of the DER CSR'),
        sha256: Hex(256, 'SHA-256 of the DER CSR')
      })
    ),
    names: Type.Array(Type.String(), { description: 'every name the certificate will carry' }),
    validation: Type.Array(ValidationJson, { description: 'one entry per name, with its instructions' }),
    certificate_issued: Type.Boolean(),
    certificate_revoked: Type.Boolean({ description: 'the newest certificate was revoked' }),
    valid_from: Nullable(Day()),
    valid_till: Nullable(Day()),
    reissue_count: Type.Integer({ minimum: 0 }),
    next_reissue_at: Nullable(Day()),
    purchase_end_date: Day(),
    unattended_renewal: Nullable(UnattendedRenewalJson)
  },
  { title: 'SslStatus' }
)

export const CertificateStatusJson = Type.Object(
  {
    order_id: Id('the order'),
    domain: Type.String(),
    product: Type.String(),
    brand: Type.String(),
    status: OrderStatus,
    valid_from: Nullable(Day()),
    valid_till: Nullable(Day()),
    has_certificate: Type.Boolean(),
    has_ca_bundle: Type.Boolean(),
    days_remaining: Nullable(Type.Integer({ description: 'days until valid_till; null before issuance' })),
    is_expired: Type.Boolean(),
    auto_reissue_enabled: Type.Boolean(),
    max_validity_days: Type.Integer({ minimum: 1 }),
    next_reissue_at: Nullable(Day()),
    purchase_end_date: Day(),
    reissue_count: Type.Integer({ minimum: 0 }),
    cert_valid_from: Nullable(Day()),
    cert_valid_till: Nullable(Day()),
    period: Type.Integer({ minimum: 12, maximum: 60, multipleOf: 12 }),
    serial_number: Nullable(Type.String({ description: 'upper-case hex' })),
    names: Type.Array(Type.String()),
    revoked: Type.Boolean({ description: 'the certificate was revoked; it must not be installed' }),
    revoked_at: Nullable(Timestamp()),
    revocation_reason: Nullable(
      Type.String({ description: `RFC 5280 §5.3.1 reason: ${REVOCATION_REASONS.join(', ')}; null while not revoked` })
    )
  },
  { title: 'CertificateStatus' }
)

export const DownloadJson = Type.Object(
  {
    order_id: Id('the order'),
    domain: Type.String(),
    valid_from: Day(),
    valid_till: Day(),
    serial_number: Type.String({ description: 'upper-case hex' }),
    certificate_pem: Type.String({ pattern: '-----BEGIN CERTIFICATE-----', description: 'the certificate, PEM' }),
    ca_bundle: Type.String({ description: 'the issuing intermediate, PEM' }),
    private_key_note: Type.String({ description: 'says why no private key is returned' }),
    revoked: Type.Boolean({ description: 'the certificate was revoked; it must not be installed' })
  },
  { title: 'CertificateDownload' }
)

export const CsrDecodeBody = Type.Object(
  { csr: Csr('The certificate signing request, PEM.') },
  { additionalProperties: false, title: 'CsrDecodeRequest' }
)
export const CsrDecodeResponse = ok({ csr: CsrJson }, { title: 'CsrDecodeResponse' })

export const ConfigureBody = Type.Object(
  {
    order_id: OrderIdField('A paid order in pending.'),
    csr: Csr('The certificate signing request, PEM: RSA of at least 2048 bits or ECDSA P-256/P-384.'),
    dcv_method: Type.Optional(DcvMethod('How the names are validated; default email.')),
    approver_email: Type.Optional(ApproverEmail),
    dcv_per_name: Type.Optional(DcvPerName)
  },
  { additionalProperties: false, title: 'ConfigureSslRequest' }
)

export const ChangeDcvBody = Type.Object(
  {
    order_id: OrderIdField('An order in validation_pending.'),
    dcv_method: Type.Optional(
      DcvMethod('The new validation method for the names not validated yet; required unless dcv_per_name is given.')
    ),
    approver_email: Type.Optional(ApproverEmail),
    dcv_per_name: Type.Optional(DcvPerName)
  },
  { additionalProperties: false, title: 'ChangeDcvRequest' }
)

export const OrderOnlyBody = Type.Object(
  { order_id: OrderIdField('The order whose names wait for email approval.') },
  { additionalProperties: false, title: 'ResendValidationRequest' }
)

export const ApproveBody = Type.Object(
  {
    order_id: OrderIdField('The order the approval message was about.'),
    code: Type.String({ minLength: 1, maxLength: 64, description: 'The code from the approval message.' })
  },
  { additionalProperties: false, title: 'ApproveEmailRequest' }
)

export const ReissueBody = Type.Object(
  {
    order_id: OrderIdField('A completed order with an unexpired certificate.'),
    csr: Type.Optional(
      Type.String({
        maxLength: 64 * 1024,
        pattern: `^\\s*$|${CSR_PATTERN}`,
        [CORE_EXPLAINS]: true,
        description: 'A new CSR (PEM); blank or left out: the stored one is used again.'
      })
    ),
    dcv_method: Type.Optional(DcvMethod('How changed or new names are validated; default: as before.')),
    approver_email: Type.Optional(ApproverEmail),
    dcv_per_name: Type.Optional(DcvPerName)
  },
  { additionalProperties: false, title: 'ReissueRequest' }
)

export const RevokeBody = Type.Object(
  {
    order_id: OrderIdField('The order whose certificate is revoked.'),
    reason: StringEnum(
      REVOCATION_REASONS,
      'Why: an RFC 5280 §5.3.1 reason of the subset the Baseline Requirements allow for subscriber certificates (§4.9.1.1).'
    ),
    serial_number: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[0-9A-Fa-f:]+$',
        description: 'The certificate to revoke (hex); the current one when left out.'
      })
    )
  },
  { additionalProperties: false, title: 'RevokeCertificateRequest' }
)

export const CertificateStatusResponse = ok(
  { certificate: CertificateStatusJson },
  { title: 'CertificateStatusResponse' }
)
export const DownloadResponse = ok({ certificate: DownloadJson }, { title: 'CertificateDownloadResponse' })
