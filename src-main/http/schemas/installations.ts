/**
 * Extension endpoints (not in reseller API v3.0; same envelope, same key, same paging rules):
 * what the servers of an order present, and the expiry report of the caller's certificates.
 */
import { Type } from '@sinclair/typebox'
import { VERDICTS } from '../../core/installations'
import { MAX_REPORT_DAYS } from '../../core/certificates/reports'
import { Day, Id, Nullable, ok, Query, StringEnum, Timestamp } from './kit'

const Verdict = StringEnum(VERDICTS, 'what the server presented, compared with the issued certificate')

export const InstallationJson = Type.Object(
  {
    order_id: Id('the order'),
    order_number: Type.String(),
    verdict: Nullable(Verdict),
    label: Type.String({ description: 'the verdict in words' }),
    checked_at: Nullable(Timestamp()),
    results: Type.Array(
      Type.Object(
        {
          host: Type.String(),
          port: Type.Integer({ minimum: 1, maximum: 65535 }),
          verdict: Verdict,
          label: Type.String(),
          detail: Type.String(),
          served_serial: Nullable(Type.String()),
          served_valid_till: Nullable(Type.String({ description: 'when the served certificate ends' })),
          checked_at: Timestamp()
        },
        { title: 'InstallationResult' }
      )
    )
  },
  { title: 'Installation' }
)

export const ExpiringJson = Type.Object(
  {
    kind: StringEnum(['issued', 'imported'] as const),
    reference: Type.String({ description: 'the order number, or the imported certificate’s reference' }),
    order_id: Nullable(Id('the order, for issued certificates')),
    imported_id: Nullable(Id('the imported certificate')),
    domain: Type.String(),
    valid_till: Timestamp('the last second the certificate is valid (UTC)'),
    days_left: Type.Integer(),
    renewal_planned_at: Nullable(Day()),
    contact: Type.String()
  },
  { title: 'ExpiringCertificate' }
)

export const InstallationResponse = ok({ installation: InstallationJson }, { title: 'InstallationResponse' })

export const ExpiringQuery = Query({
  days: Type.Integer({
    minimum: 0,
    maximum: MAX_REPORT_DAYS,
    examples: [30],
    description: `Certificates ending within this many days (0 to ${MAX_REPORT_DAYS}), today included.`
  })
})

export const ExpiringResponse = ok(
  { certificates: Type.Array(ExpiringJson) },
  { title: 'ExpiringCertificatesResponse' }
)
