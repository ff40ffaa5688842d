/** RFC 8555 §6.7 errors, sent as RFC 7807 problem documents (`application/problem+json`). */

export type ProblemType =
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
  | 'rejectedIdentifier'
  | 'serverInternal'
  | 'unauthorized'
  | 'unsupportedIdentifier'

const STATUS: Partial<Record<ProblemType, number>> = {
  unauthorized: 403,
  orderNotReady: 403,
  alreadyReplaced: 409,
  serverInternal: 500
}

export class AcmeProblem extends Error {
  readonly status: number
  constructor(
    readonly type: ProblemType,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    status?: number
  ) {
    super(detail)
    this.status = status ?? STATUS[type] ?? 400
  }

  toJSON(): Record<string, unknown> {
    return { type: `urn:ietf:params:acme:error:${this.type}`, detail: this.detail, status: this.status, ...this.extra }
  }
}
