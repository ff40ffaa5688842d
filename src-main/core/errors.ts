/**
 * Errors the core raises for a caller to see. Each kind maps to one HTTP status in the
 * transport (src-main/http/errors.ts); the message is written for a person and never carries a
 * secret or a stack trace.
 */
export type ErrorKind =
  | 'invalid' // 400
  | 'unauthorized' // 401
  | 'payment_required' // 402
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'rate_limited' // 429
  | 'not_implemented' // 501
  | 'unavailable' // 503

export class ServiceError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string
  ) {
    super(message)
    this.name = 'ServiceError'
  }
}

/** A request refused for now; the caller may try again after `retryAfterSeconds` (RFC 9110 §10.2.3). */
export class RateLimitedError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number
  ) {
    super('rate_limited', message)
  }
}

export const invalid = (message: string): ServiceError => new ServiceError('invalid', message)
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message)
export const conflict = (message: string): ServiceError => new ServiceError('conflict', message)
export const forbidden = (message: string): ServiceError => new ServiceError('forbidden', message)
export const unauthorized = (message: string): ServiceError => new ServiceError('unauthorized', message)
export const paymentRequired = (message: string): ServiceError => new ServiceError('payment_required', message)
export const notImplemented = (message: string): ServiceError => new ServiceError('not_implemented', message)
