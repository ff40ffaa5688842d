/**
 * The embedded ACME server's resources as RFC 8555 §7.1 objects: the core's records with their
 * URLs, RFC 3339 times and, where a check failed, the stored problem document.
 */
import type { AcmeAccount, AcmeAuthorization, AcmeChallenge, AcmeOrder } from '../core/acme-server'

/** RFC 3339 in UTC to the second, as §7.1 shows `expires`. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z')

/** Builds absolute URLs of the resources under the server's base (`https://localhost:PORT/acme`). */
export type UrlOf = (path: string) => string

export function presenters(url: UrlOf) {
  const challengeJson = (c: AcmeChallenge): Record<string, unknown> => ({
    type: c.type,
    url: url(`/chall/${c.publicId}`),
    // dns-persist-01 has no token; its row keeps the issuer domain name it offers.
    ...(c.type === 'dns-persist-01' ? { 'issuer-domain-names': [c.token] } : { token: c.token }),
    status: c.status,
    ...(c.validatedAt ? { validated: rfc3339(c.validatedAt) } : {}),
    ...(c.error ? { error: c.error } : {})
  })

  return {
    accountUrl: (a: Pick<AcmeAccount, 'id'>): string => url(`/acct/${a.id}`),
    orderUrl: (o: Pick<AcmeOrder, 'publicId'>): string => url(`/order/${o.publicId}`),
    authorizationUrl: (publicId: string): string => url(`/authz/${publicId}`),

    accountJson: (a: AcmeAccount): Record<string, unknown> => ({
      status: a.status,
      contact: a.contact,
      orders: url(`/acct/${a.id}/orders`),
      createdAt: rfc3339(a.createdAt)
    }),

    orderJson: (o: AcmeOrder): Record<string, unknown> => ({
      status: o.status,
      expires: rfc3339(o.expiresAt),
      identifiers: o.identifiers.map((value) => ({ type: 'dns', value })),
      authorizations: o.authorizationIds.map((id) => url(`/authz/${id}`)),
      finalize: url(`/order/${o.publicId}/finalize`),
      ...(o.replaces ? { replaces: o.replaces } : {}),
      ...(o.certificateId ? { certificate: url(`/cert/${o.certificateId}`) } : {}),
      ...(o.error ? { error: o.error } : {})
    }),

    authzJson: (a: AcmeAuthorization): Record<string, unknown> => ({
      identifier: { type: 'dns', value: a.identifier },
      status: a.status,
      expires: rfc3339(a.expiresAt),
      challenges: a.challenges.map(challengeJson),
      ...(a.wildcard ? { wildcard: true } : {})
    }),

    challengeJson
  }
}
