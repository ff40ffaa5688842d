/**
 * Renewal automation of one order, as GET /orders/{id}/renewal and the order page show it: the
 * renewal window and its source (RFC 9773 renewal information, or 14 days before the end), each
 * name's `_acme-challenge` CNAME into the zone delegated to CertDesk, and the dns-persist-01
 * records (draft-ietf-acme-dns-persist) with their read-only check.
 */
import { Type, type Static } from '@sinclair/typebox'

const Stamp = Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

/** dns-persist-01: the record to publish once, and whether it is in place. */
export const PersistRecordView = Type.Object({
  domain: Type.String(),
  record_name: Type.String({ description: '_validation-persist.<domain>' }),
  record_type: Type.Literal('TXT'),
  record_value: Type.String({ description: 'issuer domain name; accounturi=<account URL>[; policy=wildcard]' }),
  account_url: Type.String(),
  in_place: Type.Boolean({ description: 'looked up read-only through the configured resolver' }),
  detail: Type.String(),
  persist_until: Nullable(Stamp),
  warning: Nullable(Type.String({ description: 'set while persistUntil is within 30 days or past' }))
})

/**
 * Whether the order renews with nobody at the external ACME CA: the method its renewals prove
 * control with, and when that needs the customer each time (http-01, a dns-01 TXT record), the
 * methods that do not (delegated DNS, dns-persist-01) with their one-time records.
 */
export const UnattendedRenewalView = Type.Object({
  method: Type.Union([
    Type.Literal('http-01'),
    Type.Literal('dns-01'),
    Type.Literal('delegated-dns'),
    Type.Literal('dns-persist-01')
  ]),
  unattended: Type.Boolean({
    description: 'true: renewals need nothing from the customer once the record is in place'
  }),
  detail: Type.String(),
  alternatives: Type.Array(
    Type.Object({
      method: Type.Union([Type.Literal('delegated-dns'), Type.Literal('dns-persist-01')]),
      dcv_method: Type.Literal('dns'),
      records: Type.Array(
        Type.Object({
          name: Type.String(),
          type: Type.Union([Type.Literal('CNAME'), Type.Literal('TXT')]),
          value: Type.String()
        })
      )
    })
  ),
  switch_with: Nullable(Type.String({ description: 'the call that switches the order to dcv_method dns' }))
})

export const OrderRenewalView = Type.Object({
  window: Type.Union([
    Type.Object({
      source: Type.Union([Type.Literal('ari'), Type.Literal('default')]),
      source_detail: Type.String(),
      cert_id: Type.String({ description: 'RFC 9773 §4.1 CertID' }),
      window_start: Stamp,
      window_end: Stamp,
      renew_at: Stamp,
      explanation_url: Nullable(Type.String()),
      checked_at: Stamp,
      next_check_at: Nullable(Stamp),
      last_error: Nullable(Type.String())
    }),
    Type.Null()
  ]),
  delegation: Type.Union([
    Type.Object({
      zone: Type.String(),
      domains: Type.Array(
        Type.Object({
          domain: Type.String(),
          cname: Type.Object({ name: Type.String(), type: Type.Literal('CNAME'), value: Type.String() }),
          in_place: Type.Boolean(),
          detail: Type.String()
        })
      )
    }),
    Type.Null()
  ]),
  dns_persist: Type.Array(PersistRecordView),
  /** Null when no external ACME CA issues the order's certificates. */
  unattended: Type.Union([UnattendedRenewalView, Type.Null()])
})

export type OrderRenewalViewT = Static<typeof OrderRenewalView>
