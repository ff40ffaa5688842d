/**
 * Refusals of the embedded ACME server's business operations, typed with the RFC 8555 §6.7
 * error names so the protocol layer (src-main/acme) can answer each with its problem document.
 * The core decides which refusal applies; the transport only presents it.
 */

export type AcmeErrorType =
  | 'accountDoesNotExist'
  | 'alreadyReplaced'
  | 'alreadyRevoked'
  | 'badCSR'
  | 'badNonce'
  | 'badPublicKey'
  | 'badRevocationReason'
  | 'badSignatureAlgorithm'
  | 'connection'
  | 'dns'
  | 'externalAccountRequired'
  | 'incorrectResponse'
  | 'malformed'
  | 'orderNotReady'
  | 'rateLimited'
  | 'rejectedIdentifier'
  | 'serverInternal'
  | 'unauthorized'
  | 'unsupportedIdentifier'

/** HTTP status of each type where it is not 400 (RFC 8555 §6.7 leaves the choice to the server). */
const STATUS: Partial<Record<AcmeErrorType, number>> = {
  unauthorized: 403,
  orderNotReady: 403,
  alreadyReplaced: 409,
  rateLimited: 429,
  serverInternal: 500
}

export const acmeErrorStatus = (type: AcmeErrorType): number => STATUS[type] ?? 400

export class AcmeError extends Error {
  readonly status: number
  constructor(
    readonly type: AcmeErrorType,
    message: string,
    status?: number
  ) {
    super(message)
    this.name = 'AcmeError'
    this.status = status ?? acmeErrorStatus(type)
  }
}

/** A resource this account cannot see: 404, worded as RFC 8555 §6.7 `malformed`. */
export const noSuch = (what: string): AcmeError => new AcmeError('malformed', `no such ${what} for this account`, 404)

/**
 * The RFC 7807 document an order or challenge keeps in its `error` field (RFC 8555 §7.1.3,
 * §7.1.4), the same shape the server answers a failed request with.
 */
export function acmeErrorDocument(
  type: AcmeErrorType,
  detail: string,
  status = acmeErrorStatus(type)
): Record<string, unknown> {
  return { type: `urn:ietf:params:acme:error:${type}`, detail, status }
}
