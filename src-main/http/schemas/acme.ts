/** ACME subscriptions (reseller API v3.0, "ACME subscription details") and the renewal view. */
import { Type } from '@sinclair/typebox'
import { OrderRenewalView, PersistRecordView, UnattendedRenewalView } from '../../../src-shared/renewal-records'
import { Day, Nullable, ok, StringEnum, Timestamp } from './kit'
import { AcmeDomainJson } from './orders'

/** dns-persist-01 records and the renewal view are one contract with the desktop bridge. */
export const PersistRecordJson = Type.Object(PersistRecordView.properties, { title: 'DnsPersistRecord' })
export const RenewalJson = Type.Object(OrderRenewalView.properties, { title: 'OrderRenewal' })
export const RenewalResponse = ok({ renewal: RenewalJson }, { title: 'OrderRenewalResponse' })
export const UnattendedRenewalJson = Type.Object(UnattendedRenewalView.properties, { title: 'UnattendedRenewal' })
/** POST /orders/{id}/renewal: the method the order's renewals at the external ACME CA use. */
export const RenewalMethodBody = Type.Object(
  {
    dcv_method: StringEnum(
      ['dns', 'http'] as const,
      'dns: delegated DNS or dns-persist-01, which renew with nobody once set up; http: http-01'
    )
  },
  { additionalProperties: false, title: 'RenewalMethodChange' }
)

export const AcmeDetailsJson = Type.Object(
  {
    status: StringEnum(['active', 'cancelled', 'expired'] as const),
    category: StringEnum(['caas', 'ais'] as const, "caas: the customer's own ACME client; ais: an auto-install tool"),
    domains: Type.Array(AcmeDomainJson),
    subscription: Type.Object({
      begin: Day(),
      next_renewal: Day(),
      end: Nullable(Day('the end of the subscription; null for an open end'))
    }),
    account: Type.Object({
      eab_kid: Type.String({ description: 'the External Account Binding key id (RFC 8555 §7.3.4)' }),
      eab_hmac_key: Type.String({ description: 'secret: keep it like a password' }),
      server_url: Type.String({ description: 'the ACME directory' }),
      status: StringEnum(
        ['pending', 'valid'] as const,
        'pending until an ACME account is bound with these EAB credentials, then valid'
      ),
      accounts: Type.Array(
        Type.Object({
          url: Type.String(),
          status: StringEnum(['valid', 'deactivated', 'revoked'] as const, 'RFC 8555 §7.1.6'),
          created_at: Timestamp()
        })
      )
    }),
    allowed_identifiers: Type.Array(Type.String(), {
      description: 'names an ACME order of this subscription may carry'
    }),
    dns_persist: Type.Optional(Type.Array(PersistRecordJson)),
    root_ca_url: Type.String({ description: "the CertDesk root the directory's HTTPS certificate chains to" }),
    commands: Type.Object(
      {
        root_ca: Type.String(),
        certbot: Type.String(),
        acme_sh: Type.String(),
        lego: Type.String()
      },
      { description: 'ready-to-paste POSIX shell command lines; every value in them is shell-quoted' }
    ),
    autoinstall: Nullable(
      Type.Object({ login_url: Type.String({ description: 'the set-up page; the link is the secret' }) })
    )
  },
  { title: 'AcmeSubscription' }
)

export const AcmeDetailsResponse = ok({ acme: AcmeDetailsJson }, { title: 'AcmeSubscriptionResponse' })
