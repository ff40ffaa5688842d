/** RFC 8555 §6.7 errors, sent as RFC 7807 problem documents (`application/problem+json`). */
import { acmeErrorStatus, type AcmeError, type AcmeErrorType } from '../core/acme-server'

export type ProblemType = AcmeErrorType

export class AcmeProblem extends Error {
  readonly status: number
  constructor(
    readonly type: ProblemType,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    status?: number
  ) {
    super(detail)
    this.status = status ?? acmeErrorStatus(type)
  }

  /** The problem a refusal of the core is answered with. */
  static of(err: AcmeError): AcmeProblem {
    return new AcmeProblem(err.type, err.message, {}, err.status)
  }

  toJSON(): Record<string, unknown> {
    return { type: `urn:ietf:params:acme:error:${this.type}`, detail: this.detail, status: this.status, ...this.extra }
  }
}
