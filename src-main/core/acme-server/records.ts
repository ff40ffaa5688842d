/**
 * The embedded ACME server's resources (RFC 8555 §7.1) as the core hands them out, and the
 * SQLite rows they are read from (migration 0006-acme-subscriptions-and-server.sql). Public ids are random so that one
 * account cannot guess another's URLs.
 */
import { randomBytes, type JsonWebKey } from 'node:crypto'
import { parseDate } from '../time'

export type AcmeAccountStatus = 'valid' | 'deactivated' | 'revoked'
export type AcmeOrderStatus = 'pending' | 'ready' | 'processing' | 'valid' | 'invalid'
export type AcmeChallengeType = 'http-01' | 'dns-01' | 'dns-persist-01'

export interface AcmeAccount {
  id: number
  subscriptionId: number
  /** RFC 7638 thumbprint of the account key, what key authorizations end with (§8.1). */
  thumbprint: string
  /** The public account key. */
  jwk: JsonWebKey
  contact: string[]
  status: AcmeAccountStatus
  createdAt: Date
}

export interface AcmeOrder {
  id: number
  publicId: string
  accountId: number
  status: AcmeOrderStatus
  identifiers: string[]
  /** RFC 9773 §5: the CertID of the certificate this order replaces. */
  replaces: string | null
  /** RFC 8555 §7.1.3: why the order became invalid, as a problem document. */
  error: Record<string, unknown> | null
  expiresAt: Date
  /** Public ids of its authorizations, in the order of the identifiers. */
  authorizationIds: string[]
  /** Public id of the issued certificate, once there is one. */
  certificateId: string | null
}

export interface AcmeChallenge {
  id: number
  publicId: string
  type: AcmeChallengeType
  token: string
  status: 'pending' | 'processing' | 'valid' | 'invalid'
  validatedAt: Date | null
  error: Record<string, unknown> | null
}

export interface AcmeAuthorization {
  id: number
  publicId: string
  orderId: number
  /** The name without its `*.` label; `wildcard` says whether it had one (§7.1.4). */
  identifier: string
  wildcard: boolean
  status: string
  expiresAt: Date
  challenges: AcmeChallenge[]
}

export interface AccountRow {
  id: number
  subscription_id: number
  thumbprint: string
  jwk: string
  contact: string
  status: AcmeAccountStatus
  created_at: string
}

export interface OrderRow {
  id: number
  public_id: string
  account_id: number
  status: AcmeOrderStatus
  identifiers: string
  replaces: string | null
  error: string | null
  expires_at: string
}

export interface AuthzRow {
  id: number
  public_id: string
  order_id: number
  identifier: string
  wildcard: number
  status: string
  expires_at: string
}

export interface ChallengeRow {
  id: number
  public_id: string
  authz_id: number
  type: AcmeChallengeType
  token: string
  status: AcmeChallenge['status']
  validated_at: string | null
  error: string | null
}

export interface CertRow {
  id: number
  public_id: string
  order_id: number
  account_id: number
  serial_hex: string
  ari_id: string
  spki_sha256: string
  chain_pem: string
  not_before: string
  not_after: string
  replaced_by: number | null
  revoked_at: string | null
  /** A renewal window an admin set (RFC 9773 §4.2: the CA may move it, e.g. before a mass revocation). */
  renewal_start?: string | null
  renewal_end?: string | null
}

/** 96 random bits, base64url: the id in a resource URL. */
export const publicId = (): string => randomBytes(12).toString('base64url')

/** A stored `YYYY-MM-DD HH:MM:SS` (UTC) timestamp as a Date. */
export const storedTime = (ts: string): Date => parseDate(ts)

export const accountOf = (r: AccountRow): AcmeAccount => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  thumbprint: r.thumbprint,
  jwk: JSON.parse(r.jwk) as JsonWebKey,
  contact: JSON.parse(r.contact) as string[],
  status: r.status,
  createdAt: storedTime(r.created_at)
})

export const challengeOf = (r: ChallengeRow): AcmeChallenge => ({
  id: r.id,
  publicId: r.public_id,
  type: r.type,
  token: r.token,
  status: r.status,
  validatedAt: r.validated_at ? storedTime(r.validated_at) : null,
  error: r.error ? (JSON.parse(r.error) as Record<string, unknown>) : null
})
